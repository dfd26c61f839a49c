#include "divergences.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <set>
#include <sstream>

#include "container_options.hpp"
#include "documents.hpp"
#include "ggufcheck/document.hpp"

namespace ggufcheck::testing {

namespace {

constexpr std::uint64_t kPow63 = 1ULL << 63;

// The element count of a tensor as ggml computes it: int64 products that wrap modulo 2^64.
std::uint64_t wrapped_elements(const Tensor& t) {
  std::uint64_t product = 1;
  for (std::uint64_t d : t.dims) product *= d;
  return product;
}

// Computed exactly: a zero dim makes the count 0 whatever the other dims are.
bool element_count_overflows(const Tensor& t) {
  if (t.dims.size() > kMaxDims) return false;
  if (std::find(t.dims.begin(), t.dims.end(), 0) != t.dims.end()) return false;
  std::uint64_t product = 1;
  for (std::uint64_t d : t.dims) {
    if (d >= kPow63) return false;  // a negative dim, rejected by both
    if (d != 0 && product > (kPow63 - 1) / d) return true;
    product *= d;
  }
  return false;
}

bool only_errors(const Report& report, std::initializer_list<Code> allowed) {
  const std::vector<Code> errors = error_codes(report);
  return !errors.empty() && std::all_of(errors.begin(), errors.end(), [&](Code c) {
    return std::find(allowed.begin(), allowed.end(), c) != allowed.end();
  });
}

// D1: ggml skips its element-count guard when the int64 product of the dims is 0, which it
// also is when the product wraps to 0 modulo 2^64; ggml_nbytes then wraps to 0 as well and the
// tensor loads as an empty one. ggufcheck computes the product without wrap-around and rejects.
bool is_element_count_wrap(const ByteVector& bytes, const Report& report) {
  if (!only_errors(report, {Code::ElementCountOverflow})) return false;
  const auto doc = read_document(Bytes(bytes.data(), bytes.size()));
  if (!doc) return false;
  bool any = false;
  for (const Tensor& t : doc->tensors) {
    if (!element_count_overflows(t)) continue;
    if (wrapped_elements(t) != 0) return false;
    any = true;
  }
  return any;
}

ByteVector element_count_wrap_witness() {
  Document doc = minimal_document();
  doc.tensors.push_back({"wraps", {1ULL << 32, 1ULL << 32}, 0, {}, {}});  // F32, 2^64 elements
  return write_bytes(doc);
}

// The index in a finding's path "tensor[7] ...", or -1.
long tensor_index(const Finding& f) {
  if (f.path.rfind("tensor[", 0) != 0) return -1;
  return std::strtol(f.path.c_str() + 7, nullptr, 10);
}

// D2: for block types ggml_nbytes multiplies ne[0] by the block's byte size before dividing by
// the block size; when ne[0] * type_size passes 2^64 the product wraps and ggml takes the
// tensor for a small one (ne[0] = 2^62 + 256 of Q5_1: 192 bytes instead of 3 * 2^60 + 192).
// The reference then checks the layout and the bounds with the wrapped size; ggufcheck uses
// the real one and finds the data missing.
bool is_quantized_nbytes_wrap(const ByteVector& bytes, const Report& report) {
  if (!only_errors(report, {Code::TensorOutOfBounds, Code::NonContiguousLayout})) return false;
  const auto doc = read_document(Bytes(bytes.data(), bytes.size()));
  if (!doc) return false;
  std::set<long> wrapped;
  for (std::size_t i = 0; i < doc->tensors.size(); ++i) {
    const Tensor& t = doc->tensors[i];
    const TensorTypeInfo* type = tensor_type(t.type);
    if (type == nullptr || type->removed() || type->block_size == 1 || t.dims.empty()) continue;
    const auto real = tensor_nbytes(t.type, t.dims);
    if (real && t.dims[0] > UINT64_MAX / type->type_size && ggml_nbytes(t) != *real) {
      wrapped.insert(static_cast<long>(i));
    }
  }
  if (wrapped.empty()) return false;
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::Error) continue;
    const long index = tensor_index(f);
    if (f.code == Code::TensorOutOfBounds && wrapped.count(index) == 0) return false;
    if (f.code == Code::NonContiguousLayout && index <= *wrapped.begin()) return false;
  }
  return true;
}

ByteVector quantized_nbytes_wrap_witness() {
  Document doc = minimal_document();
  Tensor t{"wraps", {(1ULL << 62) + 256}, 7, {}, {}};  // Q5_1: 32 elements in 24 bytes
  t.data = ByteVector(192, 0);                         // the 192 bytes ggml computes
  doc.tensors.push_back(t);
  return write_bytes(doc);
}

}  // namespace

// --- one comparison ---------------------------------------------------------------------------

Options llama_cpp_options() {
  Options options = container_options();
  options.profile = Profile::LlamaCpp;
  // The reference is ggml's reader (gguf_init_from_file), which reads a chat template as a
  // string: what llama-server's Jinja engine makes of it is the template checks' own
  // differential (test_jinja.cpp), not this one's.
  options.template_checks = false;
  return options;
}

Comparison compare(GgmlReference& reference, const ByteVector& bytes) {
  Comparison c;
  c.report = validate(Bytes(bytes.data(), bytes.size()), llama_cpp_options());
  c.reference = reference.load(bytes);
  return c;
}

std::vector<Code> error_codes(const Report& report) {
  std::vector<Code> out;
  for (const Finding& f : report.findings) {
    if (f.severity == Severity::Error) out.push_back(f.code);
  }
  return out;
}

std::string describe(const Comparison& c) {
  std::ostringstream out;
  out << "ggufcheck --profile llama.cpp " << (c.ours() ? "passes" : "fails") << ", llama.cpp "
      << to_string(c.reference.outcome);
  if (c.reference.signal != 0) out << " (signal " << c.reference.signal << ")";
  for (const Finding& f : c.report.findings) {
    if (f.severity != Severity::Error) continue;
    out << "\n  ggufcheck: " << code_string(f.code) << " at 0x" << std::hex << f.offset << std::dec
        << " " << f.path << ": " << f.message;
  }
  std::string log = c.reference.log;
  while (!log.empty() && log.back() == '\n') log.pop_back();
  if (!log.empty()) out << "\n  llama.cpp: " << log;
  return out.str();
}

std::uint64_t ggml_nbytes(const Tensor& t) {
  const TensorTypeInfo* type = tensor_type(t.type);
  std::array<std::uint64_t, kMaxDims> ne{1, 1, 1, 1};
  for (std::size_t d = 0; d < t.dims.size() && d < kMaxDims; ++d) ne[d] = t.dims[d];
  for (std::uint64_t n : ne) {
    if (n == 0 || n >= kPow63) return 0;
  }
  std::array<std::uint64_t, kMaxDims> nb{};
  nb[0] = type->type_size;
  nb[1] = nb[0] * (ne[0] / type->block_size);
  for (std::size_t d = 2; d < kMaxDims; ++d) nb[d] = nb[d - 1] * ne[d - 1];
  std::uint64_t nbytes = 0;
  if (type->block_size == 1) {
    nbytes = type->type_size;
    for (std::size_t d = 0; d < kMaxDims; ++d) nbytes += (ne[d] - 1) * nb[d];
  } else {
    nbytes = ne[0] * nb[0] / type->block_size;
    for (std::size_t d = 1; d < kMaxDims; ++d) nbytes += (ne[d] - 1) * nb[d];
  }
  return nbytes;
}

// --- the documented divergences ---------------------------------------------------------------

const std::array<Divergence, 2> kDivergences = {{
    {"element-count-wraps-to-zero", true, is_element_count_wrap, element_count_wrap_witness},
    {"quantized-nbytes-wraps", true, is_quantized_nbytes_wrap, quantized_nbytes_wrap_witness},
}};

const Divergence* explain(const ByteVector& bytes, const Comparison& c) {
  if (c.agree() || c.reference.crashed()) return nullptr;
  for (const Divergence& d : kDivergences) {
    if (d.reference_loads == c.theirs() && d.explains(bytes, c.report)) return &d;
  }
  return nullptr;
}

const std::array<ReferenceCrash, 0> kReferenceCrashes = {};

const ReferenceCrash* known_crash(const ByteVector& bytes, const Comparison& c) {
  for (const ReferenceCrash& crash : kReferenceCrashes) {
    if (crash.matches(bytes, c)) return &crash;
  }
  return nullptr;
}

// --- the verdict ------------------------------------------------------------------------------

Verdict judge(const ByteVector& bytes, const Comparison& c) {
  Verdict v;
  if (c.reference.outcome == ReferenceOutcome::HarnessFailure) {
    v.ok = false;
    v.problem = "the harness could not run the reference: " + c.reference.log;
    return v;
  }
  if (c.reference.crashed()) {
    v.crash = known_crash(bytes, c);
    if (v.crash == nullptr) {
      v.ok = false;
      v.problem = "llama.cpp's reader crashed (an undocumented finding about the reference)";
    }
    return v;  // a crash is a failure to load: documented ones may disagree with ggufcheck
  }
  if (c.agree()) return v;
  v.divergence = explain(bytes, c);
  if (v.divergence == nullptr) {
    v.ok = false;
    v.problem = "undocumented disagreement";
  }
  return v;
}

}  // namespace ggufcheck::testing

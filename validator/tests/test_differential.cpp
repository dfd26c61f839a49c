// The llama.cpp profile against llama.cpp's own reader. The verdict of `--profile llama.cpp`
// (passes = no error) must equal whether llama.cpp loads the file as a container: ggml's
// gguf_init_from_file with no_alloc and a ggml context, then the model loader's per-tensor check
// data_offset + offset + nbytes <= file size (support/ggml_reference.hpp). Over generated
// files, the samples, the real files and seeded mutants of valid files, every disagreement must
// be one of the divergences documented in docs/llama-cpp-divergences.md, and that list is
// asserted exactly: an undocumented disagreement fails, and so does a documented one that no
// longer happens.
//
// Environment (scripts/differential.sh runs long campaigns):
//   GGUFCHECK_DIFF_MUTANTS  number of mutants (default kDefaultMutants)
//   GGUFCHECK_DIFF_SEED     seed of the campaign (default kDefaultSeed)
//   GGUFCHECK_DIFF_FIRST    index of the first mutant (default 0); mutant i depends only on the
//                           seed and i, so FIRST=i MUTANTS=1 reproduces one
//   GGUFCHECK_DIFF_OUT      where offending files are saved (default a temp directory)
//   GGUFCHECK_DIFF_VERBOSE  1: print every mutant's mutations and verdicts
//   GGUFCHECK_REFERENCE_GGML_LIB  the libggml-base.so to test against
//   GGUFCHECK_REFERENCE_ISOLATED  1: every reference load in a fresh process (slower)
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "divergences.hpp"
#include "ggml_reference.hpp"
#include "ggufcheck/document.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kDefaultSeed = 20260901;
constexpr std::uint64_t kDefaultMutants = 5000;
constexpr std::uint64_t kPow63 = 1ULL << 63;

// --- environment ------------------------------------------------------------------------------

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

fs::path output_dir() {
  static const fs::path dir = [] {
    const char* from_environment = std::getenv("GGUFCHECK_DIFF_OUT");
    if (from_environment != nullptr && *from_environment != '\0') return fs::path(from_environment);
    return fs::temp_directory_path() / ("ggufcheck-differential-" + std::to_string(::getpid()));
  }();
  return dir;
}

std::unique_ptr<GgmlReference>& reference_instance() {
  static std::unique_ptr<GgmlReference> instance;
  return instance;
}

// Constructed once; a missing library fails every test that needs it, with the reason.
GgmlReference& reference() {
  std::unique_ptr<GgmlReference>& instance = reference_instance();
  if (!instance) {
    instance = std::make_unique<GgmlReference>(reference_library_path(), output_dir() / "scratch");
    instance->set_isolated(env_number("GGUFCHECK_REFERENCE_ISOLATED", 0) != 0);
  }
  return *instance;
}

// Stops the reference (its server and its scratch file), then removes the output directory
// unless a test saved a file there.
class RemoveEmptyOutput : public ::testing::Environment {
 public:
  void TearDown() override {
    reference_instance().reset();
    std::error_code ignored;
    fs::remove(output_dir() / "scratch", ignored);  // only when empty
    fs::remove(output_dir(), ignored);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveEmptyOutput =
    ::testing::AddGlobalTestEnvironment(new RemoveEmptyOutput);

fs::path save(const std::string& name, const ByteVector& bytes) {
  fs::create_directories(output_dir());
  const fs::path file = output_dir() / name;
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return file;
}

// --- one comparison (the rest of the machinery is in support/divergences.hpp) ----------------

Comparison compare(const ByteVector& bytes) {
  return ggufcheck::testing::compare(reference(), bytes);
}

// --- generated files --------------------------------------------------------------------------

struct Case {
  std::string name;
  ByteVector bytes;
};

Document with_tensors(std::vector<Tensor> tensors) {
  Document doc = minimal_document();
  doc.tensors = std::move(tensors);
  return doc;
}

Document with_key(std::string key, Value value) {
  Document doc = model_document();
  doc.metadata.push_back({std::move(key), std::move(value), {}});
  return doc;
}

// The shapes gguf-format.md section 6 lists, each at and around its boundary.
std::vector<Case> generated_cases() {
  std::vector<Case> cases;
  const auto add = [&](std::string name, const Document& doc, const WriteOptions& options = {}) {
    cases.push_back({std::move(name), write_bytes(doc, options)});
  };
  const auto add_bytes = [&](std::string name, ByteVector bytes) {
    cases.push_back({std::move(name), std::move(bytes)});
  };

  // Header and versions.
  add("empty-document", Document{});
  add("minimal", minimal_document());
  add("model", model_document());
  for (std::uint32_t version : {0U, 1U, 2U, 4U, 0x00030000U, 0x03000000U, 0xFFFFFFFFU}) {
    WriteOptions o;
    o.version_field = version;
    add("model-version-field-" + std::to_string(version), model_document(), o);
  }
  {
    Document doc = model_document();
    doc.version = 1;
    add("model-v1", doc);
    doc.version = 2;
    add("model-v2", doc);
    doc.version = 3;
    doc.endian = Endian::Big;
    add("model-big-endian", doc);
  }
  for (std::uint64_t count : {1ULL, 100ULL, 1ULL << 40, (1ULL << 63) - 1, 1ULL << 63}) {
    WriteOptions o;
    o.tensor_count = count;
    add("tensor-count-" + std::to_string(count), model_document(), o);
    WriteOptions k;
    k.kv_count = count;
    add("kv-count-" + std::to_string(count), model_document(), k);
  }
  {
    const ByteVector model = write_bytes(model_document());
    for (std::size_t n : {0UL, 3UL, 4UL, 7UL, 8UL, 23UL, 24UL, 25UL}) {
      add_bytes("truncated-" + std::to_string(n), prefix(model, n));
    }
    ByteVector magic = model;
    magic[3] = 'G';
    add_bytes("bad-magic", magic);
  }

  // Keys.
  add("empty-key", with_key("", Value::u32(1)));
  add("duplicate-key", with_key("general.name", Value::string("again")));
  add("key-with-nul", with_key(std::string("general.name\0x", 14), Value::string("x")));
  add("key-control-byte", with_key("general.\x01name", Value::u8(1)));
  add("key-non-ascii", with_key("general.n\xc3\xa4me", Value::u8(1)));
  add("key-leading-nul", with_key(std::string("\0abc", 4), Value::u8(1)));
  add("key-70000-bytes", with_key(std::string(70000, 'k'), Value::u8(1)));
  add("key-unconventional", with_key("General-Name", Value::u8(1)));
  {
    Document doc = model_document();
    doc.metadata.push_back({std::string("dup\0a", 5), Value::u8(1), {}});
    doc.metadata.push_back({std::string("dup\0b", 5), Value::u8(2), {}});
    add("keys-equal-up-to-nul", doc);
    Document doc2 = model_document();
    doc2.metadata.push_back({"dup", Value::u8(1), {}});
    doc2.metadata.push_back({std::string("dup\0b", 5), Value::u8(2), {}});
    add("key-equal-to-another-up-to-nul", doc2);
  }

  // Values.
  {
    Document doc = minimal_document();
    const std::vector<std::pair<ValueType, Value>> scalars = {
        {ValueType::Uint8, Value::u8(200)},      {ValueType::Int8, Value::i8(-3)},
        {ValueType::Uint16, Value::u16(60000)},  {ValueType::Int16, Value::i16(-3)},
        {ValueType::Uint32, Value::u32(7)},      {ValueType::Int32, Value::i32(-7)},
        {ValueType::Float32, Value::f32(1.5F)},  {ValueType::Bool, Value::boolean(true)},
        {ValueType::String, Value::string("s")}, {ValueType::Uint64, Value::u64(1ULL << 40)},
        {ValueType::Int64, Value::i64(-1)},      {ValueType::Float64, Value::f64(2.5)},
    };
    int i = 0;
    for (const auto& [type, value] : scalars) {
      doc.metadata.push_back({"test.scalar_" + std::to_string(i), value, {}});
      doc.metadata.push_back(
          {"test.array_" + std::to_string(i), Value::array(type, {value, value}), {}});
      doc.metadata.push_back({"test.empty_" + std::to_string(i), Value::array(type, {}), {}});
      ++i;
    }
    doc.metadata.push_back({"test.empty_string", Value::string(""), {}});
    doc.metadata.push_back({"test.nul_string", Value::string(std::string("a\0b", 3)), {}});
    doc.metadata.push_back({"test.bad_utf8", Value::string("\xff\xfe"), {}});
    add("every-value-type", doc);
    Document v2 = doc;
    v2.version = 2;
    add("every-value-type-v2", v2);
  }
  add("bool-byte-2", with_key("test.flag", Value::bool_byte(2)));
  add("bool-byte-ff", with_key("test.flag", Value::bool_byte(0xFF)));
  add("bool-array-byte-7",
      with_key("test.flags", Value::array(ValueType::Bool, {Value::bool_byte(7)})));
  add("nested-array",
      with_key("test.nested",
               Value::array(ValueType::Array, {Value::array(ValueType::Uint8, {Value::u8(1)})})));
  add("nested-empty-array", with_key("test.nested", Value::array(ValueType::Array, {})));
  for (std::uint32_t raw : {13U, 0xFFFFFFFFU, 9U}) {
    Document doc = model_document();
    doc.metadata.push_back({"test.raw", Value::u8(1), raw});
    add("value-type-" + std::to_string(raw), doc);
  }
  {
    Document doc = model_document();
    doc.metadata.push_back({"test.u64_in_v2", Value::u64(1), {}});
    doc.version = 2;
    add("u64-in-v2", doc);
  }

  // Alignment.
  for (std::uint32_t a : {0U, 1U, 2U, 3U, 4U, 8U, 16U, 24U, 48U, 64U, 4096U, 65536U, 1U << 31}) {
    // Large alignments without tensors: the writer would pad the data section to them.
    Document doc = a <= 4096 ? model_document() : minimal_document();
    doc.metadata.push_back({"general.alignment", Value::u32(a), {}});
    add("alignment-" + std::to_string(a), doc);
  }
  for (std::uint32_t a : {0U, 3U, 48U}) {
    Document doc = minimal_document();
    doc.metadata.push_back({"general.alignment", Value::u32(a), {}});
    add("alignment-" + std::to_string(a) + "-no-tensors", doc);
  }
  for (const Value& v : {Value::u64(32), Value::i32(32), Value::u16(32), Value::string("32"),
                         Value::array(ValueType::Uint32, {Value::u32(32)})}) {
    Document doc = model_document();
    doc.metadata.push_back({"general.alignment", v, {}});
    add("alignment-type-" + std::string(to_string(v.type)), doc);
  }
  {
    // ggml looks keys up as C strings: this key sets the alignment there.
    Document doc = model_document();
    doc.metadata.push_back({std::string("general.alignment\0x", 19), Value::u32(64), {}});
    WriteOptions o64;
    o64.alignment = 64;
    add("alignment-c-string-key-laid-out-64", doc, o64);
    add("alignment-c-string-key-laid-out-32", doc);
    Document bad = model_document();
    bad.metadata.push_back({std::string("general.alignment\0x", 19), Value::u64(64), {}});
    add("alignment-c-string-key-wrong-type", bad);
    Document two = model_document();
    two.metadata.push_back({std::string("general.alignment\0a", 19), Value::u32(64), {}});
    two.metadata.push_back({std::string("general.alignment\0b", 19), Value::u32(8), {}});
    add("alignment-two-c-string-keys-laid-out-64", two, o64);
  }

  // Tensor names.
  add("tensor-empty-name", with_tensors({tensor("", {8}, 0)}));
  add("tensor-two-empty-names", with_tensors({tensor("", {8}, 0), tensor("", {8}, 0)}));
  add("tensor-name-63", with_tensors({tensor(std::string(63, 'n'), {8}, 0)}));
  add("tensor-name-64", with_tensors({tensor(std::string(64, 'n'), {8}, 0)}));
  add("tensor-names-equal-up-to-nul", with_tensors({tensor(std::string("a\0b", 3), {8}, 0),
                                                    tensor(std::string("a\0c", 3), {8}, 0)}));
  add("tensor-name-with-nul", with_tensors({tensor(std::string("a\0b", 3), {8}, 0)}));
  add("tensor-name-control", with_tensors({tensor("a\x01", {8}, 0)}));
  add("tensor-name-bad-utf8", with_tensors({tensor("a\xff", {8}, 0)}));
  add("tensor-duplicate-names", with_tensors({tensor("t", {8}, 0), tensor("t", {8}, 0)}));

  // Shapes.
  add("tensor-scalar", with_tensors({tensor("s", {}, 0)}));
  add("tensor-5-dims", with_tensors({tensor("t", {1, 1, 1, 1, 1}, 0)}));
  for (std::size_t d = 0; d < 4; ++d) {
    std::vector<std::uint64_t> dims = {32, 2, 2, 2};
    dims[d] = 0;
    add("tensor-zero-dim-" + std::to_string(d), with_tensors({tensor("z", dims, 0)}));
    add("tensor-zero-dim-q4_0-" + std::to_string(d),
        with_tensors({tensor("z", dims, 2), tensor("after", {32}, 0)}));
  }
  const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> shapes = {
      {"2^32x2^32", {1ULL << 32, 1ULL << 32}},
      {"2^62x4", {1ULL << 62, 4}},
      {"2^62x2", {1ULL << 62, 2}},
      {"2^63-1", {(1ULL << 63) - 1}},
      {"2^63-1x1", {(1ULL << 63) - 1, 1}},
      {"2^63", {1ULL << 63}},
      {"2^64-1", {~0ULL}},
      {"int64max-factors", {49ULL * 73 * 127, 337ULL * 92737 * 649657}},
      {"2^31x2^31x2^2", {1ULL << 31, 1ULL << 31, 4}},
      {"2^16x2^16x2^16x2^16", {1ULL << 16, 1ULL << 16, 1ULL << 16, 1ULL << 16}},
      {"2^60x2^4", {1ULL << 60, 1ULL << 4}},
      {"3x2^62", {3, 1ULL << 62}},
      {"2^32+1x2^32-1", {(1ULL << 32) + 1, (1ULL << 32) - 1}},
  };
  // Empty tensors whose other dims overflow any partial product: 0 elements, 0 bytes.
  const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> empty_shapes = {
      {"2^40x2^40x0", {1ULL << 40, 1ULL << 40, 0}},
      {"0x2^62x2^62", {0, 1ULL << 62, 1ULL << 62}},
      {"2^62+2^32x0", {(1ULL << 62) + (1ULL << 32), 0}},
      {"2^63-1x0", {kPow63 - 1, 0}},
      {"2^62x4x0x2^62", {1ULL << 62, 4, 0, 1ULL << 62}},
      {"2^63x0", {kPow63, 0}},
  };
  for (const auto& [label, dims] : empty_shapes) {
    for (std::uint32_t type : {0U, 1U, 2U, 7U, 24U, 27U}) {
      add("empty-shape-" + label + "-type-" + std::to_string(type),
          with_tensors({tensor("empty", dims, type), tensor("after", {32}, 0)}));
    }
  }
  for (const auto& [label, dims] : shapes) {
    for (std::uint32_t type : {0U, 1U, 2U, 24U, 12U}) {
      add("shape-" + label + "-type-" + std::to_string(type),
          with_tensors({tensor("big", dims, type)}));
    }
  }

  // Block types whose ne[0] * type_size passes 2^64 (D2), at the boundary, with the data ggml
  // computes when that is small.
  for (std::uint32_t type : {2U, 7U, 8U, 12U, 15U, 19U, 23U, 34U, 39U, 40U, 41U, 42U}) {
    const TensorTypeInfo* info = tensor_type(type);
    const std::uint64_t last = UINT64_MAX / info->type_size / info->block_size * info->block_size;
    const std::uint64_t block = info->block_size;
    const std::array<std::uint64_t, 4> rows = {last, last + block, (1ULL << 62) + 8 * block,
                                               (1ULL << 61) + block};
    for (std::uint64_t ne0 : rows) {
      for (const std::vector<std::uint64_t>& dims :
           {std::vector<std::uint64_t>{ne0}, std::vector<std::uint64_t>{ne0, 3}}) {
        Tensor t = tensor("q", dims, type);
        const std::uint64_t claimed = ggml_nbytes(t);
        Tensor after = tensor("after", {32}, 0);
        if (claimed <= 4096) {
          t.data = ByteVector(claimed, 0);
          after.offset = (claimed + 31) / 32 * 32;  // where ggml expects the next tensor
        }
        add("row-bytes-wrap-type-" + std::to_string(type) + "-ne0-" + std::to_string(ne0) + "-" +
                std::to_string(dims.size()) + "d",
            with_tensors({t, after}));
      }
    }
  }

  // Types.
  for (std::uint32_t type = 0; type < 46; ++type) {
    add("type-" + std::to_string(type), with_tensors({tensor("t", {256, 2}, type)}));
  }
  add("type-q4_0-row-33", with_tensors({tensor("t", {33}, 2)}));
  add("type-2^31", with_tensors({tensor("t", {32}, 1U << 31)}));

  // WrittenLayout.
  {
    Document doc = with_tensors({tensor("a", {8}, 0), tensor("b", {8}, 0), tensor("c", {8}, 0)});
    add("layout-contiguous", doc);
    Document gap = doc;
    gap.tensors[1].offset = 64;
    gap.tensors[2].offset = 96;
    add("layout-gap", gap);
    Document swapped = doc;
    swapped.tensors[0].offset = 32;
    swapped.tensors[1].offset = 0;
    add("layout-reordered", swapped);
    Document misaligned = doc;
    misaligned.tensors[1].offset = 33;
    add("layout-misaligned", misaligned);
    Document overlap = doc;
    overlap.tensors[1].offset = 0;
    add("layout-overlap", overlap);
    WriteOptions no_final;
    no_final.pad_after_last_tensor = false;
    add("layout-no-final-padding", doc, no_final);
    WriteOptions trailing;
    trailing.trailing = ByteVector(100, 0xAB);
    add("layout-trailing-bytes", doc, trailing);
    WriteOptions junk_padding;
    junk_padding.padding_byte = 0xCD;
    add("layout-nonzero-padding", doc, junk_padding);
    const Written w = write(doc);
    // c's data is at 64..72 of the data section, padded to 96.
    for (std::uint64_t cut : {0ULL, 1ULL, 2ULL, 3ULL, 4ULL, 65ULL, 71ULL, 72ULL, 73ULL, 95ULL}) {
      add_bytes("layout-cut-at-data-" + std::to_string(cut),
                prefix(w.bytes, w.layout.data_start + cut));
    }
    add_bytes("layout-cut-at-infos-end", prefix(w.bytes, w.layout.infos_end));
    add_bytes("layout-cut-before-data", prefix(w.bytes, w.layout.data_start - 1));
    Document empty_last = with_tensors({tensor("a", {8}, 0), tensor("z", {0}, 0)});
    const Written e = write(empty_last);
    add_bytes("layout-empty-tensor-at-end-of-file", prefix(e.bytes, e.layout.data_start + 32));
    add_bytes("layout-empty-tensor-past-end-of-file", prefix(e.bytes, e.layout.data_start + 8));
    const Written only_empty = write(with_tensors({tensor("z", {0}, 0)}));
    add_bytes("layout-only-empty-tensor-file-ends-at-data", only_empty.bytes);
    add_bytes("layout-only-empty-tensor-file-ends-before-data",
              prefix(only_empty.bytes, only_empty.layout.data_start - 1));
    WriteOptions pad;
    pad.pad_when_no_tensors = true;
    add("no-tensors-padded", minimal_document(), pad);
    WriteOptions junk;
    junk.trailing = ByteVector(7, 0xEE);
    add("no-tensors-trailing", minimal_document(), junk);
  }
  return cases;
}

// --- seeds and mutations ----------------------------------------------------------------------

// A field of a seed file: where a boundary value is most likely to matter.
struct Spot {
  std::uint64_t offset = 0;
  std::uint32_t width = 0;
  std::string what;
};

struct Seed {
  std::string name;
  ByteVector bytes;
  std::vector<Spot> spots;
  std::uint64_t metadata_end = 0;  // end of the tensor infos: the bytes a reader interprets
  std::uint64_t data_start = 0;
  std::uint32_t weight = 1;
};

std::vector<Spot> spots_of(const Document& doc, const WrittenLayout& layout) {
  std::vector<Spot> spots = {
      {4, 4, "header.version"}, {8, 8, "header.tensor_count"}, {16, 8, "header.kv_count"}};
  for (std::size_t i = 0; i < layout.pairs.size(); ++i) {
    const WrittenPair& p = layout.pairs[i];
    const Value& v = doc.metadata[i].value;
    const std::string kv = "kv[" + std::to_string(i) + "]";
    spots.push_back({p.key_offset, 8, kv + " key length"});
    spots.push_back({p.type_offset, 4, kv + " type"});
    if (v.type == ValueType::String) {
      spots.push_back({p.value_offset, 8, kv + " string length"});
    } else if (v.type == ValueType::Array) {
      spots.push_back({p.value_offset, 4, kv + " element type"});
      spots.push_back({p.value_offset + 4, 8, kv + " count"});
      if (v.element_type == ValueType::String && !v.items.empty()) {
        spots.push_back({p.value_offset + 12, 8, kv + "[0] length"});
      }
    } else {
      spots.push_back({p.value_offset, scalar_size(v.type), kv + " value"});
    }
  }
  for (std::size_t i = 0; i < layout.tensors.size(); ++i) {
    const WrittenTensor& t = layout.tensors[i];
    const std::string name = "tensor[" + std::to_string(i) + "]";
    spots.push_back({t.name_offset, 8, name + " name length"});
    spots.push_back({t.n_dims_offset, 4, name + " n_dims"});
    for (std::size_t d = 0; d < doc.tensors[i].dims.size(); ++d) {
      spots.push_back({t.dims_offset + 8 * d, 8, name + " dims[" + std::to_string(d) + "]"});
    }
    spots.push_back({t.type_offset, 4, name + " type"});
    spots.push_back({t.offset_offset, 8, name + " offset"});
  }
  return spots;
}

Seed make_seed(std::string name, const Document& doc, const WriteOptions& options = {},
               std::uint32_t weight = 24) {
  const Written w = write(doc, options);
  return Seed{std::move(name),     w.bytes, spots_of(doc, w.layout), w.layout.infos_end,
              w.layout.data_start, weight};
}

// A file from disk: its fields are known when the writer reproduces it byte for byte.
Seed file_seed(const fs::path& path, std::uint32_t weight) {
  const ByteVector bytes = read_file(path);
  Seed seed{path.filename().string(), bytes, {}, bytes.size(), bytes.size(), weight};
  if (const auto doc = read_document(Bytes(bytes.data(), bytes.size()))) {
    const Written w = write(*doc);
    if (w.bytes == bytes) {
      seed.spots = spots_of(*doc, w.layout);
      seed.metadata_end = w.layout.infos_end;
      seed.data_start = w.layout.data_start;
    }
  }
  if (seed.spots.empty()) seed.spots = spots_of(Document{}, WrittenLayout{});
  return seed;
}

std::vector<fs::path> gguf_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".gguf") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

fs::path source_dir() {
  return GGUFCHECK_SOURCE_DIR;
}

// Valid files of many shapes, all loaded by both (asserted by Differential.SeedsAreValid).
const std::vector<Seed>& seeds() {
  static const std::vector<Seed> all = [] {
    std::vector<Seed> out;
    out.push_back(make_seed("model", model_document()));
    Document v2 = model_document();
    v2.version = 2;
    out.push_back(make_seed("model-v2", v2));
    {
      Document doc = minimal_document();
      doc.metadata.push_back({"test.u8", Value::u8(7), {}});
      doc.metadata.push_back({"test.i16", Value::i16(-2), {}});
      doc.metadata.push_back({"test.bool", Value::boolean(true), {}});
      doc.metadata.push_back({"test.u64", Value::u64(1ULL << 40), {}});
      doc.metadata.push_back({"test.f64", Value::f64(0.5), {}});
      doc.metadata.push_back({"test.empty", Value::string(""), {}});
      doc.metadata.push_back(
          {"test.bools", Value::array(ValueType::Bool, {Value::boolean(false)}), {}});
      doc.metadata.push_back(
          {"test.i64s", Value::array(ValueType::Int64, {Value::i64(-1), Value::i64(2)}), {}});
      doc.metadata.push_back({"test.none", Value::array(ValueType::Uint32, {}), {}});
      doc.metadata.push_back(
          {"test.strings",
           Value::array(ValueType::String, {Value::string("x"), Value::string("")}),
           {}});
      doc.tensors.push_back(tensor("scalar", {}, 0));
      doc.tensors.push_back(tensor("cube", {32, 2, 2, 2}, 1));
      doc.tensors.push_back(tensor("", {256}, 12));  // empty names are fine for ggml
      doc.tensors.push_back(tensor("zero", {0, 4}, 0));
      doc.tensors.push_back(tensor("bytes", {64}, 24));
      out.push_back(make_seed("value-and-tensor-zoo", doc));
    }
    {
      Document doc = model_document();
      doc.metadata.insert(doc.metadata.begin() + 1, {"general.alignment", Value::u32(8), {}});
      out.push_back(make_seed("alignment-8", doc));
      Document c_string = model_document();
      c_string.metadata.insert(c_string.metadata.begin(),
                               {std::string("general.alignment\0x", 19), Value::u32(64), {}});
      WriteOptions o;
      o.alignment = 64;
      out.push_back(make_seed("alignment-64-c-string-key", c_string, o));
    }
    {
      Document doc = minimal_document();
      for (std::uint32_t type : {0U,  1U,  2U,  3U,  6U,  7U,  8U,  10U, 11U, 14U, 16U, 19U,
                                 20U, 23U, 28U, 29U, 30U, 34U, 35U, 39U, 40U, 41U, 42U}) {
        doc.tensors.push_back(tensor("t" + std::to_string(type), {256}, type));
      }
      WriteOptions o;
      o.pad_after_last_tensor = false;
      out.push_back(make_seed("every-type-unpadded", doc, o));
    }
    {
      WriteOptions padded;
      padded.pad_when_no_tensors = true;
      out.push_back(make_seed("metadata-only-padded", model_document(), padded, 6));
    }
    for (const fs::path& path : gguf_files(source_dir() / "examples" / "valid")) {
      out.push_back(file_seed(path, 12));
    }
    // Real files are large (0.6-2.3 MB), each mutant costs ~50 ms: 3% of the mutants.
    for (const fs::path& path : gguf_files(real_gguf_dir())) {
      out.push_back(file_seed(path, 1));
    }
    return out;
  }();
  return all;
}

struct Mutation {
  enum class Kind : std::uint8_t { Overwrite, Flip, Truncate, Delete, Insert, Append };
  Kind kind = Kind::Overwrite;
  std::uint64_t offset = 0;
  std::uint32_t width = 0;  // bytes written, deleted, inserted or appended
  std::uint64_t value = 0;  // the number written; the XOR mask or the byte inserted
  std::string what;         // the field, when the offset is one
};

std::string to_string(const Mutation& m) {
  std::ostringstream out;
  out << std::hex;
  switch (m.kind) {
    case Mutation::Kind::Overwrite:
      out << "overwrite " << std::dec << m.width << std::hex << " bytes at 0x" << m.offset
          << " with 0x" << m.value;
      break;
    case Mutation::Kind::Flip: out << "xor byte 0x" << m.offset << " with 0x" << m.value; break;
    case Mutation::Kind::Truncate: out << "truncate to 0x" << m.offset << " bytes"; break;
    case Mutation::Kind::Delete:
      out << "delete " << std::dec << m.width << std::hex << " bytes at 0x" << m.offset;
      break;
    case Mutation::Kind::Insert:
      out << "insert " << std::dec << m.width << std::hex << " bytes 0x" << m.value << " at 0x"
          << m.offset;
      break;
    case Mutation::Kind::Append:
      out << "append " << std::dec << m.width << std::hex << " bytes 0x" << m.value;
      break;
  }
  if (!m.what.empty()) out << " (" << m.what << ")";
  return out.str();
}

void apply(ByteVector& bytes, const Mutation& m) {
  const auto at = [&](std::uint64_t offset) {
    return bytes.begin() +
           static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(offset, bytes.size()));
  };
  switch (m.kind) {
    case Mutation::Kind::Overwrite:
      for (std::uint32_t i = 0; i < m.width && m.offset + i < bytes.size(); ++i) {
        bytes[m.offset + i] = static_cast<std::uint8_t>(m.value >> (8 * i));
      }
      break;
    case Mutation::Kind::Flip:
      if (m.offset < bytes.size()) bytes[m.offset] ^= static_cast<std::uint8_t>(m.value);
      break;
    case Mutation::Kind::Truncate: bytes.erase(at(m.offset), bytes.end()); break;
    case Mutation::Kind::Delete: bytes.erase(at(m.offset), at(m.offset + m.width)); break;
    case Mutation::Kind::Insert:
      bytes.insert(at(m.offset), m.width, static_cast<std::uint8_t>(m.value));
      break;
    case Mutation::Kind::Append:
      bytes.insert(bytes.end(), m.width, static_cast<std::uint8_t>(m.value));
      break;
  }
}

std::uint64_t read_le(const ByteVector& bytes, std::uint64_t offset, std::uint32_t width) {
  std::uint64_t v = 0;
  for (std::uint32_t i = 0; i < width && offset + i < bytes.size(); ++i) {
    v |= static_cast<std::uint64_t>(bytes[offset + i]) << (8 * i);
  }
  return v;
}

class Mutator {
 public:
  explicit Mutator(std::mt19937_64& rng) : rng_(rng) {}

  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool percent(std::uint64_t p) { return below(100) < p; }

  // Boundary values: 0, 1, 0x7f.., 0x80.., 0xff.., 2^63, 2^32, powers of two, the original
  // value +- 1, sizes measured from the field to the end of the file.
  std::uint64_t boundary(std::uint64_t original, std::uint64_t size, std::uint64_t offset) {
    static constexpr std::uint64_t kFixed[] = {0,
                                               1,
                                               2,
                                               3,
                                               4,
                                               5,
                                               7,
                                               8,
                                               9,
                                               12,
                                               13,
                                               16,
                                               24,
                                               31,
                                               32,
                                               33,
                                               38,
                                               39,
                                               42,
                                               43,
                                               63,
                                               64,
                                               65,
                                               0x7f,
                                               0x80,
                                               0xff,
                                               0x100,
                                               0x7fff,
                                               0x8000,
                                               0xffff,
                                               0x10000,
                                               0x7fffffff,
                                               0x80000000,
                                               0xffffffff,
                                               1ULL << 32,
                                               (1ULL << 32) + 1,
                                               1ULL << 30,
                                               (1ULL << 30) + 1,
                                               1ULL << 31,
                                               1ULL << 62,
                                               kPow63 - 1,
                                               kPow63,
                                               kPow63 + 1,
                                               ~0ULL,
                                               ~0ULL - 1,
                                               0x7f7f7f7f7f7f7f7fULL,
                                               0x8080808080808080ULL,
                                               0x7fffffff7fffffffULL,
                                               0xffffffff00000000ULL};
    const std::uint64_t r = below(100);
    if (r < 50) return kFixed[below(std::size(kFixed))];
    if (r < 65) return 1ULL << below(64);
    if (r < 78) return original + below(5) - 2;
    if (r < 90) {
      const std::uint64_t left = size > offset ? size - offset : 0;
      const std::uint64_t base[] = {size, left, left - 8, left - 12, left - 4};
      return base[below(std::size(base))] + below(3) - 1;
    }
    return percent(50) ? rng_() : below(1024);
  }

  Mutation next(const Seed& seed, const ByteVector& bytes) {
    const std::uint64_t size = bytes.size();
    const std::uint64_t metadata_end = std::min(seed.metadata_end, size);
    Mutation m;
    const std::uint64_t r = below(100);
    if (r < 40 && !seed.spots.empty()) {
      const Spot& spot = seed.spots[below(seed.spots.size())];
      m.kind = Mutation::Kind::Overwrite;
      m.offset = spot.offset;
      const std::uint32_t widths[] = {spot.width, spot.width, 4, 8};
      m.width = widths[below(std::size(widths))];
      m.value = boundary(read_le(bytes, spot.offset, m.width), size, spot.offset);
      m.what = spot.what;
    } else if (r < 50) {
      m.kind = Mutation::Kind::Overwrite;
      m.offset = below(metadata_end);
      m.width = percent(50) ? 4 : 8;
      m.value = boundary(read_le(bytes, m.offset, m.width), size, m.offset);
    } else if (r < 72) {
      m.kind = Mutation::Kind::Flip;
      m.offset = percent(85) ? below(metadata_end) : below(size);
      m.value = percent(70) ? 1ULL << below(8) : 1 + below(255);
    } else if (r < 92) {
      m.kind = Mutation::Kind::Truncate;
      const std::uint64_t t = below(100);
      if (t < 40 || seed.spots.empty()) {
        m.offset = below(size);
      } else if (t < 80) {
        const Spot& spot = seed.spots[below(seed.spots.size())];
        m.offset = spot.offset + below(spot.width + 1);
        m.what = "around " + spot.what;
      } else {
        const std::uint64_t marks[] = {seed.metadata_end, seed.data_start, size};
        m.offset = marks[below(std::size(marks))] + below(7) - 3;
      }
      m.offset = std::min(m.offset, size == 0 ? 0 : size - 1);
    } else if (r < 95) {
      m.kind = Mutation::Kind::Delete;
      m.offset = below(metadata_end);
      m.width = static_cast<std::uint32_t>(1 + below(8));
    } else if (r < 98) {
      m.kind = Mutation::Kind::Insert;
      m.offset = below(metadata_end);
      m.width = static_cast<std::uint32_t>(1 + below(8));
      m.value = percent(50) ? 0 : below(256);
    } else {
      m.kind = Mutation::Kind::Append;
      m.width = static_cast<std::uint32_t>(1 + below(64));
      m.value = percent(50) ? 0 : below(256);
    }
    return m;
  }

 private:
  std::mt19937_64& rng_;
};

struct Mutant {
  const Seed* seed = nullptr;
  std::vector<Mutation> mutations;
  ByteVector bytes;
};

// Mutant `index` of the campaign `seed_value`: independent of every other mutant.
Mutant make_mutant(std::uint64_t seed_value, std::uint64_t index) {
  std::seed_seq sequence{
      static_cast<std::uint32_t>(seed_value), static_cast<std::uint32_t>(seed_value >> 32),
      static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
  std::mt19937_64 rng(sequence);
  Mutator mutator(rng);
  const std::vector<Seed>& all = seeds();
  std::uint64_t total = 0;
  for (const Seed& s : all) total += s.weight;
  std::uint64_t pick = mutator.below(total);
  Mutant mutant;
  for (const Seed& s : all) {
    if (pick < s.weight) {
      mutant.seed = &s;
      break;
    }
    pick -= s.weight;
  }
  mutant.bytes = mutant.seed->bytes;
  const std::uint64_t r = mutator.below(100);
  const int count = r < 70 ? 1 : r < 90 ? 2 : 3;
  for (int i = 0; i < count; ++i) {
    const Mutation m = mutator.next(*mutant.seed, mutant.bytes);
    apply(mutant.bytes, m);
    mutant.mutations.push_back(m);
  }
  return mutant;
}

std::string describe(const Mutant& mutant) {
  std::string out = "seed file " + mutant.seed->name + ":";
  for (const Mutation& m : mutant.mutations) out += "\n    " + to_string(m);
  return out;
}

// --- tests ------------------------------------------------------------------------------------

// The harness itself: the reference loads a valid file, rejects a bad one in its reader, and
// applies the loader's bounds check (a file cut inside the tensor data).
TEST(Differential, ReferenceIsLoadedAndDiscriminates) {
  const ByteVector valid = write_bytes(model_document());
  const ReferenceResult loads = reference().load(valid);
  EXPECT_EQ(loads.outcome, ReferenceOutcome::Loads) << loads.log;

  ByteVector bad_magic = valid;
  bad_magic[0] = 'X';
  const ReferenceResult rejects = reference().load(bad_magic);
  EXPECT_EQ(rejects.outcome, ReferenceOutcome::ReaderRejects) << rejects.log;
  EXPECT_NE(rejects.log.find("magic"), std::string::npos) << rejects.log;

  const Written w = write(model_document());
  const ReferenceResult cut =
      reference().load(prefix(w.bytes, w.layout.tensors.back().data_position));
  EXPECT_EQ(cut.outcome, ReferenceOutcome::OutOfBounds) << cut.log;
}

// The one-shot path (taken when the server dies on a file, and for every file with
// GGUFCHECK_REFERENCE_ISOLATED=1) gives the server's outcomes and messages.
TEST(Differential, OneShotLoadsGiveTheServersResults) {
  GgmlReference one_shot(reference_library_path(), output_dir() / "scratch");
  one_shot.set_isolated(true);
  const std::vector<Case> cases = generated_cases();
  for (std::size_t i = 0; i < cases.size(); i += 12) {
    const ReferenceResult served = reference().load(cases[i].bytes);
    const ReferenceResult isolated = one_shot.load(cases[i].bytes);
    EXPECT_EQ(served.outcome, isolated.outcome) << cases[i].name;
    EXPECT_EQ(served.log, isolated.log) << cases[i].name;
  }
}

// docs/llama-cpp-divergences.md lists exactly kDivergences and kReferenceCrashes, in order.
TEST(Differential, DocumentedListIsTheTestedList) {
  std::ifstream in(source_dir() / "docs" / "llama-cpp-divergences.md");
  ASSERT_TRUE(in) << "docs/llama-cpp-divergences.md is missing";
  const std::regex heading(R"(^### (D|R)[0-9]+\. `([a-z0-9-]+)`)");
  std::vector<std::string> documented_divergences, documented_crashes;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, heading)) continue;
    (m[1] == "D" ? documented_divergences : documented_crashes).push_back(m[2]);
  }
  std::vector<std::string> tested_divergences, tested_crashes;
  for (const Divergence& d : kDivergences) tested_divergences.emplace_back(d.id);
  for (const ReferenceCrash& c : kReferenceCrashes) tested_crashes.emplace_back(c.id);
  EXPECT_EQ(documented_divergences, tested_divergences);
  EXPECT_EQ(documented_crashes, tested_crashes);
}

// Each documented divergence still happens, in its direction, and is recognised as itself.
TEST(Differential, EveryDocumentedDivergenceHasAWitness) {
  for (const Divergence& d : kDivergences) {
    SCOPED_TRACE(std::string(d.id));
    const ByteVector bytes = d.witness();
    const Comparison c = compare(bytes);
    EXPECT_FALSE(c.agree()) << "no longer a divergence: update the docs and the list\n"
                            << describe(c);
    EXPECT_EQ(c.theirs(), d.reference_loads) << describe(c);
    EXPECT_TRUE(d.explains(bytes, c.report)) << describe(c);
    const Verdict v = judge(bytes, c);
    EXPECT_EQ(v.divergence, &d) << describe(c);
  }
}

TEST(Differential, SeedsAreValid) {
  for (const Seed& seed : seeds()) {
    const Comparison c = compare(seed.bytes);
    EXPECT_TRUE(c.ours() && c.theirs()) << seed.name << ": " << describe(c);
    EXPECT_GT(seed.spots.size(), 3U) << seed.name << ": the writer does not reproduce it";
  }
}

Verdict expect_agreement(const std::string& name, const ByteVector& bytes) {
  const Comparison c = compare(bytes);
  const Verdict v = judge(bytes, c);
  if (!v.ok) {
    ADD_FAILURE() << name << ": " << v.problem << " (saved as " << save(name, bytes).string()
                  << ")\n  " << describe(c);
  }
  return v;
}

TEST(Differential, GeneratedFiles) {
  std::map<std::string_view, std::vector<std::string>> divergences;
  const std::vector<Case> cases = generated_cases();
  std::set<std::string> seen;
  for (const Case& c : cases) {
    EXPECT_TRUE(seen.insert(c.name).second) << "two generated files named " << c.name;
    const Verdict v = expect_agreement(c.name + ".gguf", c.bytes);
    if (v.divergence != nullptr) divergences[v.divergence->id].push_back(c.name);
  }
  std::printf("differential: %zu generated files\n", cases.size());
  for (const auto& [id, names] : divergences) {
    std::printf("  documented divergence %s: %zu files, e.g. %s\n", std::string(id).c_str(),
                names.size(), names.front().c_str());
  }
}

TEST(Differential, SampleAndRealFiles) {
  std::vector<fs::path> files = gguf_files(source_dir() / "examples" / "valid");
  for (const auto& f : gguf_files(source_dir() / "examples" / "broken")) files.push_back(f);
  for (const auto& f : gguf_files(real_gguf_dir())) files.push_back(f);
  ASSERT_GE(files.size(), 12U);
  for (const fs::path& file : files) {
    const ByteVector bytes = read_file(file);
    const Verdict v = expect_agreement(file.filename().string(), bytes);
    EXPECT_EQ(v.divergence, nullptr) << file << ": " << v.divergence->id;
    // The mapped-file path of ggufcheck and the path the reference opened give the same verdict.
    EXPECT_EQ(validate_file(file.string(), llama_cpp_options()).passed(),
              reference().load(file).loads())
        << file;
  }
}

// Strings and arrays at ggml's 1 GiB / 2^30 limits, in sparse files (the holes are the NUL
// bytes of the big field). Over the limit the reference rejects on the length alone; at the
// limit it reads the whole field, which costs a GiB of memory in the child: only with
// GGUFCHECK_DIFF_LARGE=1 (scripts/differential.sh sets it).
fs::path write_sparse(const std::string& name, const ByteVector& head, std::uint64_t hole,
                      const ByteVector& tail) {
  fs::create_directories(output_dir());
  const fs::path file = output_dir() / name;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(head.data()),
              static_cast<std::streamsize>(head.size()));
  }
  fs::resize_file(file, head.size() + hole);  // a hole: reads as NUL bytes, takes no space
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(tail.data()), static_cast<std::streamsize>(tail.size()));
  return file;
}

ByteVector le_bytes(std::uint64_t value, std::size_t width) {
  ByteVector out(width);
  for (std::size_t i = 0; i < width; ++i) out[i] = static_cast<std::uint8_t>(value >> (8 * i));
  return out;
}

ByteVector concat(std::initializer_list<ByteVector> parts) {
  ByteVector out;
  for (const ByteVector& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

ByteVector header(std::uint64_t tensors, std::uint64_t pairs) {
  return concat({{'G', 'G', 'U', 'F'}, le_bytes(3, 4), le_bytes(tensors, 8), le_bytes(pairs, 8)});
}

ByteVector gguf_string(std::string_view text) {
  return concat({le_bytes(text.size(), 8), ByteVector(text.begin(), text.end())});
}

struct SparseCase {
  std::string name;
  ByteVector head;  // up to and including the big field's length or count
  std::uint64_t hole;
  ByteVector tail;
  bool reference_loads;
};

std::vector<SparseCase> gibibyte_cases(std::uint64_t n) {
  const bool over = n > kReferenceStringLimit;
  const std::string at = over ? "over-limit" : "at-limit";
  const ByteVector u8_value = concat({le_bytes(0, 4), {1}});  // type uint8, value 1
  return {
      {"key-" + at, concat({header(0, 1), le_bytes(n, 8)}), n, u8_value, !over},
      {"string-value-" + at,
       concat({header(0, 1), gguf_string("test.big"), le_bytes(8, 4), le_bytes(n, 8)}),
       n,
       {},
       !over},
      {"u8-array-" + at,
       concat(
           {header(0, 1), gguf_string("test.big"), le_bytes(9, 4), le_bytes(0, 4), le_bytes(n, 8)}),
       n,
       {},
       !over},
      // Names of 64 bytes or more fail either way: the reference only sees the length.
      {"tensor-name-" + at, concat({header(1, 0), le_bytes(n, 8)}), n,
       concat({le_bytes(0, 4), le_bytes(0, 4), le_bytes(0, 8)}), false},
  };
}

TEST(Differential, GibibyteFields) {
  std::vector<SparseCase> cases = gibibyte_cases(kReferenceStringLimit + 1);
  const bool large = env_number("GGUFCHECK_DIFF_LARGE", 0) != 0;
  if (large) {
    for (SparseCase& c : gibibyte_cases(kReferenceStringLimit)) cases.push_back(std::move(c));
    reference().set_time_limit_seconds(600);  // ggml reads a 2^30-element array byte by byte
  }
  for (const SparseCase& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path file = write_sparse(c.name + ".gguf", c.head, c.hole, c.tail);
    const Report report = validate_file(file.string(), llama_cpp_options());
    const ReferenceResult result = reference().load(file);
    EXPECT_EQ(result.loads(), c.reference_loads) << to_string(result.outcome) << ": " << result.log;
    EXPECT_EQ(report.passed(), result.loads()) << describe(Comparison{report, result});
    fs::remove(file);
  }
  reference().set_time_limit_seconds(GgmlReference::kDefaultTimeLimitSeconds);
}

TEST(Differential, Mutants) {
  const std::uint64_t seed_value = env_number("GGUFCHECK_DIFF_SEED", kDefaultSeed);
  const std::uint64_t count = env_number("GGUFCHECK_DIFF_MUTANTS", kDefaultMutants);
  const std::uint64_t first = env_number("GGUFCHECK_DIFF_FIRST", 0);
  const bool verbose = env_number("GGUFCHECK_DIFF_VERBOSE", 0) != 0;
  std::printf("differential: seed %llu, mutants %llu..%llu, reference %s\n",
              static_cast<unsigned long long>(seed_value), static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + count), reference_library_path().c_str());
  const auto start = std::chrono::steady_clock::now();

  std::map<std::string, std::uint64_t> outcomes;  // "ggufcheck/llama.cpp" -> count
  std::map<std::string_view, std::uint64_t> divergences, crashes;
  std::uint64_t failures = 0;
  for (std::uint64_t i = first; i < first + count; ++i) {
    const Mutant mutant = make_mutant(seed_value, i);
    const Comparison c = compare(mutant.bytes);
    ++outcomes[std::string(c.ours() ? "passes" : "fails") + "/" + to_string(c.reference.outcome)];
    const Verdict v = judge(mutant.bytes, c);
    if (v.divergence != nullptr) ++divergences[v.divergence->id];
    if (v.crash != nullptr) ++crashes[v.crash->id];
    if ((i - first + 1) % 20000 == 0) {
      std::printf("differential: %llu mutants done\n",
                  static_cast<unsigned long long>(i - first + 1));
      std::fflush(stdout);
    }
    if (verbose) {
      std::printf("mutant %llu: %s\n  %s\n", static_cast<unsigned long long>(i),
                  describe(mutant).c_str(), describe(c).c_str());
    }
    if (v.ok) continue;
    ++failures;
    const std::string name =
        "mutant-" + std::to_string(seed_value) + "-" + std::to_string(i) + ".gguf";
    ADD_FAILURE() << "mutant " << i << ": " << v.problem << "\n  " << describe(mutant) << "\n  "
                  << describe(c) << "\n  saved as " << save(name, mutant.bytes).string()
                  << "\n  reproduce: GGUFCHECK_DIFF_SEED=" << seed_value
                  << " GGUFCHECK_DIFF_FIRST=" << i
                  << " GGUFCHECK_DIFF_MUTANTS=1 GGUFCHECK_DIFF_VERBOSE=1 "
                     "ggufcheck_differential_tests --gtest_filter=Differential.Mutants";
    if (failures >= 20) {
      ADD_FAILURE() << "stopping after 20 failures";
      break;
    }
  }

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("differential: %llu mutants in %.1f s\n", static_cast<unsigned long long>(count),
              seconds);
  for (const auto& [key, n] : outcomes) {
    std::printf("  ggufcheck/llama.cpp %-32s %llu\n", key.c_str(),
                static_cast<unsigned long long>(n));
  }
  for (const auto& [id, n] : divergences) {
    std::printf("  documented divergence %-28s %llu\n", std::string(id).c_str(),
                static_cast<unsigned long long>(n));
  }
  for (const auto& [id, n] : crashes) {
    std::printf("  documented reference crash %-23s %llu\n", std::string(id).c_str(),
                static_cast<unsigned long long>(n));
  }
}

}  // namespace
}  // namespace ggufcheck::testing

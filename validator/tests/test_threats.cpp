// The hostile file shapes of docs/threat-model.md, rows A1..F3: each one is built with the writer,
// patched at the offsets its WrittenLayout reports, validated under every profile, and must be
// flagged with the catalogue's code without crashing, with every finding inside the file, and
// without allocating in proportion to the sizes the file claims.
//
// This program replaces the global operator new/delete (every form) with counting versions, so
// a test can measure the peak of the bytes that validate() allocates: the counter is reset
// right before the call (the input buffer is allocated before) and read right after it, so
// the peak covers the reader, the checks and the Report that validate() returns. Hostile
// files must stay below kHostileBound (1 MiB) under every profile; that bound does not depend
// on any count or length in the file, which is the point: an allocation proportional to a
// claimed size (2^63 tensors, a 2^64-byte string, a 2^62-element array) would blow it by
// orders of magnitude. The few big-but-present files of row C5 get bounds derived from the
// bytes that are really there, explained at each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "counting_allocator.hpp"
#include "hostile.hpp"
#include "test_support.hpp"
#include "util/duplicates.hpp"  // the finder itself, for B4's colliding keys

// --- the counting allocator ----------------------------------------------------------------
//
// support/counting_allocator.hpp (and .cpp, compiled into this program): the global
// operator new/delete count live and peak bytes; PeakProbe measures a peak.

namespace ggufcheck::testing {
namespace {

// --- measuring -------------------------------------------------------------------------------

constexpr std::size_t kMiB = std::size_t{1} << 20;
// What validating a hostile file may allocate, whatever its header, counts and lengths claim.
constexpr std::size_t kHostileBound = kMiB;

// The largest peak each test measured, printed at the end of the run.
std::map<std::string, std::size_t>& peaks_by_test() {
  static std::map<std::string, std::size_t> peaks;
  return peaks;
}

void note_peak(std::size_t peak) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return;
  std::size_t& slot = peaks_by_test()[info->name()];
  slot = std::max(slot, peak);
}

class PeakSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    std::vector<std::pair<std::size_t, std::string>> sorted;
    for (const auto& [name, peak] : peaks_by_test()) sorted.emplace_back(peak, name);
    std::sort(sorted.rbegin(), sorted.rend());
    std::printf("[ peaks    ] largest allocation peaks during validate():\n");
    for (std::size_t i = 0; i < sorted.size() && i < 12; ++i) {
      std::printf("[ peaks    ] %12zu bytes  %s\n", sorted[i].first, sorted[i].second.c_str());
    }
  }
};

[[maybe_unused]] ::testing::Environment* const g_peak_summary =
    ::testing::AddGlobalTestEnvironment(new PeakSummary);

struct Measured {
  Report report;
  std::size_t peak = 0;
};

Measured run(const ByteVector& bytes, Profile profile, const Limits& limits = {}) {
  Options options = container_options();
  options.profile = profile;
  options.limits = limits;
  Measured result;
  {
    const PeakProbe probe;
    Report report = validate(Bytes(bytes.data(), bytes.size()), options);
    result.peak = probe.peak();
    result.report = std::move(report);
  }
  note_peak(result.peak);
  return result;
}

std::string describe(const Report& report) {
  std::ostringstream out;
  for (const Finding& f : report.findings) {
    out << "  " << code_string(f.code) << " " << to_string(f.severity) << " @0x" << std::hex
        << f.offset << "+0x" << f.length << std::dec << " " << f.path << ": " << f.message << "\n";
  }
  if (report.findings.empty()) out << "  (no findings)\n";
  return out.str();
}

::testing::AssertionResult has_code(const Report& report, Code code) {
  if (has(report, code)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << code_string(code) << " " << catalogue_entry(code).name << " not reported; findings:\n"
         << describe(report);
}

::testing::AssertionResult lacks_code(const Report& report, Code code) {
  if (!has(report, code)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << code_string(code) << " " << catalogue_entry(code).name << " reported; findings:\n"
         << describe(report);
}

::testing::AssertionResult fails(const Report& report) {
  if (report.errors != 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no error reported; findings:\n" << describe(report);
}

::testing::AssertionResult passes(const Report& report) {
  if (report.errors == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << report.errors << " error(s); findings:\n"
                                       << describe(report);
}

std::size_t count_code(const Report& report, Code code) {
  return static_cast<std::size_t>(
      std::count_if(report.findings.begin(), report.findings.end(),
                    [code](const Finding& f) { return f.code == code; }));
}

// Every finding points into the file: offset and offset + length within its size.
void expect_inside_file(const Report& report, std::size_t size) {
  EXPECT_EQ(report.facts.file_size, size);
  for (const Finding& f : report.findings) {
    EXPECT_LE(f.offset, size) << code_string(f.code) << " " << f.path << ": " << f.message;
    if (f.offset <= size) {
      EXPECT_LE(f.length, size - f.offset)
          << code_string(f.code) << " " << f.path << ": " << f.message;
    }
  }
}

struct Reports {
  Report strict, spec, llama;
};

// Validates under every profile; checks the allocation bound and that every finding lies in
// the file. The caller checks the codes.
Reports hostile(const ByteVector& bytes, std::size_t bound = kHostileBound,
                const Limits& limits = {}) {
  Reports out;
  for (const Profile profile : kAllProfiles) {
    Measured r = run(bytes, profile, limits);
    EXPECT_LE(r.peak, bound) << "profile " << to_string(profile) << ": validate() allocated "
                             << r.peak << " bytes for a " << bytes.size() << "-byte file";
    expect_inside_file(r.report, bytes.size());
    switch (profile) {
      case Profile::Strict: out.strict = std::move(r.report); break;
      case Profile::Spec: out.spec = std::move(r.report); break;
      case Profile::LlamaCpp: out.llama = std::move(r.report); break;
    }
  }
  return out;
}

// --- building files --------------------------------------------------------------------------

constexpr std::uint64_t kMax64 = UINT64_MAX;
constexpr std::uint64_t kPow63 = std::uint64_t{1} << 63;

// Bytes left in the file after a length field at `offset` (so length + 1 runs past the end).
std::uint64_t left_after_length(const ByteVector& bytes, std::uint64_t offset) {
  return bytes.size() - offset - 8;
}

bool printable_ascii(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte >= 0x20 && byte < 0x7f;
  });
}

// =============================================================================================
// The allocator itself
// =============================================================================================

// Makes the allocation behind p observable: the compiler must assume that the asm reads p and
// keeps it, so it cannot drop the new/delete pair (since C++14 it may drop any pair whose
// pointer does not escape, and g++ -O2 did drop one here).
void keep(const void* p) {
  asm volatile("" : : "r"(p) : "memory");
}

struct Counted {
  std::uint64_t allocations = 0;  // calls of a replacement operator new
  std::size_t peak = 0;           // peak live bytes above the start
  bool freed = false;             // the live bytes are back where they started
};

// What `form` (which allocates, keeps and frees) did to the counters.
template <typename Form>
Counted count(Form form) {
  const std::size_t live = g_live_bytes.load();
  const std::uint64_t before = g_allocations.load();
  const PeakProbe probe;
  form();
  return {g_allocations.load() - before, probe.peak(), g_live_bytes.load() == live};
}

struct alignas(256) Overaligned {
  std::uint8_t bytes[256];
};

TEST(Threats, AllocatorCountsEveryForm) {
  std::uintptr_t aligned_at = 1;
  std::uintptr_t aligned_array_at = 1;
  // One new-expression of each form: exactly one counted allocation each, its bytes in the
  // peak, and freed by the matching delete. If the sanitizer runtime's operator new were in
  // use instead, nothing would be counted.
  const std::vector<std::pair<const char*, Counted>> forms = {
      {"new T", count([] {
         auto* p = new std::uint64_t(7);
         keep(p);
         delete p;
       })},
      {"new T[n]", count([] {
         auto* p = new std::uint32_t[1000];
         keep(p);
         delete[] p;
       })},
      {"new (align_val_t) T", count([&] {
         auto* p = new Overaligned;
         keep(p);
         aligned_at = reinterpret_cast<std::uintptr_t>(p);
         delete p;
       })},
      {"new (align_val_t) T[n]", count([&] {
         auto* p = new Overaligned[4];
         keep(p);
         aligned_array_at = reinterpret_cast<std::uintptr_t>(p);
         delete[] p;
       })},
      {"new (nothrow) T", count([] {
         auto* p = new (std::nothrow) std::uint64_t(7);
         keep(p);
         delete p;
       })},
      {"new (nothrow) T[n]", count([] {
         auto* p = new (std::nothrow) std::uint64_t[16];
         keep(p);
         delete[] p;
       })},
      {"new (align_val_t, nothrow) T", count([] {
         auto* p = new (std::nothrow) Overaligned;
         keep(p);
         delete p;
       })},
      {"new (align_val_t, nothrow) T[n]", count([] {
         auto* p = new (std::nothrow) Overaligned[4];
         keep(p);
         delete[] p;
       })},
      // The calls themselves, which no optimiser may elide.
      {"operator new(n)", count([] {
         void* p = ::operator new(100);
         keep(p);
         ::operator delete(p);
       })},
      {"operator new[](n)", count([] {
         void* p = ::operator new[](100);
         keep(p);
         ::operator delete[](p);
       })},
      {"operator new(n, align_val_t)", count([] {
         void* p = ::operator new (100, std::align_val_t{512});
         keep(p);
         ::operator delete (p, std::align_val_t{512});
       })},
      {"operator new[](n, align_val_t, nothrow)", count([] {
         void* p = ::operator new[](100, std::align_val_t{512}, std::nothrow);
         keep(p);
         ::operator delete[](p, std::align_val_t{512});
       })},
  };
  for (const auto& [form, counted] : forms) {
    SCOPED_TRACE(form);
    EXPECT_EQ(counted.allocations, 1u);
    EXPECT_GE(counted.peak, sizeof(std::uint64_t));
    EXPECT_TRUE(counted.freed);
  }
  EXPECT_EQ(aligned_at % 256, 0u);
  EXPECT_EQ(aligned_array_at % 256, 0u);
  EXPECT_GE(forms[3].second.peak, 4 * sizeof(Overaligned));
  // What the library allocates goes through std::allocator, and its bytes make the peak.
  const Counted big = count([] {
    std::vector<std::uint8_t> bytes(kMiB);
    keep(bytes.data());
  });
  EXPECT_EQ(big.allocations, 1u);
  EXPECT_GE(big.peak, kMiB);
  EXPECT_TRUE(big.freed);
}

TEST(Threats, ValidFilesStayFarBelowTheBound) {
  const ByteVector bytes = write_bytes(model_document());
  const Reports r = hostile(bytes, 64 * 1024);
  EXPECT_TRUE(passes(r.strict));
  EXPECT_TRUE(passes(r.llama));
}

// =============================================================================================
// A: header and counts
// =============================================================================================

TEST(Threats, A1_FileShorterThanHeader) {
  const ByteVector full = write_bytes(model_document());
  for (std::uint64_t n = 0; n < 24; ++n) {
    SCOPED_TRACE(::testing::Message() << n << "-byte prefix");
    const Reports r = hostile(prefix(full, n));
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedHeader));
    EXPECT_TRUE(has_code(r.llama, Code::TruncatedHeader));
    EXPECT_EQ(r.strict.errors, 1u) << describe(r.strict);
  }
  // Only "GGUF" (Ollama CVE-2024-39720 crashed on a 4-byte file).
  const ByteVector magic_only = {'G', 'G', 'U', 'F'};
  EXPECT_TRUE(has_code(hostile(magic_only).strict, Code::TruncatedHeader));
  // A version 1 header is 16 bytes: every shorter prefix is truncated too.
  Document v1 = minimal_document();
  v1.version = 1;
  const ByteVector v1_bytes = write_bytes(v1);
  for (std::uint64_t n = 0; n < 16; ++n) {
    SCOPED_TRACE(::testing::Message() << n << "-byte prefix of a v1 file");
    EXPECT_TRUE(has_code(hostile(prefix(v1_bytes, n)).strict, Code::TruncatedHeader));
  }
}

TEST(Threats, A2_WrongMagic) {
  const ByteVector valid = write_bytes(model_document());
  struct Case {
    std::string magic;
    bool legacy;
  };
  const std::vector<Case> cases = {
      {"GGML", true},
      {"GGMF", true},
      {"GGJT", true},
      {"GGLA", true},
      {"GGSA", true},
      // As the legacy formats really stored them: a little-endian u32, bytes reversed.
      {"lmgg", true},
      {"fmgg", true},
      {"tjgg", true},
      {"algg", true},
      {"asgg", true},
      {"gguf", false},
      {"FUGG", false},
      {std::string("\0\0\0\0", 4), false},
      // Non-printable bytes must be escaped in the message (old ggml printed them with %s).
      {std::string("\xff\x1b[2", 4), false},
      {std::string("GG\0F", 4), false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "magic " << ::testing::PrintToString(c.magic));
    ByteVector bytes = valid;
    std::copy(c.magic.begin(), c.magic.end(), bytes.begin());
    const Reports r = hostile(bytes);
    ASSERT_TRUE(has_code(r.strict, Code::BadMagic));
    EXPECT_TRUE(has_code(r.llama, Code::BadMagic));
    EXPECT_EQ(r.strict.findings.size(), 1u) << describe(r.strict);  // nothing after the magic
    const Finding* f = find(r.strict, Code::BadMagic);
    EXPECT_EQ(f->offset, 0u);
    EXPECT_EQ(f->length, 4u);
    EXPECT_TRUE(printable_ascii(f->message)) << f->message;
    if (c.legacy) {
      EXPECT_NE(f->hint.find("legacy"), std::string::npos) << f->hint;
    }
    // The magic alone, as a 4-byte file.
    const ByteVector alone(c.magic.begin(), c.magic.end());
    EXPECT_TRUE(has_code(hostile(alone).strict, Code::BadMagic));
  }
}

TEST(Threats, A3_Version0) {
  WriteOptions options;
  options.version_field = 0;
  const ByteVector bytes = write_bytes(model_document(), options);
  const Reports r = hostile(bytes);
  EXPECT_TRUE(has_code(r.strict, Code::UnsupportedVersion));
  EXPECT_TRUE(has_code(r.llama, Code::UnsupportedVersion));
  EXPECT_TRUE(has_code(r.spec, Code::UnsupportedVersion));
}

TEST(Threats, A3_Version1) {
  // A genuine v1 file (32-bit counts and lengths).
  Document v1 = model_document();
  v1.version = 1;
  const Reports genuine = hostile(write_bytes(v1));
  EXPECT_TRUE(has_code(genuine.strict, Code::ObsoleteVersion));
  EXPECT_TRUE(has_code(genuine.llama, Code::ObsoleteVersion));
  EXPECT_TRUE(fails(genuine.llama));
  // A v3 file claiming version 1: its 64-bit fields read as 32-bit lengths (CVE-2025-66960).
  WriteOptions options;
  options.version_field = 1;
  const Reports misread = hostile(write_bytes(model_document(), options));
  EXPECT_TRUE(has_code(misread.strict, Code::ObsoleteVersion));
  EXPECT_TRUE(fails(misread.strict));
}

TEST(Threats, A3_VersionAbove3) {
  for (const std::uint32_t version : {4u, 5u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x0000FFFFu}) {
    SCOPED_TRACE(version);
    WriteOptions options;
    options.version_field = version;
    const Reports r = hostile(write_bytes(model_document(), options));
    EXPECT_TRUE(has_code(r.strict, Code::UnsupportedVersion));
    EXPECT_TRUE(has_code(r.llama, Code::UnsupportedVersion));
    EXPECT_TRUE(lacks_code(r.strict, Code::ByteSwappedFile));
  }
}

TEST(Threats, A3_ByteSwappedVersion3) {
  // A real big-endian file: flagged, then read byte-swapped without further trouble.
  Document big = model_document();
  big.endian = Endian::Big;
  const Reports genuine = hostile(write_bytes(big));
  EXPECT_TRUE(has_code(genuine.strict, Code::ByteSwappedFile));
  EXPECT_TRUE(has_code(genuine.llama, Code::ByteSwappedFile));
  EXPECT_EQ(genuine.strict.errors, 1u) << describe(genuine.strict);
  EXPECT_EQ(genuine.strict.facts.endian, Endian::Big);
  // A little-endian file whose version alone reads 0x03000000: the counts read byte-swapped.
  WriteOptions options;
  options.version_field = 0x03000000u;
  const Reports swapped = hostile(write_bytes(model_document(), options));
  EXPECT_TRUE(has_code(swapped.strict, Code::ByteSwappedFile));
  EXPECT_TRUE(has_code(swapped.strict, Code::ImpossibleCount));
  EXPECT_TRUE(has_code(swapped.llama, Code::ByteSwappedFile));
}

TEST(Threats, A4_TensorCountWraps) {
  // 0x1D1D1D1D1D1D1D1D (Talos); 2^64 / 24 + 1, whose product with the smallest tensor-info
  // size (24) wraps to 8; 2^64 / 40 + 1; and the largest count below 2^63.
  for (const std::uint64_t count : std::initializer_list<std::uint64_t>{
           0x1D1D1D1D1D1D1D1DULL, kMax64 / 24 + 1, kMax64 / 40 + 1, kPow63 - 1}) {
    SCOPED_TRACE(::testing::Message() << "tensor_count 0x" << std::hex << count);
    const Reports r = hostile(with_counts(model_document(), count, std::nullopt));
    ASSERT_TRUE(has_code(r.strict, Code::ImpossibleCount));
    EXPECT_TRUE(has_code(r.llama, Code::ImpossibleCount));
    const Finding* f = find(r.strict, Code::ImpossibleCount);
    EXPECT_EQ(f->offset, 8u);
    EXPECT_EQ(f->length, 8u);
    EXPECT_EQ(r.strict.facts.tensors_read, 0u);
  }
}

TEST(Threats, A4_TensorCountAboveWhatFollowsTheMetadata) {
  // Passes the check against the bytes after the header (the metadata counts there), but not
  // the one against the bytes after the metadata: a few real entries, a count far above them.
  const Written written = write(model_document());
  const std::uint64_t infos_start = written.layout.pairs.back().end;
  const std::uint64_t count = (written.bytes.size() - infos_start) / 24 + 1;
  ASSERT_LE(count, (written.bytes.size() - 24) / 24);
  const Reports r = hostile(with_counts(model_document(), count, std::nullopt));
  EXPECT_TRUE(has_code(r.strict, Code::ImpossibleCount));
  EXPECT_TRUE(has_code(r.llama, Code::ImpossibleCount));
  EXPECT_EQ(r.strict.facts.tensors_read, 0u);
}

TEST(Threats, A5_KvCountWraps) {
  // 0x055555555555555a (Talos, x48 wraps); 2^64 / 13 + 1 (the smallest pair: x13 wraps).
  for (const std::uint64_t count : std::initializer_list<std::uint64_t>{
           0x055555555555555AULL, kMax64 / 13 + 1, kMax64 / 12 + 1, 0x1D1D1D1D1D1D1D1DULL}) {
    SCOPED_TRACE(::testing::Message() << "kv_count 0x" << std::hex << count);
    const Reports r = hostile(with_counts(model_document(), std::nullopt, count));
    ASSERT_TRUE(has_code(r.strict, Code::ImpossibleCount));
    EXPECT_TRUE(has_code(r.llama, Code::ImpossibleCount));
    EXPECT_EQ(find(r.strict, Code::ImpossibleCount)->offset, 16u);
    EXPECT_EQ(r.strict.facts.kv_read, 0u);
  }
}

TEST(Threats, A6_KvCountAbovePairsFileEndsMidPair) {
  const Document doc = document({{"general.name", Value::string("x"), {}},
                                 {"llama.block_count", Value::u32(2), {}},
                                 {"llama.context_length", Value::u64(4096), {}}});
  const Written written = write(doc);
  const WrittenPair& last = written.layout.pairs.back();
  {
    SCOPED_TRACE("kv_count 6 of 4 pairs, the file ends inside the last value");
    ByteVector bytes = prefix(written.bytes, last.value_offset + 4);
    patch<std::uint64_t>(bytes, 16, 6);
    const Reports r = hostile(bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedMetadata));
    EXPECT_TRUE(has_code(r.llama, Code::TruncatedMetadata));
    EXPECT_EQ(r.strict.facts.kv_read, 3u);
  }
  {
    SCOPED_TRACE("the file ends inside the last key");
    ByteVector bytes = prefix(written.bytes, last.key_offset + 8 + 5);
    const Reports r = hostile(bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedString));
    EXPECT_TRUE(has_code(r.llama, Code::TruncatedString));
  }
  {
    SCOPED_TRACE("the file ends inside the last value type");
    const Reports r = hostile(prefix(written.bytes, last.type_offset + 2));
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedMetadata));
  }
  {
    SCOPED_TRACE("kv_count one above the pairs, the file ends after the last pair");
    ByteVector bytes = written.bytes;
    patch<std::uint64_t>(bytes, 16, doc.metadata.size() + 1);
    bytes.insert(bytes.end(), 12, 0);  // enough bytes that the count itself is possible
    const Reports r = hostile(bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedMetadata));
  }
}

TEST(Threats, A6_TruncatedAtEveryByte) {
  const Written written = write(model_document());
  const ByteVector& full = written.bytes;
  for (std::uint64_t n = 0; n < full.size(); ++n) {
    // Inside the tensor data every cut is the same case: there one byte in 61, and every byte
    // within 64 of the data section's start (the weights are most of the model's bytes).
    const std::uint64_t start = written.layout.data_start;
    if (n >= start + 64 && (n - start) % 61 != 0 && n + 64 < full.size()) continue;
    SCOPED_TRACE(::testing::Message() << n << "-byte prefix of " << full.size());
    const Reports r = hostile(prefix(full, n));
    if (n < written.layout.data_start) {
      EXPECT_TRUE(fails(r.strict));
      EXPECT_TRUE(fails(r.llama));
    } else {
      // Inside the tensor data: out of bounds, or only the final padding missing.
      EXPECT_TRUE(has(r.strict, Code::TensorOutOfBounds) ||
                  has(r.strict, Code::MissingFinalPadding))
          << describe(r.strict);
    }
  }
}

TEST(Threats, A7_CountsOf2To63AndAbove) {
  const ByteVector valid = write_bytes(model_document());
  for (const std::uint64_t offset : {std::uint64_t{8}, std::uint64_t{16}}) {
    for (const std::uint64_t count : {kPow63, kPow63 + 1, kMax64 - 1, kMax64}) {
      SCOPED_TRACE(::testing::Message()
                   << (offset == 8 ? "tensor_count" : "kv_count") << " 0x" << std::hex << count);
      ByteVector bytes = valid;
      patch<std::uint64_t>(bytes, offset, count);
      const Reports r = hostile(bytes);
      ASSERT_TRUE(has_code(r.strict, Code::ImpossibleCount));
      EXPECT_TRUE(has_code(r.llama, Code::ImpossibleCount));
      EXPECT_TRUE(has_code(r.spec, Code::ImpossibleCount));
      EXPECT_EQ(find(r.strict, Code::ImpossibleCount)->offset, offset);
    }
  }
}

// =============================================================================================
// B: strings and keys
// =============================================================================================

// The positions of a key, a string value, a string-array element and a tensor name.
struct StringSites {
  Written written;
  std::uint64_t key = 0, value = 0, element = 0, tensor_name = 0;
};

StringSites string_sites() {
  Document doc =
      document({{"general.name", Value::string("model"), {}},
                {"tokenizer.ggml.tokens",
                 Value::array(ValueType::String, {Value::string("a"), Value::string("b")}),
                 {}}});
  doc.tensors.push_back(tensor("output.weight", {8}));
  StringSites sites;
  sites.written = write(doc);
  const WrittenLayout& layout = sites.written.layout;
  sites.key = layout.pairs[1].key_offset;
  sites.value = layout.pairs[1].value_offset;
  sites.element = layout.pairs[2].value_offset + 4 + 8;  // after element type and count
  sites.tensor_name = layout.tensors[0].name_offset;
  return sites;
}

void expect_truncated_string_at(const StringSites& sites, std::uint64_t site,
                                std::uint64_t length) {
  ByteVector bytes = sites.written.bytes;
  patch<std::uint64_t>(bytes, site, length);
  const Reports r = hostile(bytes);
  ASSERT_TRUE(has_code(r.strict, Code::TruncatedString));
  EXPECT_TRUE(has_code(r.llama, Code::TruncatedString));
  EXPECT_TRUE(has_code(r.spec, Code::TruncatedString));
  // Pointed at the string (its length field or the record holding it), not beyond.
  EXPECT_LE(find(r.strict, Code::TruncatedString)->offset, site);
}

TEST(Threats, B1_StringLengthAllOnes) {
  const StringSites sites = string_sites();
  for (const auto& [what, site] :
       {std::pair{"key", sites.key}, std::pair{"value", sites.value},
        std::pair{"array element", sites.element}, std::pair{"tensor name", sites.tensor_name}}) {
    SCOPED_TRACE(what);
    expect_truncated_string_at(sites, site, kMax64);  // length + 1 wraps to 0
  }
}

TEST(Threats, B2_StringLengthNegativeOrJustPastTheEnd) {
  const StringSites sites = string_sites();
  for (const auto& [what, site] :
       {std::pair{"key", sites.key}, std::pair{"value", sites.value},
        std::pair{"array element", sites.element}, std::pair{"tensor name", sites.tensor_name}}) {
    for (const std::uint64_t length :
         {kPow63, kPow63 + 1, kMax64 - 1, left_after_length(sites.written.bytes, site) + 1}) {
      SCOPED_TRACE(::testing::Message() << what << " length 0x" << std::hex << length);
      expect_truncated_string_at(sites, site, length);
    }
  }
  // The boundary: a last string that ends exactly at the end of the file is fine.
  Document doc = minimal_document();
  doc.metadata.push_back({"general.name", Value::string("exactly to the end"), {}});
  const Reports r = hostile(write_bytes(doc));
  EXPECT_TRUE(passes(r.strict));
}

TEST(Threats, B3_EmptyKey) {
  const Reports r = hostile(write_bytes(document({{"", Value::u32(1), {}}})));
  EXPECT_TRUE(has_code(r.strict, Code::EmptyKey));
  EXPECT_TRUE(has_code(r.llama, Code::EmptyKey));
  EXPECT_TRUE(fails(r.llama));  // llama.cpp 2025-02 aborted on it
}

TEST(Threats, B4_DuplicateKey) {
  const Reports names =
      hostile(write_bytes(document({{"general.name", Value::string("first"), {}},
                                    {"general.name", Value::string("last"), {}}})));
  EXPECT_TRUE(has_code(names.strict, Code::DuplicateKey));
  EXPECT_TRUE(has_code(names.llama, Code::DuplicateKey));
  // The dangerous one: two alignments, readers taking the first or the last see different data.
  const Reports alignments = hostile(write_bytes(document(
      {{"general.alignment", Value::u32(32), {}}, {"general.alignment", Value::u32(64), {}}})));
  EXPECT_TRUE(has_code(alignments.strict, Code::DuplicateKey));
  EXPECT_TRUE(has_code(alignments.llama, Code::DuplicateKey));
}

// --- B4 with keys chosen to collide --------------------------------------------------------
//
// The duplicate check once used an unseeded std::hash in a table of the smallest power of two
// >= 2x the entries, with linear probing: names whose hashes agree in the low bits made one
// long cluster, and n of them cost n^2/2 comparisons. These names do that (with whatever
// std::hash this program has): the finder must give the earliest duplicates all the same.

// The old table's capacity for `entries` names.
std::size_t unseeded_table_capacity(std::size_t entries) {
  std::size_t capacity = 16;
  while (capacity < entries * 2) capacity *= 2;
  return capacity;
}

// `count` distinct keys "collide.<base 36>" whose std::hash masked to `capacity` falls in
// [0, slots): deterministic, a brute-force search of about count * capacity / slots names.
std::vector<std::string> colliding_keys(std::size_t count, std::size_t capacity,
                                        std::size_t slots) {
  std::vector<std::string> keys;
  for (std::uint64_t n = 0; keys.size() < count; ++n) {
    std::string key = "collide.";
    for (std::uint64_t rest = n; rest != 0 || key.size() == 8; rest /= 36) {
      key.push_back("0123456789abcdefghijklmnopqrstuvwxyz"[rest % 36]);
    }
    if ((std::hash<std::string_view>{}(key) & (capacity - 1)) < slots) keys.push_back(key);
  }
  return keys;
}

// The names of a file: 3000 colliding keys, then some of them again (one three times), in an
// order where the later copies are spread between the first ones.
struct CollidingNames {
  std::vector<std::string> names;
  std::vector<std::pair<std::size_t, std::size_t>> duplicates;  // (index, earliest index)
};

CollidingNames colliding_names(std::size_t first_index) {
  constexpr std::size_t kUnique = 3000;
  constexpr std::array<std::size_t, 7> kRepeated = {0, 1, 777, 1500, 2998, 2999, 1500};
  const std::size_t entries = first_index + kUnique + kRepeated.size();
  const std::vector<std::string> keys = colliding_keys(kUnique, unseeded_table_capacity(entries),
                                                       unseeded_table_capacity(entries) / 256);
  CollidingNames out;
  std::map<std::string, std::size_t> first;  // the reference: the earliest index of each name
  auto add = [&](const std::string& name) {
    const std::size_t index = first_index + out.names.size();
    const auto [it, inserted] = first.try_emplace(name, index);
    if (!inserted) out.duplicates.emplace_back(index, it->second);
    out.names.push_back(name);
  };
  std::size_t next = 0;
  for (const std::size_t repeated : kRepeated) {
    while (next <= std::min(repeated + 200, kUnique - 1)) add(keys[next++]);
    add(keys[repeated]);
  }
  while (next < kUnique) add(keys[next++]);
  return out;
}

// Every insert's answer, as (index, earlier index) for the names that had one.
template <typename Finder>
std::vector<std::pair<std::size_t, std::size_t>> duplicates_found(
    Finder& finder, const std::vector<std::string>& names) {
  std::vector<std::pair<std::size_t, std::size_t>> found;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto name_of = [&names](std::size_t j) { return std::string_view(names[j]); };
    if (const std::optional<std::size_t> earlier = finder.insert(names[i], i, name_of)) {
      found.emplace_back(i, *earlier);
    }
  }
  return found;
}

TEST(Threats, B4_CollidingNamesFindTheEarliestDuplicates) {
  const CollidingNames c = colliding_names(0);
  ASSERT_EQ(c.duplicates.size(), 7u);
  ASSERT_EQ(c.duplicates.back().second, c.duplicates[3].second);  // the third copy: the first
  // The library's finder: the names cluster under std::hash, not under its seeded hash, so it
  // stays in the hash table.
  detail::DuplicateFinder seeded(c.names.size());
  EXPECT_EQ(duplicates_found(seeded, c.names), c.duplicates);
  EXPECT_FALSE(seeded.ordered()) << "a probe sequence of over " << seeded.kMaxProbes
                                 << " slots for names that collide only under std::hash";
  // Under std::hash itself (the table places by the high bits of a hash, which these names do
  // not share, so they need not cluster there): the same answers.
  struct UnseededHash {
    std::uint64_t operator()(std::string_view name) const {
      return std::hash<std::string_view>{}(name);
    }
  };
  detail::BasicDuplicateFinder<UnseededHash> unseeded(c.names.size());
  EXPECT_EQ(duplicates_found(unseeded, c.names), c.duplicates);
  // A hash that is one constant: the fallback from the 257th name on, the same answers again.
  struct ConstantHash {
    std::uint64_t operator()(std::string_view) const { return 42; }
  };
  detail::BasicDuplicateFinder<ConstantHash> constant(c.names.size());
  EXPECT_EQ(duplicates_found(constant, c.names), c.duplicates);
  EXPECT_TRUE(constant.ordered());
}

TEST(Threats, B4_CollidingKeysReportTheEarliestDuplicates) {
  // The same names as metadata keys after general.architecture: each repeated key is reported
  // once, in file order, at its own pair, naming the earliest pair with that key.
  Document doc = minimal_document();
  const std::size_t first_index = doc.metadata.size();
  const CollidingNames c = colliding_names(first_index);
  for (const std::string& name : c.names) doc.metadata.push_back({name, Value::u8(1), {}});
  const Written written = write(doc);
  for (const Profile profile : kAllProfiles) {
    SCOPED_TRACE(to_string(profile));
    const Report report = run(written.bytes, profile).report;
    std::vector<std::pair<std::size_t, std::size_t>> reported;
    for (const Finding& f : report.findings) {
      if (f.code != Code::DuplicateKey) continue;
      const auto pair =
          std::find_if(written.layout.pairs.begin(), written.layout.pairs.end(),
                       [&](const WrittenPair& p) { return p.key_offset == f.offset; });
      ASSERT_NE(pair, written.layout.pairs.end()) << f.offset << ": " << f.message;
      const std::size_t at = f.message.find("as kv[");
      ASSERT_NE(at, std::string::npos) << f.message;
      reported.emplace_back(static_cast<std::size_t>(pair - written.layout.pairs.begin()),
                            std::stoul(f.message.substr(at + 6)));
    }
    EXPECT_EQ(reported, c.duplicates);
    EXPECT_EQ(report.findings_dropped, 0u);
  }
}

TEST(Threats, B5_KeyWithNulShadowsAlignment) {
  const std::string shadow("general.alignment\0x", 19);
  Document doc = document({{shadow, Value::u32(64), {}}});
  doc.tensors.push_back(tensor("a", {8}));
  doc.tensors.push_back(tensor("b", {24}));
  const Reports alone = hostile(write_bytes(doc));  // written with alignment 32
  EXPECT_TRUE(has_code(alone.strict, Code::InvalidKeyBytes));
  EXPECT_TRUE(fails(alone.strict));
  EXPECT_EQ(alone.strict.facts.alignment, 32u);  // a byte-exact reader: no alignment key
  // ggml looks keys up as C strings: the llama.cpp profile takes 64, and the layout that was
  // written for 32 breaks there.
  EXPECT_TRUE(has_code(alone.llama, Code::InvalidKeyBytes));
  EXPECT_EQ(alone.llama.facts.alignment, 64u);
  EXPECT_TRUE(fails(alone.llama)) << describe(alone.llama);

  // Next to the real key: two keys for ggml (it compares them byte for byte), and the lookup
  // finds the shadow first, so llama.cpp loads the file with alignment 64.
  const Reports both = hostile(write_bytes(
      document({{shadow, Value::u32(64), {}}, {"general.alignment", Value::u32(32), {}}})));
  EXPECT_TRUE(has_code(both.strict, Code::InvalidKeyBytes));
  EXPECT_FALSE(has_code(both.llama, Code::DuplicateKey)) << describe(both.llama);
  EXPECT_EQ(both.llama.facts.alignment, 64u);
}

TEST(Threats, B5_KeyWithControlOrNonAsciiBytes) {
  for (const std::string& key : {std::string("general.na\x01me"), std::string("general.name\x7f"),
                                 std::string("g\xc3\xa9n\xc3\xa9ral.name"),
                                 std::string("general.\x1b[31mname"), std::string("\0", 1)}) {
    SCOPED_TRACE(::testing::PrintToString(key));
    const Reports r = hostile(write_bytes(document({{key, Value::u32(1), {}}})));
    EXPECT_TRUE(has_code(r.strict, Code::InvalidKeyBytes));
    for (const Finding& f : r.strict.findings) EXPECT_TRUE(printable_ascii(f.message)) << f.message;
  }
}

TEST(Threats, B5_KeyOver65535Bytes) {
  for (const std::size_t length : {std::size_t{65536}, std::size_t{1} << 20}) {
    SCOPED_TRACE(length);
    const ByteVector bytes = write_bytes(document({{std::string(length, 'a'), Value::u8(1), {}}}));
    const Reports r = hostile(bytes);
    EXPECT_TRUE(has_code(r.strict, Code::KeyTooLong));
    // Messages show a bounded excerpt of untrusted bytes, not the whole key.
    for (const Finding& f : r.strict.findings) EXPECT_LT(f.message.size(), 1024u);
  }
  const Reports at_limit =
      hostile(write_bytes(document({{std::string(65535, 'a'), Value::u8(1), {}}})));
  EXPECT_TRUE(lacks_code(at_limit.strict, Code::KeyTooLong));
}

TEST(Threats, B6_InvalidUtf8) {
  {
    SCOPED_TRACE("key");
    const Reports r = hostile(write_bytes(document({{"general.\xff\xfe", Value::u8(1), {}}})));
    EXPECT_TRUE(has_code(r.strict, Code::InvalidKeyBytes));
  }
  for (const std::string& text : {std::string("\xc0\xaf"), std::string("ok\xed\xa0\x80"),
                                  std::string("\xf4\x90\x80\x80"), std::string("cut\xe2\x82")}) {
    SCOPED_TRACE(::testing::PrintToString(text));
    const Reports value =
        hostile(write_bytes(document({{"general.name", Value::string(text), {}}})));
    EXPECT_TRUE(has_code(value.strict, Code::InvalidUtf8));
    EXPECT_TRUE(has_code(value.spec, Code::InvalidUtf8));
    const Reports element = hostile(write_bytes(
        document({{"general.tags",
                   Value::array(ValueType::String, {Value::string("fine"), Value::string(text)}),
                   {}}})));
    EXPECT_TRUE(has_code(element.strict, Code::InvalidUtf8));
    const Reports name = hostile(write_bytes(document({}, {tensor("blk." + text, {8})})));
    EXPECT_TRUE(has_code(name.strict, Code::InvalidTensorNameBytes));
    EXPECT_TRUE(fails(name.strict));
  }
}

// =============================================================================================
// C: value types and arrays
// =============================================================================================

TEST(Threats, C1_UnknownValueType) {
  for (const std::uint32_t type : {13u, 14u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(type);
    KeyValue bad{"general.bad", Value::u32(1), type};
    const Document doc = document({bad, {"general.name", Value::string("after"), {}}});
    const Reports r = hostile(write_bytes(doc));
    ASSERT_TRUE(has_code(r.strict, Code::UnknownValueType));
    EXPECT_TRUE(has_code(r.llama, Code::UnknownValueType));
    EXPECT_TRUE(has_code(r.spec, Code::UnknownValueType));
    EXPECT_EQ(find(r.strict, Code::UnknownValueType)->offset,
              write(doc).layout.pairs[1].type_offset);
  }
  // Types 10..12 did not exist in version 1.
  Document v1 = document({{"general.size", Value::u64(1), {}}});
  v1.version = 1;
  EXPECT_TRUE(has_code(hostile(write_bytes(v1)).strict, Code::UnknownValueType));
}

TEST(Threats, C2_UnknownArrayElementType) {
  const Document doc = document(
      {{"general.list", Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)}), {}}});
  for (const std::uint32_t type : {13u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(type);
    const Reports r = hostile(with_array_type(doc, 1, type).bytes);
    EXPECT_TRUE(has_code(r.strict, Code::UnknownArrayType));
    EXPECT_TRUE(has_code(r.llama, Code::UnknownArrayType));
  }
}

TEST(Threats, C3_NestedArray) {
  const Document doc =
      document({{"general.nested",
                 Value::array(ValueType::Array, {Value::array(ValueType::Uint8, {Value::u8(1)}),
                                                 Value::array(ValueType::Uint8, {})}),
                 {}}});
  const Reports r = hostile(write_bytes(doc));
  EXPECT_TRUE(has_code(r.strict, Code::NestedArray));
  EXPECT_TRUE(has_code(r.llama, Code::NestedArray));
  EXPECT_TRUE(lacks_code(r.spec, Code::NestedArray));  // the spec text allows them
  EXPECT_TRUE(lacks_code(r.strict, Code::LimitExceeded));
}

TEST(Threats, C3_DeepNestingDoesNotOverflowTheStack) {
  // 100000 levels: a reader that recursed per level would need tens of MiB of stack.
  const ByteVector bytes = deeply_nested(100000);
  const Reports r = hostile(bytes);
  EXPECT_TRUE(has_code(r.strict, Code::NestedArray));
  EXPECT_TRUE(has_code(r.strict, Code::LimitExceeded));
  EXPECT_TRUE(has_code(r.llama, Code::NestedArray));
  EXPECT_TRUE(has_code(r.llama, Code::LimitExceeded));
  EXPECT_TRUE(has_code(r.spec, Code::LimitExceeded));
  // The largest depth limit the CLI accepts (--limit depth=1024) is safe too.
  Limits limits;
  limits.max_depth = 1024;
  const Reports deep_limit = hostile(bytes, kHostileBound, limits);
  EXPECT_TRUE(has_code(deep_limit.strict, Code::LimitExceeded));
  // Below the default limit nesting is reported, not limited.
  const Reports shallow = hostile(deeply_nested(10));
  EXPECT_TRUE(has_code(shallow.strict, Code::NestedArray));
  EXPECT_TRUE(lacks_code(shallow.strict, Code::LimitExceeded));
}

TEST(Threats, C4_ArrayCountWraps) {
  struct Case {
    const char* what;
    ValueType element;
    Value item;
    std::uint64_t count;
  };
  const std::vector<Case> cases = {
      {"uint32 x4 wraps to 4", ValueType::Uint32, Value::u32(1), 0x4000000000000001ULL},
      {"uint64 x8 wraps to 8", ValueType::Uint64, Value::u64(1), 0x2000000000000001ULL},
      {"uint16 x2 wraps to 2", ValueType::Uint16, Value::u16(1), 0x8000000000000001ULL},
      {"uint8 all ones", ValueType::Uint8, Value::u8(1), kMax64},
      {"float64 2^63", ValueType::Float64, Value::f64(1), kPow63},
      // count x 16 (a std::string per element, or length + pointer) wraps to 16
      {"string x16 wraps", ValueType::String, Value::string("a"), 0x1000000000000001ULL},
      {"string x8 wraps", ValueType::String, Value::string("a"), 0x2000000000000001ULL},
      {"array x12 wraps", ValueType::Array, Value::array(ValueType::Uint8, {}), kMax64 / 12 + 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Written written = with_array_count(
        document({{"general.list", Value::array(c.element, {c.item, c.item}), {}}}), 1, c.count);
    const Reports r = hostile(written.bytes);
    ASSERT_TRUE(has_code(r.strict, Code::ImpossibleArrayCount));
    EXPECT_TRUE(has_code(r.llama, Code::ImpossibleArrayCount));
    EXPECT_TRUE(has_code(r.spec, Code::ImpossibleArrayCount));
    EXPECT_EQ(find(r.strict, Code::ImpossibleArrayCount)->offset,
              written.layout.pairs[1].value_offset + 4);
  }
}

TEST(Threats, C4_ArrayCountJustAboveTheBytesLeft) {
  // The array is the last thing in the file: one element more than is there.
  for (const ValueType element : {ValueType::Uint8, ValueType::Uint32, ValueType::Float64}) {
    SCOPED_TRACE(to_string(element));
    const Value item = Value::integer(element, 1);
    const Reports r = hostile(
        with_array_count(
            document({{"general.list", Value::array(element, {item, item, item}), {}}}), 1, 4)
            .bytes);
    EXPECT_TRUE(has_code(r.strict, Code::ImpossibleArrayCount));
    EXPECT_TRUE(has_code(r.llama, Code::ImpossibleArrayCount));
  }
  // Strings: a count whose minimal size (8 bytes each) does not fit.
  const ByteVector strings =
      with_array_count(
          document({{"general.tags",
                     Value::array(ValueType::String, {Value::string(""), Value::string("")}),
                     {}}}),
          1, 3)
          .bytes;
  EXPECT_TRUE(has_code(hostile(strings).strict, Code::ImpossibleArrayCount));
  // A count that fits the minimal size, but whose strings run out: truncated, not impossible.
  const ByteVector longer =
      with_array_count(document({{"general.tags",
                                  Value::array(ValueType::String, {Value::string("abcdefgh"),
                                                                   Value::string("abcdefgh")}),
                                  {}}}),
                       1, 3)
          .bytes;
  const Reports r = hostile(longer);
  EXPECT_TRUE(fails(r.strict));
  EXPECT_TRUE(has(r.strict, Code::TruncatedMetadata) || has(r.strict, Code::TruncatedString))
      << describe(r.strict);
}

// --- C5: huge but present ----------------------------------------------------------------------

// 10^6 metadata pairs, 17 bytes each (8-byte length, a unique 4-character key, type, uint8):
// a 17 MB file that is valid and must validate.
const ByteVector& million_pairs() {
  static const ByteVector bytes = [] {
    constexpr std::uint64_t kPairs = 1000000;
    ByteVector out = write_bytes(minimal_document());
    patch<std::uint64_t>(out, 16, kPairs + 1);
    out.reserve(out.size() + kPairs * 17);
    constexpr char kDigits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (std::uint64_t i = 0; i < kPairs; ++i) {
      append_u64(out, 4);
      std::uint64_t n = i;
      for (int k = 0; k < 4; ++k) {
        out.push_back(static_cast<std::uint8_t>(kDigits[n % 36]));
        n /= 36;
      }
      append_u32(out, static_cast<std::uint32_t>(ValueType::Uint8));
      out.push_back(static_cast<std::uint8_t>(i));
    }
    return out;
  }();
  return bytes;
}

TEST(Threats, C5_MillionMetadataPairsValidate) {
  // A bound in the bytes present (every count here is true, so nothing is claimed beyond
  // them): the model keeps one record per pair (136-byte MetadataEntry, in a vector whose
  // growth briefly holds 1.5x) and the duplicate check one hash entry per key, 12.6x this file
  // as measured (214 MB). 24x the file (408 MB) leaves headroom for that design and still fails
  // on anything that copies keys or values per pair on top of it or grows superlinearly. The
  // design's own, tighter budget is the next test.
  const ByteVector& bytes = million_pairs();
  const Measured r = run(bytes, Profile::Strict);
  EXPECT_TRUE(passes(r.report));
  EXPECT_EQ(r.report.facts.kv_read, 1000001u);
  EXPECT_LE(r.peak, 24 * bytes.size()) << "validate() allocated " << r.peak << " bytes";
  expect_inside_file(r.report, bytes.size());
  const Measured llama = run(bytes, Profile::LlamaCpp);
  EXPECT_TRUE(passes(llama.report));
  EXPECT_LE(llama.peak, 24 * bytes.size());
}

TEST(Threats, C5_HundredMillionElementArray) {
  // 10^8 uint8 elements really present (100 MB): arrays are recorded, never materialised,
  // so validating it allocates no more than any small file.
  constexpr std::uint64_t kElements = 100000000;
  ByteVector bytes =
      with_array_count(document({{"general.blob", Value::array(ValueType::Uint8, {}), {}}}), 1,
                       kElements)
          .bytes;
  bytes.resize(bytes.size() + kElements, 0x5A);
  const Reports r = hostile(bytes);
  EXPECT_TRUE(passes(r.strict));
  EXPECT_TRUE(passes(r.llama));
  EXPECT_EQ(r.strict.facts.kv_read, 2u);
}

TEST(Threats, C5_MillionStringArray) {
  // 10^6 empty strings (8 MB) in one array: walked in place, nothing kept per element.
  constexpr std::uint64_t kElements = 1000000;
  ByteVector bytes =
      with_array_count(document({{"general.tags", Value::array(ValueType::String, {}), {}}}), 1,
                       kElements)
          .bytes;
  bytes.resize(bytes.size() + kElements * 8, 0);
  const Reports r = hostile(bytes);
  EXPECT_TRUE(passes(r.strict));
}

TEST(Threats, C5_GibibyteStringDeclaredButNotPresent) {
  // A 1 GiB string is too large for a unit test buffer. What matters for the threat (Ollama
  // CVE-2025-0315: memory sized by a declared length) is that the declared length is never
  // used to allocate: a string declaring 1 GiB + 1 bytes (just over ggml's limit) in a file of
  // a few hundred bytes is reported as truncated, allocating nothing in proportion to it.
  const StringSites sites = string_sites();
  for (const std::uint64_t site : {sites.key, sites.value, sites.element, sites.tensor_name}) {
    SCOPED_TRACE(site);
    expect_truncated_string_at(sites, site, kReferenceStringLimit + 1);
  }
}

TEST(Threats, C6_NonCanonicalBool) {
  const Written written =
      write(document({{"tokenizer.ggml.add_bos_token", Value::boolean(true), {}}}));
  for (unsigned byte = 2; byte <= 255; ++byte) {
    SCOPED_TRACE(byte);
    ByteVector bytes = written.bytes;
    bytes[written.layout.pairs[1].value_offset] = static_cast<std::uint8_t>(byte);
    const Reports r = hostile(bytes);
    ASSERT_TRUE(has_code(r.strict, Code::NonCanonicalBool));
    EXPECT_TRUE(has_code(r.spec, Code::NonCanonicalBool));
    EXPECT_TRUE(lacks_code(r.llama, Code::NonCanonicalBool));  // ggml reads it as true
    EXPECT_EQ(find(r.strict, Code::NonCanonicalBool)->offset, written.layout.pairs[1].value_offset);
  }
  // In an array: reported once, at the first bad element.
  const Written array =
      write(document({{"general.flags",
                       Value::array(ValueType::Bool, {Value::bool_byte(1), Value::bool_byte(0),
                                                      Value::bool_byte(2), Value::bool_byte(255)}),
                       {}}}));
  const Reports r = hostile(array.bytes);
  EXPECT_EQ(count_code(r.strict, Code::NonCanonicalBool), 1u) << describe(r.strict);
  ASSERT_TRUE(has_code(r.strict, Code::NonCanonicalBool));
  EXPECT_EQ(find(r.strict, Code::NonCanonicalBool)->offset,
            array.layout.pairs[1].value_offset + 12 + 2);
}

// =============================================================================================
// D: tensor infos
// =============================================================================================

Document three_tensors() {
  return document({}, {tensor("first", {8}), tensor("second", {16}), tensor("third", {8, 2})});
}

TEST(Threats, D1_UnreadableTensorNameFollowedByMoreTensors) {
  const Written written = write(three_tensors());
  const std::uint64_t site = written.layout.tensors[1].name_offset;
  for (const std::uint64_t length :
       {kMax64, kPow63, kReferenceStringLimit + 1, left_after_length(written.bytes, site) + 1}) {
    SCOPED_TRACE(::testing::Message() << "name length 0x" << std::hex << length);
    const Reports r = hostile(with_tensor_name_length(three_tensors(), 1, length).bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedString));
    EXPECT_TRUE(has_code(r.llama, Code::TruncatedString));
    EXPECT_EQ(r.strict.facts.tensors_read, 1u);
  }
  // Cut inside the second tensor info. With short names the bytes left cannot hold the
  // declared three infos at all (impossible-count comes first); with long names they can, and
  // the reader gets as far as the cut.
  for (const bool long_names : {false, true}) {
    const std::string pad = long_names ? std::string(40, 'x') : std::string();
    const Written cut =
        write(document({}, {tensor("first" + pad, {8}), tensor("second" + pad, {16}),
                            tensor("third" + pad, {8, 2})}));
    const WrittenTensor& second = cut.layout.tensors[1];
    {
      SCOPED_TRACE(::testing::Message()
                   << "the file ends inside the second name, long names " << long_names);
      const Reports r = hostile(prefix(cut.bytes, second.name_offset + 8 + 3));
      EXPECT_TRUE(has_code(r.strict, long_names ? Code::TruncatedString : Code::ImpossibleCount));
      EXPECT_TRUE(fails(r.llama));
    }
    {
      SCOPED_TRACE(::testing::Message() << "the file ends inside the second tensor's dims, long "
                                        << "names " << long_names);
      const Reports r = hostile(prefix(cut.bytes, second.dims_offset + 3));
      EXPECT_TRUE(
          has_code(r.strict, long_names ? Code::TruncatedTensorInfo : Code::ImpossibleCount));
      EXPECT_TRUE(fails(r.llama));
    }
  }
  // A wrong length that stays inside the file: the rest is read out of frame, and must still
  // give errors, not a crash.
  for (const std::uint64_t delta : {1u, 5u, 13u, 40u}) {
    SCOPED_TRACE(::testing::Message() << "name length +" << delta);
    const Written wrong =
        with_tensor_name_length(three_tensors(), 1, std::string("second").size() + delta);
    EXPECT_TRUE(fails(hostile(wrong.bytes).strict));
  }
}

TEST(Threats, D2_TensorNameOf64BytesAndMore) {
  for (const std::size_t length : {64u, 65u, 256u, 4096u}) {
    SCOPED_TRACE(length);
    const Reports r = hostile(write_bytes(document({}, {tensor(std::string(length, 'n'), {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::TensorNameTooLong));
    EXPECT_TRUE(has_code(r.llama, Code::TensorNameTooLong));
    if (length > 64) {
      EXPECT_TRUE(has_code(r.spec, Code::TensorNameTooLong));
    }
  }
  const Reports ok = hostile(write_bytes(document({}, {tensor(std::string(63, 'n'), {8})})));
  EXPECT_TRUE(lacks_code(ok.strict, Code::TensorNameTooLong));
  EXPECT_TRUE(passes(ok.strict));
}

TEST(Threats, D3_DuplicateEmptyAndNulNames) {
  const Reports same = hostile(write_bytes(document({}, {tensor("w", {8}), tensor("w", {8})})));
  EXPECT_TRUE(has_code(same.strict, Code::DuplicateTensorName));
  EXPECT_TRUE(has_code(same.llama, Code::DuplicateTensorName));

  const Reports empty = hostile(write_bytes(document({}, {tensor("", {8})})));
  EXPECT_TRUE(has_code(empty.strict, Code::EmptyTensorName));

  const Reports nul = hostile(write_bytes(
      document({}, {tensor(std::string("a\0b", 3), {8}), tensor(std::string("a\0c", 3), {8})})));
  EXPECT_TRUE(has_code(nul.strict, Code::DuplicateTensorName));
  EXPECT_TRUE(has_code(nul.strict, Code::InvalidTensorNameBytes));
  EXPECT_TRUE(has_code(nul.llama, Code::DuplicateTensorName));
  EXPECT_TRUE(has_code(nul.spec, Code::DuplicateTensorName));
}

TEST(Threats, D4_TooManyDims) {
  // Dims present: 5 .. 8 of them.
  for (std::size_t n = 5; n <= 8; ++n) {
    SCOPED_TRACE(n);
    const Reports r = hostile(write_bytes(
        document({}, {tensor("t", std::vector<std::uint64_t>(n, 2)), tensor("u", {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::TooManyDims));
    EXPECT_TRUE(has_code(r.llama, Code::TooManyDims));
  }
  // n_dims claims far more dims than the file holds (CVE-2024-21802): no billions of
  // iterations, no writes past 4 dims.
  const Document doc = document({}, {tensor("t", {8}), tensor("u", {8})});
  for (const std::uint32_t n_dims : {5u, 1000u, 0x10000u, 0x80000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(n_dims);
    const Reports r = hostile(with_n_dims(doc, 0, n_dims).bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TooManyDims));
    EXPECT_TRUE(fails(r.llama));
    if (n_dims >= 1000) {
      EXPECT_TRUE(has_code(r.strict, Code::TruncatedTensorInfo));
    }
  }
}

TEST(Threats, D5_NegativeDim) {
  for (const std::vector<std::uint64_t>& dims :
       {std::vector<std::uint64_t>{kMax64}, std::vector<std::uint64_t>{8, kMax64},
        std::vector<std::uint64_t>{8, 1, kPow63},
        std::vector<std::uint64_t>{32, 1, 1, kMax64 - 1}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const Reports r = hostile(write_bytes(document({}, {tensor("t", dims)})));
    EXPECT_TRUE(has_code(r.strict, Code::NegativeDim));
    EXPECT_TRUE(has_code(r.llama, Code::NegativeDim));
  }
}

TEST(Threats, D6_ZeroDim) {
  for (const std::vector<std::uint64_t>& dims :
       {std::vector<std::uint64_t>{8, 0}, std::vector<std::uint64_t>{8, 1, 0},
        std::vector<std::uint64_t>{8, 1, 1, 0}, std::vector<std::uint64_t>{0, 4}}) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    const Reports r = hostile(write_bytes(document({}, {tensor("t", dims), tensor("u", {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::ZeroDim));
    EXPECT_TRUE(fails(r.strict));
    ASSERT_TRUE(has_code(r.llama, Code::ZeroDim));  // a note there: the pinned reader loads it
    EXPECT_EQ(find(r.llama, Code::ZeroDim)->severity, Severity::Note);
  }
}

TEST(Threats, D7_ElementCountOverflow) {
  struct Case {
    const char* what;
    std::vector<std::uint64_t> dims;
  };
  const std::vector<Case> cases = {
      {"[2^32, 2^32] wraps to 0", {1ULL << 32, 1ULL << 32}},
      {"[2^62, 4] wraps to 0", {1ULL << 62, 4}},
      {"[4194305, 4194305, 211106198978564] wraps to 4", {4194305, 4194305, 211106198978564ULL}},
      {"[2^31, 2^32] = 2^63 overflows 63 bits", {1ULL << 31, 1ULL << 32}},
      {"[2^21, 2^21, 2^21] = 2^63", {1ULL << 21, 1ULL << 21, 1ULL << 21}},
      {"[3, 2^62 / 3 * 2] above 2^63", {3, (1ULL << 62) / 3 * 2 + 1}},
      {"[2^16, 2^16, 2^16, 2^16] wraps to 0", {1ULL << 16, 1ULL << 16, 1ULL << 16, 1ULL << 16}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Reports r = hostile(write_bytes(document({}, {tensor("t", c.dims), tensor("u", {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::ElementCountOverflow));
    EXPECT_TRUE(has_code(r.llama, Code::ElementCountOverflow));  // ggml 2026-08 accepts some
    EXPECT_TRUE(has_code(r.spec, Code::ElementCountOverflow));
  }
}

TEST(Threats, D8_UnknownOrRemovedTensorType) {
  for (const std::uint32_t type : {43u, 44u, 0xFFFFFFFFu, 0x80000000u, 0x40000000u}) {
    SCOPED_TRACE(type);
    const Reports r =
        hostile(write_bytes(document({}, {tensor("t", {8}, type), tensor("u", {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::UnknownTensorType));
    EXPECT_TRUE(has_code(r.llama, Code::UnknownTensorType));
  }
  for (const std::uint32_t type : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    SCOPED_TRACE(type);
    const Reports r =
        hostile(write_bytes(document({}, {tensor("t", {256}, type), tensor("u", {8})})));
    EXPECT_TRUE(has_code(r.strict, Code::RemovedTensorType));
    EXPECT_TRUE(has_code(r.llama, Code::RemovedTensorType));
  }
}

TEST(Threats, D9_RowNotBlockMultiple) {
  struct Case {
    std::uint32_t type;
    std::uint64_t ne0;
  };
  for (const Case c : {Case{2, 33}, Case{8, 16}, Case{12, 255}, Case{14, 257}, Case{41, 64},
                       Case{40, 32}, Case{34, 1}}) {
    SCOPED_TRACE(::testing::Message() << "type " << c.type << " ne[0] " << c.ne0);
    Document doc = document({}, {tensor("t", {c.ne0, 2}, c.type), tensor("u", {8})});
    doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
    const Reports r = hostile(write_bytes(doc));
    EXPECT_TRUE(has_code(r.strict, Code::RowNotBlockMultiple));
    EXPECT_TRUE(has_code(r.llama, Code::RowNotBlockMultiple));
  }
}

TEST(Threats, D10_ByteSizeOverflowWhileElementCountFits) {
  struct Case {
    const char* what;
    std::uint32_t type;
    std::vector<std::uint64_t> dims;
  };
  const std::vector<Case> cases = {
      // 8 x (2^61 + 2^19) = 2^64 + 4 MiB: the exabyte tensor that wraps to 4 MB (CVE-2026-33298)
      {"I64 wraps to 4 MiB", 27, {0x2000000000080000ULL}},
      {"F32 2^62 elements", 0, {1ULL << 62}},
      {"F64 [2^31, 2^30]", 28, {1ULL << 31, 1ULL << 30}},
      {"I32 [2^31, 2^31]: 2^62 elements, 2^64 bytes", 26, {1ULL << 31, 1ULL << 31}},
      {"I64 [2^60, 3]: 3 x 2^63 bytes", 27, {1ULL << 60, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Document doc = document({}, {tensor("t", c.dims, c.type), tensor("u", {8})});
    doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
    const Reports r = hostile(write_bytes(doc));
    EXPECT_TRUE(lacks_code(r.strict, Code::ElementCountOverflow));
    EXPECT_TRUE(has_code(r.strict, Code::ByteSizeOverflow));
    EXPECT_TRUE(has_code(r.llama, Code::ByteSizeOverflow));
    EXPECT_TRUE(has_code(r.spec, Code::ByteSizeOverflow));
  }
}

// =============================================================================================
// E: layout and data
// =============================================================================================

TEST(Threats, E1_PaddedSizesWhoseSumOverflows) {
  // Three I8 tensors of 0x6000000000000000 bytes at their running offsets: the third ends
  // past 2^64 (CVE-2025-53630).
  const ByteVector bytes = write_bytes(document(
      {}, {tensor("a", {0x6000000000000000ULL}, 24), tensor("b", {0x6000000000000000ULL}, 24),
           tensor("c", {0x6000000000000000ULL}, 24)}));
  const Reports r = hostile(bytes);
  EXPECT_TRUE(has_code(r.strict, Code::ByteSizeOverflow));
  EXPECT_TRUE(has_code(r.llama, Code::ByteSizeOverflow));
  EXPECT_TRUE(has_code(r.strict, Code::TensorOutOfBounds));
}

TEST(Threats, E1_PaddedSizesWhoseSumOverflowsAtOffsetZero) {
  // Two F32 tensors of 0x9000000000000000 bytes each, both claiming offset 0: each padded
  // size fits, their sum (what ggml adds up for its context size) does not. The catalogue's
  // byte-size-overflow covers "the running sum of padded sizes".
  Tensor a = tensor("a", {0x2400000000000000ULL});
  Tensor b = tensor("b", {0x2400000000000000ULL});
  a.offset = 0;
  b.offset = 0;
  const Reports r = hostile(write_bytes(document({}, {a, b})));
  EXPECT_TRUE(fails(r.strict));
  EXPECT_TRUE(has_code(r.strict, Code::ByteSizeOverflow));
  EXPECT_TRUE(has_code(r.llama, Code::ByteSizeOverflow));
}

TEST(Threats, E2_PaddingToTheAlignmentWraps) {
  struct Case {
    const char* what;
    std::uint32_t type;
    std::vector<std::uint64_t> dims;
  };
  const std::vector<Case> cases = {
      {"I64: 0xFFFFFFFFFFFFFFE8 bytes, padded to 32 wraps to 0", 27, {0x1FFFFFFFFFFFFFFDULL}},
      {"F32: 0xFFFFFFFFFFFFFFFC bytes", 0, {0x3FFFFFFFFFFFFFFFULL}},
      {"I8: 2^63 - 1 bytes x2 dims", 24, {0x7FFFFFFFFFFFFFFFULL, 1}},
      {"F16 [3, 0x2AAAAAAAAAAAAAAA]: 0xFFFFFFFFFFFFFFFC bytes", 1, {3, 0x2AAAAAAAAAAAAAAAULL}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Reports r =
        hostile(write_bytes(document({}, {tensor("t", c.dims, c.type), tensor("u", {8})})));
    EXPECT_TRUE(fails(r.strict));
    if (c.dims[0] != 0x7FFFFFFFFFFFFFFFULL) {
      EXPECT_TRUE(has_code(r.strict, Code::ByteSizeOverflow));
      EXPECT_TRUE(has_code(r.llama, Code::ByteSizeOverflow));
    } else {
      // 2^63 - 1 bytes pads to 2^63 without wrapping: far out of bounds instead.
      EXPECT_TRUE(has_code(r.strict, Code::TensorOutOfBounds));
    }
  }
}

TEST(Threats, E3_TwoHugeTensorsBackedBy32Bytes) {
  // Two I8 tensors of 0x7FFFFFFFFFFFFFC0 elements, 32 bytes of data (CVE-2026-27940).
  Tensor a = tensor("a", {0x7FFFFFFFFFFFFFC0ULL}, 24);
  a.data = std::vector<std::uint8_t>(32, 0);
  Tensor b = tensor("b", {0x7FFFFFFFFFFFFFC0ULL}, 24);
  b.data = std::vector<std::uint8_t>();
  const Reports r = hostile(write_bytes(document({}, {a, b})));
  EXPECT_EQ(count_code(r.strict, Code::TensorOutOfBounds), 2u) << describe(r.strict);
  EXPECT_TRUE(has_code(r.llama, Code::TensorOutOfBounds));
  // The same two, both at offset 0 over the same 32 bytes.
  b.offset = 0;
  const Reports same = hostile(write_bytes(document({}, {a, b})));
  EXPECT_EQ(count_code(same.strict, Code::TensorOutOfBounds), 2u) << describe(same.strict);
  EXPECT_TRUE(fails(same.llama));
}

TEST(Threats, E4_TensorDataPastTheEndOfTheFile) {
  const Written written = write(model_document());
  {
    SCOPED_TRACE("the file ends inside the last tensor's data");
    const WrittenTensor& last = written.layout.tensors.back();
    const Reports r = hostile(prefix(written.bytes, last.data_position + last.nbytes / 2));
    EXPECT_TRUE(has_code(r.strict, Code::TensorOutOfBounds));
    EXPECT_TRUE(has_code(r.llama, Code::TensorOutOfBounds));
  }
  const std::uint64_t data_size = written.bytes.size() - written.layout.data_start;
  for (const std::uint64_t offset :
       {data_size, data_size + 32, std::uint64_t{1} << 40, kPow63, kMax64 - 31}) {
    SCOPED_TRACE(::testing::Message() << "last tensor at offset 0x" << std::hex << offset);
    ByteVector bytes = written.bytes;
    patch<std::uint64_t>(bytes, written.layout.tensors.back().offset_offset, offset);
    const Reports r = hostile(bytes);
    EXPECT_TRUE(has_code(r.strict, Code::TensorOutOfBounds));
    EXPECT_TRUE(has_code(r.llama, Code::TensorOutOfBounds));
  }
}

TEST(Threats, E5_MisalignedOffsets) {
  for (const std::uint64_t offset : {1u, 16u, 33u, 48u}) {
    SCOPED_TRACE(offset);
    const Reports r = hostile(two_tensors_at(0, offset, 128));
    EXPECT_TRUE(has_code(r.strict, Code::MisalignedOffset));
    EXPECT_TRUE(has_code(r.llama, Code::MisalignedOffset));
  }
}

TEST(Threats, E5_GapBetweenTensors) {
  const Reports r = hostile(two_tensors_at(0, 64, 96));
  EXPECT_TRUE(has_code(r.strict, Code::NonContiguousLayout));
  EXPECT_TRUE(has_code(r.llama, Code::NonContiguousLayout));
  EXPECT_TRUE(lacks_code(r.strict, Code::OverlappingTensors));
  EXPECT_TRUE(lacks_code(r.strict, Code::TensorOutOfBounds));
}

TEST(Threats, E5_OverlappingTensors) {
  for (const std::uint64_t second : {std::uint64_t{0}}) {
    const Reports r = hostile(two_tensors_at(0, second, 64));
    EXPECT_TRUE(has_code(r.strict, Code::OverlappingTensors));
    EXPECT_TRUE(has_code(r.llama, Code::OverlappingTensors));
  }
  // Partial overlap: a 64-byte tensor and a 32-byte one starting inside it.
  Tensor a = tensor("a", {16});
  Tensor b = tensor("b", {8});
  b.offset = 32;
  a.data = std::vector<std::uint8_t>(96, 0);
  b.data = std::vector<std::uint8_t>();
  const Reports r = hostile(write_bytes(document({}, {a, b})));
  EXPECT_TRUE(has_code(r.strict, Code::OverlappingTensors));
}

TEST(Threats, E5_OutOfOrder) {
  const Reports r = hostile(two_tensors_at(32, 0, 64));
  EXPECT_TRUE(has_code(r.strict, Code::NonContiguousLayout));
  EXPECT_TRUE(has_code(r.llama, Code::NonContiguousLayout));
  EXPECT_TRUE(lacks_code(r.strict, Code::OverlappingTensors));
  EXPECT_TRUE(lacks_code(r.strict, Code::TensorOutOfBounds));
}

TEST(Threats, E5_OffsetAllOnes) {
  const Reports r = hostile(two_tensors_at(0, kMax64, 64));
  EXPECT_TRUE(has_code(r.strict, Code::MisalignedOffset));
  EXPECT_TRUE(has_code(r.strict, Code::TensorOutOfBounds));
  EXPECT_TRUE(has_code(r.llama, Code::TensorOutOfBounds));
  // Aligned, so only the end wraps: offset + size past 2^64.
  const Reports aligned = hostile(two_tensors_at(0, kMax64 - 31, 64));
  EXPECT_TRUE(lacks_code(aligned.strict, Code::MisalignedOffset));
  EXPECT_TRUE(has_code(aligned.strict, Code::TensorOutOfBounds));
}

TEST(Threats, E6_NonZeroPadding) {
  Document doc = document({}, {tensor("a", {3}), tensor("b", {5})});  // 12 and 20 bytes
  WriteOptions options;
  options.padding_byte = 0xAA;
  const Reports all = hostile(write_bytes(doc, options));
  EXPECT_TRUE(has_code(all.strict, Code::NonzeroPadding));
  EXPECT_TRUE(fails(all.strict));
  EXPECT_TRUE(lacks_code(all.llama, Code::NonzeroPadding));
  // One byte hidden in the padding after the first tensor.
  const Written written = write(doc);
  ByteVector bytes = written.bytes;
  const std::uint64_t hidden = written.layout.tensors[0].data_position + 12 + 5;
  bytes.at(hidden) = 0x41;
  const Reports one = hostile(bytes);
  ASSERT_TRUE(has_code(one.strict, Code::NonzeroPadding));
  EXPECT_EQ(find(one.strict, Code::NonzeroPadding)->offset, hidden);
  // A byte hidden in the padding before the data section.
  ASSERT_LT(written.layout.infos_end, written.layout.data_start);
  bytes = written.bytes;
  bytes.at(written.layout.infos_end) = 0x41;
  EXPECT_TRUE(has_code(hostile(bytes).strict, Code::NonzeroPadding));
  // In a file without tensors padded by ggml's writer.
  WriteOptions padded;
  padded.pad_when_no_tensors = true;
  padded.padding_byte = 0x41;
  const Written no_tensors = write(minimal_document(), padded);
  ASSERT_LT(no_tensors.layout.infos_end, no_tensors.bytes.size());
  EXPECT_TRUE(has_code(hostile(no_tensors.bytes).strict, Code::NonzeroPadding));
}

TEST(Threats, E6_MissingFinalPadding) {
  WriteOptions options;
  options.pad_after_last_tensor = false;
  const Reports r =
      hostile(write_bytes(document({}, {tensor("a", {8}), tensor("b", {3})}), options));
  EXPECT_TRUE(has_code(r.strict, Code::MissingFinalPadding));
  EXPECT_TRUE(lacks_code(r.strict, Code::TensorOutOfBounds));
  EXPECT_TRUE(passes(r.llama));  // llama.cpp checks the unpadded end only
}

TEST(Threats, E6_TrailingBytes) {
  WriteOptions options;
  options.trailing = ByteVector(1000, 0x42);
  const Reports r = hostile(write_bytes(model_document(), options));
  EXPECT_TRUE(has_code(r.strict, Code::TrailingBytes));
  EXPECT_TRUE(passes(r.llama));
  // After the last pair of a file without tensors.
  const Reports none = hostile(write_bytes(minimal_document(), options));
  EXPECT_TRUE(has_code(none.strict, Code::TrailingBytes));
}

// =============================================================================================
// F: general.alignment
// =============================================================================================

TEST(Threats, F1_AlignmentWrongType) {
  const std::vector<std::pair<const char*, Value>> values = {
      {"int32", Value::i32(32)},
      {"uint16", Value::u16(32)},
      {"uint64", Value::u64(32)},
      {"int64", Value::i64(32)},
      {"uint8", Value::u8(32)},
      {"float32", Value::f32(32)},
      {"bool", Value::boolean(true)},
      {"string", Value::string("32")},
      {"array of one uint32", Value::array(ValueType::Uint32, {Value::u32(32)})},
  };
  for (const auto& [what, value] : values) {
    SCOPED_TRACE(what);
    const Reports r = hostile(write_bytes(with_alignment(value)));
    EXPECT_TRUE(has_code(r.strict, Code::AlignmentWrongType));
    EXPECT_TRUE(has_code(r.llama, Code::AlignmentWrongType));  // llama.cpp 2025-02 aborted
    EXPECT_TRUE(has_code(r.spec, Code::AlignmentWrongType));
    EXPECT_EQ(r.strict.facts.alignment, 32u);
  }
}

TEST(Threats, F2_AlignmentZero) {
  const Reports r = hostile(write_bytes(with_alignment(Value::u32(0))));
  EXPECT_TRUE(has_code(r.strict, Code::AlignmentZero));
  EXPECT_TRUE(has_code(r.llama, Code::AlignmentZero));
  EXPECT_TRUE(has_code(r.spec, Code::AlignmentZero));
}

TEST(Threats, F2_AlignmentNotAPowerOfTwo) {
  for (const std::uint32_t alignment : {13u, 48u, 3u, 24u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(alignment);
    Document doc = with_alignment(Value::u32(alignment));
    WriteOptions options;
    if (alignment > 65536) options.alignment = 32;  // keep the file small
    const Reports r = hostile(write_bytes(doc, options));
    EXPECT_TRUE(has_code(r.strict, Code::AlignmentNotPowerOfTwo));
    EXPECT_TRUE(has_code(r.llama, Code::AlignmentNotPowerOfTwo));
    if (alignment % 8 != 0) {
      EXPECT_TRUE(has_code(r.strict, Code::AlignmentNotMultipleOf8));
      EXPECT_TRUE(has_code(r.spec, Code::AlignmentNotMultipleOf8));
    } else {
      EXPECT_TRUE(lacks_code(r.strict, Code::AlignmentNotMultipleOf8));
    }
  }
}

TEST(Threats, F2_AlignmentBelow8) {
  for (const std::uint32_t alignment : {1u, 2u, 4u}) {
    SCOPED_TRACE(alignment);
    const Reports r = hostile(write_bytes(with_alignment(Value::u32(alignment))));
    EXPECT_TRUE(has_code(r.strict, Code::AlignmentNotMultipleOf8));
    EXPECT_TRUE(has_code(r.spec, Code::AlignmentNotMultipleOf8));
    EXPECT_TRUE(lacks_code(r.strict, Code::AlignmentNotPowerOfTwo));
  }
}

TEST(Threats, F3_HugeAlignment) {
  for (const std::uint32_t alignment : {0x80000000u, 0x40000000u, 0x20000u}) {
    SCOPED_TRACE(alignment);
    // The claimed padding (up to 2 GiB) is not written: the writer pads to 32, and the data
    // section the alignment demands starts far past the end of the file.
    WriteOptions options;
    options.alignment = 32;
    const Reports r = hostile(write_bytes(with_alignment(Value::u32(alignment)), options));
    EXPECT_TRUE(has_code(r.strict, Code::AlignmentTooLarge));
    EXPECT_TRUE(has_code(r.strict, Code::TruncatedBeforeData));
    EXPECT_TRUE(has_code(r.llama, Code::TruncatedBeforeData));
    EXPECT_TRUE(has_code(r.spec, Code::TruncatedBeforeData));
    EXPECT_EQ(r.strict.facts.alignment, alignment);
    // Without tensors there is no data section: only the policy warning.
    const Reports none =
        hostile(write_bytes(document({{"general.alignment", Value::u32(alignment), {}}})));
    EXPECT_TRUE(has_code(none.strict, Code::AlignmentTooLarge));
    EXPECT_TRUE(passes(none.strict));
    EXPECT_TRUE(passes(none.llama));
  }
  // Tensor offsets that are multiples of 2^31: the padding arithmetic must not wrap.
  Document doc = with_alignment(Value::u32(0x80000000u));
  doc.tensors[1].offset = 0x80000000ULL * 0xFFFFFFFFULL;
  WriteOptions options;
  options.alignment = 32;
  const Reports r = hostile(write_bytes(doc, options));
  EXPECT_TRUE(has_code(r.strict, Code::AlignmentTooLarge));
  EXPECT_TRUE(fails(r.strict));
}

}  // namespace
}  // namespace ggufcheck::testing

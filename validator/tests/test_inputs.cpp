// How inputs are read: a file that shrinks while it is read, streams read in bounded chunks (the
// report of `cat f | ggufcheck -` is that of `ggufcheck f`), /dev/zero, an allocation failure on
// one input. A program of its own: it replaces the global allocator to fail on demand
// (counting_allocator's g_refuse_from_bytes).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "counting_allocator.hpp"
#include "test_support.hpp"
#include "validate/validate.hpp"

namespace fs = std::filesystem;

namespace ggufcheck::testing {
namespace {

using json = nlohmann::json;

// The JSON report without the input's name, so that a file and a stream compare.
json without_paths(const std::string& text) {
  json doc = json::parse(text);
  for (json& file : doc["files"]) file.erase("path");
  return doc;
}

// --- a file that changes while it is read ----------------------------------------------------

ByteVector large_metadata_file() {
  std::vector<Value> tokens;
  for (int i = 0; i < 200000; ++i) tokens.push_back(Value::string("token-" + std::to_string(i)));
  return write_bytes(
      document({pair("tokenizer.ggml.tokens", Value::array(ValueType::String, tokens))},
               {with_data(tensor("w", {1024}), 4096)}));
}

TEST(ChangingFile, ShrunkWhileMappedIsReportedNotASignal) {
  const TempDir scratch;
  const fs::path path = scratch.write("shrinks.gguf", large_metadata_file());
  Report report;
  // The file is cut to 100 bytes after it is mapped and before a byte of it is read: every page
  // past the first faults. The handler lets the read go on; the input is then unreadable.
  const auto error = detail::with_input(path.string(), [&](const detail::Input& input) {
    ASSERT_EQ(::truncate(path.c_str(), 100), 0);
    report = detail::validate_input(input, nullptr, Options{}, path.string());
  });
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.why().find("changed while being read"), std::string::npos) << error.why();
  EXPECT_NE(error.why().find("it is now 100"), std::string::npos) << error.why();
}

TEST(ChangingFile, ModifiedInPlaceIsReported) {
  const TempDir scratch;
  const fs::path path = scratch.write("modified.gguf", large_metadata_file());
  const auto error = detail::with_input(path.string(), [&](const detail::Input&) {
    // A later modification time with the same size: rewritten in place.
    struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  });
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.why().find("modified in place"), std::string::npos) << error.why();
}

// The CLI while another process cuts the file at random sizes, many times: never a signal,
// always one of the verdicts (a cut before the read is a truncated file, exit 1; one during it
// is exit 2).
TEST(ChangingFile, TruncatedDuringValidationManyTimesNeverKillsTheProcess) {
  const TempDir scratch;
  const ByteVector bytes = large_metadata_file();
  std::mt19937_64 random(20261201);
  int unreadable = 0;
  for (int round = 0; round < 40; ++round) {
    const fs::path path = scratch.write("cut.gguf", bytes);
    const pid_t cutter = ::fork();
    if (cutter == 0) {
      const auto size = static_cast<off_t>(random() % bytes.size());
      for (int i = 0; i < 200; ++i) ::sched_yield();
      ::_exit(::truncate(path.c_str(), size) == 0 ? 0 : 1);
    }
    random();  // the child drew one number
    const CliRun run = run_cli({"--quiet", path.string()});
    int cut_status = 0;
    ::waitpid(cutter, &cut_status, 0);
    ASSERT_EQ(run.signal, 0) << "round " << round;
    ASSERT_TRUE(run.status == 0 || run.status == 1 || run.status == 2)
        << "round " << round << " exit " << run.status;
    if (run.status == 2) ++unreadable;
  }
  RecordProperty("unreadable_rounds", unreadable);
}

// --- streams -----------------------------------------------------------------------------------

TEST(Streams, DevZeroStopsAtTheMagic) {
  const CliRun run = run_cli({"--format", "json", "/dev/zero"});
  ASSERT_EQ(run.signal, 0);
  EXPECT_EQ(run.status, 1);
  const json doc = json::parse(run.out);
  ASSERT_EQ(doc["files"].size(), 1U);
  EXPECT_EQ(doc["files"][0]["findings"][0]["code"], "GGUF1002");
}

TEST(Streams, DumpOfDevZeroStopsAtTheMagic) {
  const CliRun run = run_cli({"dump", "/dev/zero"});
  ASSERT_EQ(run.signal, 0);
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(json::parse(run.out)["errors"][0]["code"], "GGUF1002");
}

TEST(Streams, EveryExampleAndCorpusFileReportsAsItsFile) {
  std::vector<fs::path> files;
  for (const char* dir : {"examples", "corpus"}) {
    for (const auto& entry :
         fs::recursive_directory_iterator(fs::path(GGUFCHECK_SOURCE_DIR) / dir)) {
      // Not the split-set codes' examples: a stream is a file alone, with no name to find a
      // set by and without the split-set checks (docs/inputs.md, "Split sets").
      if (entry.path().string().find("/codes/GGUF80") != std::string::npos) continue;
      if (entry.path().extension() == ".gguf" && entry.is_regular_file())
        files.push_back(entry.path());
    }
  }
  ASSERT_GT(files.size(), 50U);
  // Sorted, so that the sample taken under ASan is the same on every machine.
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i < files.size(); i += kCommandRunStride) {
    const fs::path& file = files[i];
    const CliRun direct = run_cli({"--format", "json", file.string()});
    const CliRun piped = run_cli({"--format", "json", "-"}, file.string());
    ASSERT_EQ(piped.signal, 0) << file;
    EXPECT_EQ(direct.status, piped.status) << file;
    EXPECT_EQ(without_paths(direct.out), without_paths(piped.out)) << file;
  }
}

// A file whose tensor data is past the window a stream keeps: header, two I8 tensors of
// 2^31 - 5 and 8 bytes, a non-zero padding byte after the first, far past the window. Sparse.
struct SparseModel {
  fs::path path;
  std::uint64_t padding_byte = 0;
};

SparseModel sparse_model(const TempDir& scratch, std::uint64_t first_size) {
  constexpr std::uint32_t kI8 = 24;
  Document doc = document(
      {quantization_version()},
      {tensor("a", {first_size}, kI8, 0), tensor("b", {8}, kI8, (first_size + 31) / 32 * 32)});
  for (Tensor& t : doc.tensors) t.data = std::vector<std::uint8_t>{};
  ByteVector bytes = write_bytes(doc);
  // The writer wrote the infos and no data (each tensor's data is given, empty): the data
  // section starts at the aligned end of what it wrote.
  const std::uint64_t data_start = (bytes.size() + 31) / 32 * 32;
  bytes.resize(data_start, 0);
  const fs::path path = scratch.write("sparse.gguf", bytes);
  const std::uint64_t total = data_start + (first_size + 31) / 32 * 32 + 32;
  EXPECT_EQ(::truncate(path.c_str(), static_cast<off_t>(total)), 0);
  SparseModel model{path, data_start + first_size + 1};
  const int fd = ::open(path.c_str(), O_WRONLY);
  const std::uint8_t one = 0x5a;
  EXPECT_EQ(::pwrite(fd, &one, 1, static_cast<off_t>(model.padding_byte)), 1);
  ::close(fd);
  return model;
}

TEST(Streams, TwoGibModelThroughAPipeReportsAsItsFileInBoundedMemory) {
  const TempDir scratch;
  const SparseModel model = sparse_model(scratch, (std::uint64_t{1} << 31) - 5);
  const CliRun direct = run_cli({"--format", "json", model.path.string()});
  const CliRun piped = run_cli({"--format", "json", "-"}, model.path.string());
  // The same CLI on a tiny file through a pipe: what the process needs whatever the input.
  const CliRun baseline =
      run_cli({"--format", "json", "-"},
              (fs::path(GGUFCHECK_SOURCE_DIR) / "examples/valid/tiny-llama.gguf").string());
  ASSERT_EQ(piped.signal, 0);
  ASSERT_EQ(direct.status, 1) << direct.out;
  EXPECT_EQ(piped.status, direct.status);
  const json report = without_paths(piped.out);
  EXPECT_EQ(report, without_paths(direct.out));
  // The padding byte far past the window was seen as the stream passed.
  bool padding_found = false;
  for (const json& f : report["files"][0]["findings"]) {
    if (f["code"] == "GGUF4005" && f["offset"] == model.padding_byte) padding_found = true;
  }
  EXPECT_TRUE(padding_found) << piped.out;
  EXPECT_EQ(report["files"][0]["facts"]["file_size"].get<std::uint64_t>(),
            fs::file_size(model.path));
  // The metadata is a few hundred bytes: the window (64 MiB) and the read chunk bound the rest.
  const long growth_kib = piped.max_rss_kib - baseline.max_rss_kib;
  RecordProperty("peak_rss_kib", static_cast<int>(piped.max_rss_kib));
  RecordProperty("baseline_rss_kib", static_cast<int>(baseline.max_rss_kib));
  EXPECT_LE(growth_kib, 64 * 1024 + 8 * 1024)
      << "peak " << piped.max_rss_kib << " KiB, baseline " << baseline.max_rss_kib << " KiB";
}

// A 4 GiB file with general.alignment = 2^31, 8 KiB on disk: the padding check reads the
// file's holes as zeros without faulting them in, so neither the time nor the memory follows the
// file's apparent size; a non-zero byte after the hole is still found.
TEST(SparseFiles, AHugeAlignmentCostsNeitherTimeNorMemory) {
  const TempDir scratch;
  constexpr std::uint64_t kAlignment = std::uint64_t{1} << 31;
  constexpr std::uint32_t kI8 = 24;
  constexpr std::uint64_t kTensorBytes = kAlignment - 100;
  // Written with alignment 32 and no data, then given its real alignment: the writer would
  // write the 2 GiB of padding, and the file must have a hole there instead.
  Document doc =
      document({pair("general.alignment", Value::u32(32))}, {tensor("t", {kTensorBytes}, kI8, 0)});
  doc.tensors[0].data = std::vector<std::uint8_t>{};
  const Written written = write(doc);
  ByteVector bytes = written.bytes;
  const std::uint64_t value_at = written.layout.pairs.back().value_offset;
  const std::uint32_t alignment_value = 1U << 31;
  std::memcpy(bytes.data() + value_at, &alignment_value, 4);
  const fs::path path = scratch.write("aligned.gguf", bytes);
  // The data at 2^31, then its padding to 2^32, with one byte in it that must be reported.
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(2 * kAlignment)), 0);
  const std::uint64_t planted = kAlignment + kTensorBytes + 7;
  const int fd = ::open(path.c_str(), O_WRONLY);
  const std::uint8_t byte = 0x5a;
  EXPECT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(planted)), 1);
  ::close(fd);
  const CliRun run = run_cli({"--format", "json", path.string()});
  const CliRun baseline =
      run_cli({"--format", "json",
               (fs::path(GGUFCHECK_SOURCE_DIR) / "examples/valid/tiny-llama.gguf").string()});
  ASSERT_EQ(run.signal, 0);
  ASSERT_EQ(run.status, 1) << run.out;
  const json report = json::parse(run.out);
  bool padding_found = false;
  for (const json& f : report["files"][0]["findings"]) {
    if (f["code"] == "GGUF4005" && f["offset"] == planted) padding_found = true;
  }
  EXPECT_TRUE(padding_found) << run.out;
  RecordProperty("peak_rss_kib", static_cast<int>(run.max_rss_kib));
  EXPECT_LE(run.max_rss_kib - baseline.max_rss_kib, 16 * 1024)
      << "peak " << run.max_rss_kib << " KiB, baseline " << baseline.max_rss_kib << " KiB";
}

// --- the input's bulk reads ------------------------------------------------------------------

// A mapped file of 8 MiB: data in its first page and at 6 MiB + 5, a hole between.
struct HoleyFile {
  fs::path path;
  int fd = -1;
  void* data = nullptr;
  std::size_t size = std::size_t{8} << 20;
  static constexpr std::uint64_t kLate = (std::uint64_t{6} << 20) + 5;
  explicit HoleyFile(const TempDir& scratch) : path(scratch.write("holey.bin", ByteVector(16, 0))) {
    fd = ::open(path.c_str(), O_RDWR);
    const std::uint8_t early = 0x11;
    const std::uint8_t late = 0x22;
    (void)::pwrite(fd, &early, 1, 9);
    (void)::pwrite(fd, &late, 1, static_cast<off_t>(kLate));
    (void)::ftruncate(fd, static_cast<off_t>(size));
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  ~HoleyFile() {
    ::munmap(data, size);
    ::close(fd);
  }
  HoleyFile(const HoleyFile&) = delete;
  HoleyFile& operator=(const HoleyFile&) = delete;
  [[nodiscard]] detail::Input input(bool with_fd) const {
    return detail::Input(Bytes(static_cast<const std::uint8_t*>(data), size), with_fd ? fd : -1);
  }
};

TEST(InputBulkReads, FindTheFirstNonZeroByteWithAndWithoutTheDescriptor) {
  const TempDir scratch;
  const HoleyFile file(scratch);
  ASSERT_NE(file.data, MAP_FAILED);
  for (const bool with_fd : {false, true}) {
    SCOPED_TRACE(with_fd);
    const detail::Input input = file.input(with_fd);
    EXPECT_EQ(input.first_nonzero(0, file.size),
              std::make_pair(std::uint64_t{9}, std::uint8_t{0x11}));
    EXPECT_EQ(input.first_nonzero(10, file.size),
              std::make_pair(HoleyFile::kLate, std::uint8_t{0x22}));
    EXPECT_FALSE(input.first_nonzero(10, HoleyFile::kLate).has_value());
    EXPECT_FALSE(input.first_nonzero(HoleyFile::kLate + 1, UINT64_MAX).has_value());
    EXPECT_FALSE(input.first_nonzero(file.size, 2 * file.size).has_value());  // clipped
  }
}

TEST(InputBulkReads, HandEveryByteOverInOrderHolesAsZeros) {
  const TempDir scratch;
  const HoleyFile file(scratch);
  ASSERT_NE(file.data, MAP_FAILED);
  const detail::Input input = file.input(true);
  std::uint64_t next = 3;
  std::uint64_t sum = 0;
  std::size_t largest = 0;
  const bool all = input.chunks(3, UINT64_MAX, [&](std::uint64_t at, std::string_view chunk) {
    EXPECT_EQ(at, next);
    next = at + chunk.size();
    largest = std::max(largest, chunk.size());
    for (const char c : chunk) sum += static_cast<unsigned char>(c);
    return true;
  });
  EXPECT_TRUE(all);
  EXPECT_EQ(next, file.size);  // clipped to the input
  EXPECT_EQ(sum, 0x11U + 0x22U);
  EXPECT_LE(largest, detail::Input::kChunk);
  // A visitor that stops: no further chunk.
  int calls = 0;
  EXPECT_FALSE(
      input.chunks(0, file.size, [&](std::uint64_t, std::string_view) { return ++calls < 2; }));
  EXPECT_EQ(calls, 2);
}

TEST(InputBulkReads, ViewsAndNumbersOutsideTheInputAreRefused) {
  const std::vector<std::uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const detail::Input input(Bytes(bytes.data(), bytes.size()));
  std::string_view out;
  EXPECT_TRUE(input.view(1, 8, out));
  EXPECT_EQ(out.size(), 8U);
  EXPECT_FALSE(input.view(2, 8, out));
  EXPECT_FALSE(input.view(10, 0, out));
  EXPECT_FALSE(input.view(1, UINT64_MAX, out));
  EXPECT_EQ(input.number_at(1, 8, Endian::Little), 0x0908070605040302ULL);
  EXPECT_EQ(input.number_at(1, 8, Endian::Big), 0x0203040506070809ULL);
  EXPECT_FALSE(input.number_at(2, 8, Endian::Little).has_value());
  EXPECT_FALSE(input.number_at(UINT64_MAX, 1, Endian::Little).has_value());
  EXPECT_EQ(input.prefix(100).size(), bytes.size());
}

// --- an allocation failure is a finding on its input -------------------------------------------

TEST(AllocationFailure, IsAFindingOnItsInputAndTheOthersAreReported) {
  const TempDir scratch;
  // 200,000 pairs: the table that finds duplicate keys (8 bytes a pair, one allocation)
  // outgrows the 1 MiB the allocator then refuses.
  std::vector<KeyValue> pairs;
  for (int i = 0; i < 200000; ++i)
    pairs.push_back(pair("test.key" + std::to_string(i), Value::u8(1)));
  const fs::path large = scratch.write("large.gguf", write_bytes(document(pairs)));
  const fs::path small = scratch.write("small.gguf", write_bytes(minimal_document()));
  g_refuse_from_bytes = std::size_t{1} << 20;
  const Report failed = validate_file(large.string(), container_options());
  const Report passed = validate_file(small.string(), container_options());
  g_refuse_from_bytes = 0;
  ASSERT_EQ(failed.findings.size(), 1U);
  EXPECT_EQ(failed.findings[0].code, Code::UnreadableFile);
  EXPECT_NE(failed.findings[0].message.find("not enough memory"), std::string::npos);
  EXPECT_EQ(failed.exit_status(), 2);
  EXPECT_EQ(passed.exit_status(), 0);
}

// The CLI under an address-space limit that one input exceeds (2 * 10^6 pairs: a 40 MB file
// mapped and 48 MB of model and duplicate table, beside the process's own 30-odd MB; a small
// file needs under 40 MB): that input is unreadable with the reason, the others are still
// reported.

TEST(AllocationFailure, TheCliReportsEveryInputWhenOneRunsOutOfMemory) {
#ifdef GGUFCHECK_TESTS_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#else
  const TempDir scratch;
  std::vector<KeyValue> pairs;
  pairs.reserve(2000000);
  for (int i = 0; i < 2000000; ++i) pairs.push_back(pair("k" + std::to_string(i), Value::u8(1)));
  const fs::path large = scratch.write("large.gguf", write_bytes(document(pairs)));
  pairs = {};
  const fs::path small = scratch.write("small.gguf", write_bytes(minimal_document()));
  const CliRun run =
      run_cli({"--no-model-checks", "--format", "json", large.string(), small.string()}, "",
              std::size_t{80} << 20);
  ASSERT_EQ(run.signal, 0);
  EXPECT_EQ(run.status, 2) << run.out;
  const json doc = json::parse(run.out);
  ASSERT_EQ(doc["files"].size(), 2U);
  EXPECT_EQ(doc["files"][0]["findings"][0]["code"], "GGUF0001");
  EXPECT_NE(doc["files"][0]["findings"][0]["message"].get<std::string>().find("not enough memory"),
            std::string::npos);
  EXPECT_EQ(doc["files"][1]["summary"]["errors"], 0);
#endif
}

}  // namespace
}  // namespace ggufcheck::testing

// The tensor data check through every way a file is read: a buffer, a mapped file (through the
// mapping or with pread), a stream cut into chunks of every size; one thread or many; pieces
// of one tensor on different threads; sparse files; a cancelled scan; the CLI's --data,
// --progress and Ctrl-C. What each kernel finds is tested against a reference in
// test_data_kernels.cpp and against ggml in test_data_differential.cpp; here, that the scan
// around them reports exactly what is in the bytes, wherever they are cut.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data/scan.hpp"
#include "test_support.hpp"
#include "validate/validate.hpp"

namespace ggufcheck::testing {
namespace {

using json = nlohmann::json;

constexpr std::uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kQ8_1 = 9, kQ4_K = 12, kQ6_K = 14,
                        kNvfp4 = 40;

void put16(ByteVector& b, std::size_t at, std::uint16_t v) {
  b[at] = static_cast<std::uint8_t>(v);
  b[at + 1] = static_cast<std::uint8_t>(v >> 8);
}

// Bytes of `n` finite, non-zero f16 values (1.0 .. 1.99).
ByteVector f16_values(std::size_t n, std::uint32_t seed = 1) {
  std::mt19937 random(seed);
  ByteVector b(2 * n);
  for (std::size_t i = 0; i < n; ++i)
    put16(b, 2 * i, static_cast<std::uint16_t>(0x3C00 | (random() & 0x3FF)));
  return b;
}

// `blocks` blocks of a quantized type whose f16 fields at `scales` are 1.0 and whose other
// bytes are random.
ByteVector quant_blocks(std::uint32_t type, std::size_t blocks, std::vector<std::size_t> scales,
                        std::uint32_t seed = 2) {
  const std::size_t size = tensor_type(type)->type_size;
  std::mt19937 random(seed);
  ByteVector b(size * blocks);
  for (auto& byte : b) byte = static_cast<std::uint8_t>(random());
  for (std::size_t k = 0; k < blocks; ++k) {
    for (const std::size_t at : scales) put16(b, k * size + at, 0x3C00);
  }
  return b;
}

Tensor data_tensor(std::string name, std::uint32_t type, std::uint64_t elements, ByteVector data) {
  Tensor t = tensor(std::move(name), {elements}, type);
  t.data = std::move(data);
  return t;
}

Options data_options(unsigned threads = 0, DataCheck::Read read = DataCheck::Read::Map) {
  Options o = container_options();
  o.data.enabled = true;
  o.data.threads = threads;
  o.data.read = read;
  return o;
}

// The findings as comparable JSON (code, offset, length, path, message).
json findings_of(const Report& report) {
  json out = json::array();
  for (const Finding& f : report.findings) {
    out.push_back({{"code", static_cast<int>(f.code)},
                   {"offset", f.offset},
                   {"length", f.length},
                   {"path", f.path},
                   {"message", f.message}});
  }
  return out;
}

const Finding* only(const Report& report, Code code) {
  const Finding* found = nullptr;
  for (const Finding& f : report.findings) {
    if (f.code == code) {
      EXPECT_EQ(found, nullptr) << "two findings of one code";
      found = &f;
    }
  }
  return found;
}

std::size_t data_findings(const Report& report) {
  return static_cast<std::size_t>(std::count_if(
      report.findings.begin(), report.findings.end(),
      [](const Finding& f) { return catalogue_entry(f.code).area == Area::TensorData; }));
}

// One tensor of each kind the check reports, and two good ones.
Document every_kind() {
  ByteVector f16 = f16_values(64);
  put16(f16, 2 * 5, 0x7E00);   // NaN
  put16(f16, 2 * 7, 0xFC00);   // -inf
  put16(f16, 2 * 63, 0x7C01);  // a signalling NaN
  // q4_K: d at 0, dmin at 2; block 3's dmin is +inf, block 5's d NaN.
  ByteVector q4k = quant_blocks(kQ4_K, 8, {0, 2});
  put16(q4k, 3 * 144 + 2, 0x7C00);
  put16(q4k, 5 * 144 + 0, 0x7E00);
  ByteVector nvfp4 = quant_blocks(kNvfp4, 4, {});
  for (std::size_t k = 0; k < 4; ++k) std::memset(nvfp4.data() + k * 36, 0x38, 4);
  nvfp4[2 * 36 + 1] = 0x7F;
  nvfp4[3 * 36 + 3] = 0x80;
  return document({pair("general.quantization_version", Value::u32(2))},
                  {data_tensor("f16.nan", kF16, 64, f16),
                   data_tensor("f32.good", kF32, 16, ByteVector(64, 0x3F)),
                   data_tensor("q4k.bad", kQ4_K, 8 * 256, q4k),
                   data_tensor("q8_1.any", kQ8_1, 32, quant_blocks(kQ8_1, 1, {0, 2})),
                   data_tensor("nvfp4.odd", kNvfp4, 4 * 64, nvfp4),
                   data_tensor("zeros", kF32, 8, ByteVector(32, 0)),
                   data_tensor("q8_0.good", kQ8_0, 64, quant_blocks(kQ8_0, 2, {0}))});
}

TEST(DataScan, ReportsEachKindWithCountFirstPlaceAndValue) {
  const Written written = write(every_kind());
  const Report report = check(written.bytes, data_options());
  const auto at = [&](std::size_t tensor) { return written.layout.tensors[tensor].data_position; };

  const Finding* nan = only(report, Code::NonFiniteElement);
  ASSERT_NE(nan, nullptr);
  EXPECT_EQ(nan->offset, at(0) + 2 * 5);
  EXPECT_EQ(nan->length, 2U);
  EXPECT_EQ(nan->path, "tensor[0] \"f16.nan\" data");
  EXPECT_EQ(nan->message,
            "3 of the 64 elements of tensor[0] \"f16.nan\" (F16) are not finite (2 NaN, 1 "
            "infinite); the first is element 5 at 0x" +
                fmt::format("{:x}", at(0) + 10) + ": nan (0x7e00)");

  const Finding* scale = only(report, Code::NonFiniteScale);
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->offset, at(2) + 3 * 144 + 2);
  EXPECT_EQ(scale->message,
            "2 of the 8 blocks of tensor[2] \"q4k.bad\" (Q4_K) have a non-finite "
            "scale (1 NaN, 1 infinite); the first is block 3, dmin at 0x" +
                fmt::format("{:x}", at(2) + 3 * 144 + 2) + ": +inf (0x7c00)");

  const Finding* q8_1 = only(report, Code::UncheckableTensorType);
  ASSERT_NE(q8_1, nullptr);
  EXPECT_EQ(q8_1->offset, at(3));

  const Finding* nv = only(report, Code::AmbiguousNvfp4Scale);
  ASSERT_NE(nv, nullptr);
  EXPECT_EQ(nv->offset, at(4) + 2 * 36 + 1);
  EXPECT_NE(nv->message.find("2 of the 4 blocks"), std::string::npos) << nv->message;
  EXPECT_NE(nv->message.find("block 2, d[1]"), std::string::npos) << nv->message;
  EXPECT_NE(nv->message.find(": 0x7f"), std::string::npos) << nv->message;

  const Finding* zeros = only(report, Code::AllZeroTensor);
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->offset, at(5));
  EXPECT_EQ(zeros->length, 32U);

  EXPECT_EQ(data_findings(report), 5U);
  ASSERT_TRUE(report.facts.data_checked.has_value());
  std::uint64_t total = 0;
  for (const auto& t : written.layout.tensors) total += t.nbytes;
  EXPECT_EQ(*report.facts.data_checked, total);
  // Strict: three errors (6001, 6002, 6003), two warnings, and GGUF3014's note on NVFP4.
  EXPECT_EQ(report.errors, 3U);
  EXPECT_EQ(report.warnings, 2U);
  EXPECT_EQ(report.notes, 1U);
}

// F64 as llama.cpp reads it: through a float, where 1e300 is infinite.
TEST(DataScan, F64BeyondTheFloatRangeIsInfiniteAsLlamaCppReadsIt) {
  ByteVector f64(8 * 4, 0);
  const double values[] = {1.0, 1e300, -3.5e38, 3.4e38};  // 3.4e38 < FLT_MAX: finite
  std::memcpy(f64.data(), values, sizeof values);
  const Written written = write(document({}, {data_tensor("d", 28, 4, f64)}));
  const Report report = check(written.bytes, data_options());
  const Finding* f = only(report, Code::NonFiniteElement);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, written.layout.tensors[0].data_position + 8);
  EXPECT_EQ(f->message,
            "2 of the 4 elements of tensor[0] \"d\" (F64) are not finite as llama.cpp reads them "
            "(through a float) (infinite); the first is element 1 at 0x" +
                fmt::format("{:x}", f->offset) + ": 1e+300 (0x7e37e43c8800759c), +inf as a float");
}

TEST(DataScan, IsOffByDefaultAndSilentOnTheSameFile) {
  const Report report = check(write(every_kind()).bytes);
  EXPECT_EQ(data_findings(report), 0U) << findings_of(report).dump();
  EXPECT_TRUE(report.passed());
  EXPECT_FALSE(report.facts.data_checked.has_value());
}

TEST(DataScan, ProfilesGiveTheCatalogueSeverities) {
  const ByteVector bytes = write(every_kind()).bytes;
  Options spec = data_options();
  spec.profile = Profile::Spec;
  const Report in_spec = check(bytes, spec);
  EXPECT_EQ(in_spec.errors, 0U) << findings_of(in_spec).dump();
  EXPECT_EQ(in_spec.warnings, 2U);  // non-finite elements and scales: warnings in spec
  Options llama = data_options();
  llama.profile = Profile::LlamaCpp;
  const Report in_llama = check(bytes, llama);
  EXPECT_EQ(in_llama.errors, 3U);
  EXPECT_EQ(in_llama.warnings, 0U);
}

// A tensor of several pieces with bad values at and around the pieces' edges: every thread
// count and both ways of reading give the one report, with exact counts and the first place.
Document big_tensors() {
  const std::size_t n = 3 * (1 << 20);  // 6 MiB of f16: twelve pieces
  ByteVector f16 = f16_values(n, 7);
  const std::size_t piece = detail::DataScan::kPieceBytes / 2;  // f16 elements per piece
  const std::vector<std::size_t> bad = {piece - 1, piece, 2 * piece + 17, n - 1};
  for (const std::size_t i : bad) put16(f16, 2 * i, 0x7C00);
  const std::size_t blocks = 20000;  // q6_K: 4 MiB, d at 208
  ByteVector q6k = quant_blocks(kQ6_K, blocks, {208}, 9);
  put16(q6k, (blocks - 1) * 210 + 208, 0xFFFF);
  put16(q6k, 4993 * 210 + 208, 0x7C00);
  return document(
      {}, {data_tensor("big.f16", kF16, n, f16), data_tensor("big.q6k", kQ6_K, blocks * 256, q6k)});
}

TEST(DataScan, EveryThreadCountAndReadGivesTheSameReport) {
  const TempDir scratch;
  const Written written = write(big_tensors());
  const auto path = scratch.write("big.gguf", written.bytes);
  const Report base = check(written.bytes, data_options(1));
  const Finding* f16 = only(base, Code::NonFiniteElement);
  ASSERT_NE(f16, nullptr);
  EXPECT_NE(f16->message.find("4 of the 3145728 elements"), std::string::npos) << f16->message;
  EXPECT_NE(f16->message.find("first is element 262143"), std::string::npos) << f16->message;
  const Finding* q6k = only(base, Code::NonFiniteScale);
  ASSERT_NE(q6k, nullptr);
  EXPECT_NE(q6k->message.find("2 of the 20000 blocks"), std::string::npos) << q6k->message;
  EXPECT_NE(q6k->message.find("first is block 4993, d"), std::string::npos) << q6k->message;
  for (const unsigned threads : {1U, 2U, 3U, 8U}) {
    for (const auto read : {DataCheck::Read::Map, DataCheck::Read::Pread}) {
      const Report file = validate_file(path.string(), data_options(threads, read));
      EXPECT_EQ(findings_of(file), findings_of(base)) << threads << " threads";
      EXPECT_EQ(file.facts.data_checked, base.facts.data_checked);
    }
  }
}

// A stream read in chunks of many sizes (each cut falls inside blocks somewhere), with a window
// smaller than the data: the kept bytes, the carried partial blocks and the chunks give the
// file's report.
TEST(DataScan, StreamsCutAnywhereGiveTheFilesReport) {
  const TempDir scratch;
  const Written written = write(every_kind());
  const auto path = scratch.write("kinds.gguf", written.bytes);
  const Report base = validate_file(path.string(), data_options(2));
  ASSERT_EQ(data_findings(base), 5U);
  for (const std::size_t chunk : {1UL, 7UL, 33UL, 144UL, 145UL, 1000UL, 4099UL}) {
    for (const std::size_t window : {256UL, 700UL, 1024UL}) {
      const int fd = ::open(path.c_str(), O_RDONLY);
      ASSERT_GE(fd, 0);
      detail::StreamLimits limits;
      limits.window = window;
      limits.chunk = 64;
      limits.data_chunk = chunk;
      const Report stream =
          detail::validate_stream(fd, path.string(), path.string(), data_options(2), limits);
      ::close(fd);
      EXPECT_EQ(findings_of(stream), findings_of(base))
          << "chunk " << chunk << " window " << window;
      EXPECT_EQ(stream.facts.data_checked, base.facts.data_checked);
    }
  }
}

// A cut file (GGUF4003) still has its tensor layout: the data check runs, on the file and the
// stream alike, over the tensors whose bytes are all there, and leaves out the cut one and those
// after it (no finding of theirs, and their bytes not counted).
TEST(DataScan, ACutFileIsScannedUpToTheCutAsFileOrStream) {
  const TempDir scratch;
  const Written written = write(every_kind());
  const WrittenTensor& cut_tensor = written.layout.tensors[2];
  const std::uint64_t cut = cut_tensor.data_position + 500;
  const auto path = scratch.write(
      "cut.gguf",
      ByteVector(written.bytes.begin(), written.bytes.begin() + static_cast<long>(cut)));
  const Report file = validate_file(path.string(), data_options());
  EXPECT_TRUE(has(file, Code::TensorOutOfBounds));
  EXPECT_FALSE(has(file, Code::StageNotRun));
  ASSERT_TRUE(file.facts.data_checked.has_value());
  std::uint64_t whole = 0;
  for (std::size_t i = 0; i < written.layout.tensors.size(); ++i) {
    const WrittenTensor& t = written.layout.tensors[i];
    if (t.data_position + t.nbytes <= cut) whole += t.nbytes;
  }
  EXPECT_EQ(*file.facts.data_checked, whole);
  for (const Finding& f : file.findings) {
    if (catalogue_entry(f.code).area == Area::TensorData) {
      EXPECT_LT(f.offset, cut_tensor.data_position) << code_string(f.code) << " " << f.path;
    }
  }
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  detail::StreamLimits limits;
  limits.window = 256;
  limits.chunk = 64;
  limits.data_chunk = 100;
  const Report stream =
      detail::validate_stream(fd, path.string(), path.string(), data_options(), limits);
  ::close(fd);
  EXPECT_EQ(findings_of(stream), findings_of(file));
  EXPECT_EQ(stream.facts.data_checked, file.facts.data_checked);
}

TEST(DataScan, ACancelledScanIsInterruptedNeverAPass) {
  const std::atomic<bool> cancel{true};
  Options options = data_options();
  options.data.cancel = &cancel;
  const Report report = check(write(big_tensors()).bytes, options);
  EXPECT_TRUE(report.interrupted);
  EXPECT_FALSE(report.passed());
  EXPECT_EQ(report.exit_status(), 130);
  EXPECT_FALSE(report.facts.data_checked.has_value());
}

TEST(DataScan, ProgressIsMonotonicAndEndsAtTheTotal) {
  std::vector<DataProgress> seen;
  Options options = data_options(2);
  options.data.progress = [&](const DataProgress& p) { seen.push_back(p); };
  const Report report = check(write(big_tensors()).bytes, options);
  ASSERT_FALSE(seen.empty());
  for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1].done, seen[i].done);
  EXPECT_EQ(seen.back().done, seen.back().total);
  EXPECT_EQ(seen.back().total, *report.facts.data_checked);
}

// Overlapping tensors (GGUF4002) are read once: the work is bounded by the file, whatever
// the tensor infos claim.
TEST(DataScan, OverlappingTensorsAreReadOnce) {
  std::vector<Tensor> tensors;
  tensors.push_back(data_tensor("first", kF16, 4096, f16_values(4096)));
  for (int i = 0; i < 1000; ++i) {
    Tensor t = tensor("same." + std::to_string(i), {4096}, kF16);
    t.offset = 0;
    tensors.push_back(t);
  }
  const Report report = check(write_bytes(document({}, tensors)), data_options());
  EXPECT_TRUE(has(report, Code::OverlappingTensors));
  // A finding that breaks the structure stops the data check; otherwise it reads 8 KiB once.
  if (report.facts.data_checked) {
    EXPECT_LE(*report.facts.data_checked, 8192U);
  }
}

// A sparse file: a 1 GiB tensor that is one hole is all zeros, found without reading it.
TEST(DataScan, AHoleIsZerosWithoutBeingRead) {
  const TempDir scratch;
  const std::uint64_t elements = std::uint64_t{1} << 29;  // 1 GiB of f16
  Tensor hole = tensor("hole", {elements}, kF16);
  hole.data = ByteVector{};  // the writer writes none of it: the file is extended below
  const Written written = write(document({}, {hole}));
  const auto path = scratch.write("sparse.gguf", written.bytes);
  ASSERT_EQ(::truncate(path.c_str(),
                       static_cast<off_t>(written.layout.tensors[0].data_position + elements * 2)),
            0);
  const Report report = validate_file(path.string(), data_options(2));
  EXPECT_TRUE(has(report, Code::AllZeroTensor)) << findings_of(report).dump();
  EXPECT_EQ(report.facts.data_checked, elements * 2);
}

// --- the CLI -------------------------------------------------------------------------------

struct CliResult {
  int status = -1;
  std::string out, err;
  long max_rss_kib = 0;
};

// The CLI with `args`; `feed` (if set) writes its standard input, then the CLI is sent `signal`
// (if set) before standard input is closed.
CliResult run_cli(const std::vector<std::string>& args, const ByteVector* feed = nullptr,
                  int signal_before_eof = 0, const std::string& piped_path = "") {
  int out[2], err[2], in[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0 || ::pipe(in) != 0) throw std::runtime_error("pipe");
  const pid_t child = ::fork();
  if (child == 0) {
    if (!piped_path.empty()) {  // standard input is `cat piped_path` through a pipe
      int through[2];
      if (::pipe(through) != 0) ::_exit(126);
      if (::fork() == 0) {
        ::dup2(through[1], 1);
        ::close(through[0]);
        ::close(through[1]);
        ::execlp("cat", "cat", piped_path.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      ::dup2(through[0], in[0]);
      ::close(through[0]);
      ::close(through[1]);
    }
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    std::vector<char*> argv;
    std::string cli = GGUFCHECK_CLI_PATH;
    argv.push_back(cli.data());
    // The fixtures are containers with tensor data, not models llama.cpp loads.
    std::vector<std::string> copy = {"--no-model-checks"};
    copy.insert(copy.end(), args.begin(), args.end());
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(cli.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  // The outputs are read by a thread so that a full pipe never blocks the child.
  CliResult run;
  std::thread reader([&] {
    char buffer[4096];
    for (int fd : {out[0], err[0]}) {
      std::string& into = fd == out[0] ? run.out : run.err;
      for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        into.append(buffer, static_cast<std::size_t>(n));
      }
    }
  });
  if (feed != nullptr) {
    std::size_t done = 0;
    while (done < feed->size()) {
      const ssize_t n = ::write(in[1], feed->data() + done, feed->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    // Every byte but what the pipe holds was read: the CLI is scanning (its handler is set).
    if (signal_before_eof != 0) ::kill(child, signal_before_eof);
  }
  ::close(in[1]);
  int status = 0;
  struct rusage usage {};
  while (::wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  run.max_rss_kib = usage.ru_maxrss;
  reader.join();
  ::close(out[0]);
  ::close(err[0]);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

TEST(DataScanCli, DataAndCheckTensorsAreOneFlag) {
  const TempDir scratch;
  const auto path = scratch.write("kinds.gguf", write(every_kind()).bytes);
  const CliResult plain = run_cli({"--quiet", path.string()});
  EXPECT_EQ(plain.status, 0) << plain.out;
  const CliResult data = run_cli({"--data", "--format", "json", path.string()});
  EXPECT_EQ(data.status, 1);
  const CliResult alias =
      run_cli({"--check-tensors", "--format", "json", "-j", "3", path.string()});
  EXPECT_EQ(alias.status, 1);
  json a = json::parse(data.out), b = json::parse(alias.out);
  EXPECT_EQ(a["files"][0]["findings"], b["files"][0]["findings"]);
  EXPECT_EQ(a["files"][0]["findings"].size(), 6U);  // and GGUF3014's note
}

TEST(DataScanCli, ProgressOnlyWhenAskedOffATerminal) {
  const TempDir scratch;
  const auto path = scratch.write("big.gguf", write(big_tensors()).bytes);
  const CliResult quiet = run_cli({"--data", "--quiet", path.string()});
  EXPECT_EQ(quiet.err, "");
  const CliResult asked = run_cli({"--data", "--quiet", "--progress", path.string()});
  EXPECT_NE(asked.err.find("(100%)"), std::string::npos) << asked.err;
  EXPECT_NE(asked.err.find(path.string() + ": data "), std::string::npos) << asked.err;
  const CliResult refused =
      run_cli({"--data", "--quiet", "--progress", "--no-progress", path.string()});
  EXPECT_EQ(refused.err, "");
  EXPECT_EQ(asked.out, quiet.out);
}

// Ctrl-C during the scan of a stream: exit 130, and no report (the file would pass).
TEST(DataScanCli, InterruptStopsWithStatus130AndNoReport) {
  std::vector<Tensor> tensors;
  for (int i = 0; i < 12; ++i) {
    tensors.push_back(data_tensor("w" + std::to_string(i), kF16, 1 << 22,
                                  f16_values(1 << 22, static_cast<std::uint32_t>(i))));
  }
  const ByteVector bytes = write_bytes(document({}, tensors));  // 96 MiB: past the window
  ASSERT_EQ(check(bytes, data_options()).errors, 0U);
  const CliResult run = run_cli({"--data", "-"}, &bytes, SIGINT);
  EXPECT_EQ(run.status, 130);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find("interrupted"), std::string::npos) << run.err;
}

// A 2 GiB model in memory (a memfd: its pages are real, no hole to skip) scanned through the
// mapping: the pages behind the scan are given back, so the peak is that of a tiny file plus
// the metadata prefault (64 MiB) and a few pieces, whatever the size. Through a pipe, the
// same report in the same bounds.
TEST(DataScanCli, AMappedScanOfGibibytesStaysInBoundedMemory) {
  constexpr std::uint64_t kElements = std::uint64_t{1} << 30;  // 2 GiB of f16
  Tensor big = tensor("big", {kElements}, kF16);
  big.data = ByteVector{};  // written below, in chunks
  const Written head = write(document({}, {big}));
  const int fd = ::memfd_create("ggufcheck-big-model", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, head.bytes.data(), head.bytes.size()),
            static_cast<ssize_t>(head.bytes.size()));
  const ByteVector chunk = f16_values(std::size_t{1} << 22);  // 8 MiB of finite values
  for (std::uint64_t done = 0; done < kElements * 2; done += chunk.size()) {
    ASSERT_EQ(::write(fd, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  }
  const std::string path = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd);
  const CliResult run = run_cli({"--data", "--quiet", "-j", "2", path});
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  // Through a pipe: the same report; the kept window (64 MiB) and the read chunks bound it.
  const CliResult by_path = run_cli({"--data", "--format", "json", path});
  const CliResult piped = run_cli({"--data", "--format", "json", "-"}, nullptr, 0, path);
  ::close(fd);
  json a = json::parse(by_path.out), b = json::parse(piped.out);
  for (json* doc : {&a, &b}) (*doc)["files"][0].erase("path");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a["files"][0]["facts"]["data_checked"].get<std::uint64_t>(), kElements * 2);
  RecordProperty("piped_rss_kib", static_cast<int>(piped.max_rss_kib));
  const TempDir scratch;
  const auto tiny = scratch.write("tiny.gguf", write(every_kind()).bytes);
  const CliResult baseline = run_cli({"--data", "--quiet", "-j", "2", tiny.string()});
  RecordProperty("peak_rss_kib", static_cast<int>(run.max_rss_kib));
  RecordProperty("baseline_rss_kib", static_cast<int>(baseline.max_rss_kib));
  EXPECT_LE(run.max_rss_kib - baseline.max_rss_kib, 64 * 1024 + 16 * 1024)
      << "peak " << run.max_rss_kib << " KiB, baseline " << baseline.max_rss_kib << " KiB";
  EXPECT_LE(piped.max_rss_kib - baseline.max_rss_kib, 64 * 1024 + 32 * 1024)
      << "piped peak " << piped.max_rss_kib << " KiB, baseline " << baseline.max_rss_kib << " KiB";
}

}  // namespace
}  // namespace ggufcheck::testing

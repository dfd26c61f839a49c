// `ggufcheck hash` and `ggufcheck verify` (docs/hash.md): the exact bytes llama-gguf-hash prints
// (derived by hand from its source for files whose digests are known), the engine against one-shot
// digests on every thread count, the JSON manifest and verify's verdicts, hostile files and
// manifests, bounded memory, Ctrl-C. The comparison with the pinned llama-gguf-hash and
// gguf_hash.py themselves is test_hash_compat.py.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "counting_allocator.hpp"
#include "ggufcheck/dump.hpp"
#include "ggufcheck/hash.hpp"
#include "test_support.hpp"
#include "util/digest.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint32_t kF32 = 0, kF16 = 1, kQ8_0 = 8, kI8 = 24;

Tensor bytes_tensor(std::string name, const std::string& bytes, std::uint32_t type = kI8) {
  Tensor t = tensor(std::move(name), {bytes.size()}, type);
  t.data = ByteVector(bytes.begin(), bytes.end());
  return t;
}

// Two I8 tensors holding "abc" and "d": every digest of them is a published test vector or
// follows from one (the whole model is "abcd").
ByteVector golden_bytes() {
  return write_bytes(document({}, {bytes_tensor("t.abc", "abc"), bytes_tensor("t.d", "d")}));
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

CapturedRun in_dir(const TempDir& dir, const std::vector<std::string>& args) {
  CaptureOptions options;
  options.cwd = dir.path().string();
  return run_cli_captured(args, options);
}

// --- llama-gguf-hash's output, byte for byte ------------------------------------------------
//
// What examples/gguf-hash/gguf-hash.cpp prints, read off its source: per tensor (unless
// --no-layer) printf("%-8s  %-s  %s\n", type, hex, "FILE:NAME") for xxh64, sha1, sha256 in that
// order; then the same for the whole model with "FILE", and the uuid line last. xxh64 is printed
// big-endian, 16 digits. The SHA digests below are those of "abc", "d" and "abcd" (FIPS 180's
// vectors and Python's hashlib), xxh64 (seed 0) of "abc" is xxHash's published vector and of "d"
// and "abcd" what llama.cpp's own vendored xxhash.c gives; the UUID is Python's
// uuid.UUID(bytes=sha1(namespace + b"abcd")[:16], version=5).

constexpr const char* kXxhAbc = "44bc2cf5ad770999";
constexpr const char* kXxhD = "5000d8f2907d14e4";
constexpr const char* kXxhAbcd = "de0327b0d25d92cc";
constexpr const char* kSha1Abc = "a9993e364706816aba3e25717850c26c9cd0d89d";
constexpr const char* kSha1D = "3c363836cf4e16666669a25da280a1865c2d2874";
constexpr const char* kSha1Abcd = "81fe8bfe87576c3ecb22426f8e57847382917acf";
constexpr const char* kSha256Abc =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* kSha256D = "18ac3e7343f016890c510e93f935261169d9e3f565436429830faf0934f4f8e4";
constexpr const char* kSha256Abcd =
    "88d4266fd4e6338d13b845fcf289579d209c897823b9217da3e161936f031589";
constexpr const char* kUuidAbcd = "6d48d221-245b-5506-94c3-9dfa2bf2ae82";
// Of no bytes at all: a file without tensors.
constexpr const char* kXxhEmpty = "ef46db3751d8e999";
constexpr const char* kSha1Empty = "da39a3ee5e6b4b0d3255bfef95601890afd80709";
constexpr const char* kSha256Empty =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kUuidEmpty = "6b2748e2-363e-5825-9e7a-d9b30f33ac5b";

TEST(HashText, GoldenFileEveryOption) {
  const TempDir dir;
  dir.write("golden.gguf", golden_bytes());
  const std::string xxh = std::string("xxh64     ") + kXxhAbc + "  golden.gguf:t.abc\n" +
                          "xxh64     " + kXxhD + "  golden.gguf:t.d\n" + "xxh64     " + kXxhAbcd +
                          "  golden.gguf\n";
  struct Case {
    std::vector<std::string> options;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{}, xxh},
      {{"--xxh64"}, xxh},
      {{"--sha1"},
       std::string("sha1      ") + kSha1Abc + "  golden.gguf:t.abc\nsha1      " + kSha1D +
           "  golden.gguf:t.d\nsha1      " + kSha1Abcd + "  golden.gguf\n"},
      {{"--sha256"},
       std::string("sha256    ") + kSha256Abc + "  golden.gguf:t.abc\nsha256    " + kSha256D +
           "  golden.gguf:t.d\nsha256    " + kSha256Abcd + "  golden.gguf\n"},
      {{"--uuid"}, std::string("uuid      ") + kUuidAbcd + "  golden.gguf\n"},
      {{"--all", "--uuid"},
       std::string("xxh64     ") + kXxhAbc + "  golden.gguf:t.abc\nsha1      " + kSha1Abc +
           "  golden.gguf:t.abc\nsha256    " + kSha256Abc + "  golden.gguf:t.abc\nxxh64     " +
           kXxhD + "  golden.gguf:t.d\nsha1      " + kSha1D + "  golden.gguf:t.d\nsha256    " +
           kSha256D + "  golden.gguf:t.d\nxxh64     " + kXxhAbcd + "  golden.gguf\nsha1      " +
           kSha1Abcd + "  golden.gguf\nsha256    " + kSha256Abcd + "  golden.gguf\nuuid      " +
           kUuidAbcd + "  golden.gguf\n"},
      {{"--all", "--no-layer"},
       std::string("xxh64     ") + kXxhAbcd + "  golden.gguf\nsha1      " + kSha1Abcd +
           "  golden.gguf\nsha256    " + kSha256Abcd + "  golden.gguf\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"hash"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.push_back("golden.gguf");
    for (const char* jobs : {"1", "2", "5"}) {
      std::vector<std::string> with_jobs = args;
      with_jobs.insert(with_jobs.begin() + 1, {"-j", jobs});
      const CapturedRun r = in_dir(dir, with_jobs);
      EXPECT_EQ(r.status, 0) << r;
      EXPECT_EQ(r.out, c.expected) << ::testing::PrintToString(with_jobs);
      EXPECT_EQ(r.err, "");
    }
  }
  // The name is the argument as given, directories and all; several files one after another.
  const CapturedRun two = in_dir(dir, {"hash", "--no-layer", "./golden.gguf", "golden.gguf"});
  EXPECT_EQ(two.out, std::string("xxh64     ") + kXxhAbcd + "  ./golden.gguf\nxxh64     " +
                         kXxhAbcd + "  golden.gguf\n");
}

// A file without tensors (llama.cpp's vocabulary files): the whole-model lines of no bytes.
TEST(HashText, NoTensorsPrintsTheDigestsOfNothing) {
  std::vector<fs::path> files = {fs::path(GGUFCHECK_SOURCE_DIR) / "examples/valid/vocab-only.gguf"};
  const fs::path models = fs::path(GGUFCHECK_SOURCE_DIR) / ".deps/conformance/llama.cpp/models";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(models, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("ggml-vocab-") && name.ends_with(".gguf")) files.push_back(entry.path());
  }
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    CaptureOptions options;
    options.cwd = file.parent_path().string();
    const CapturedRun r = run_cli_captured({"hash", "--all", "--uuid", name}, options);
    EXPECT_EQ(r.status, 0) << name << r;
    EXPECT_EQ(r.out, std::string("xxh64     ") + kXxhEmpty + "  " + name + "\nsha1      " +
                         kSha1Empty + "  " + name + "\nsha256    " + kSha256Empty + "  " + name +
                         "\nuuid      " + kUuidEmpty + "  " + name + "\n");
  }
  RecordProperty("files", static_cast<int>(files.size()));
  if (files.size() == 1) GTEST_SKIP() << "no llama.cpp tree (conformance/setup): vocab-only only";
}

// A tensor name is a C string for llama-gguf-hash: it ends at the first NUL.
TEST(HashText, NamesEndAtTheirFirstNul) {
  const TempDir dir;
  dir.write("nul.gguf", write_bytes(document({}, {bytes_tensor(std::string("a\0b", 3), "abc")})));
  const CapturedRun r = in_dir(dir, {"hash", "nul.gguf"});
  EXPECT_EQ(r.out, std::string("xxh64     ") + kXxhAbc + "  nul.gguf:a\nxxh64     " + kXxhAbc +
                       "  nul.gguf\n");
}

// A newline in a tensor name would print a line of its own: a tensor named
// "n\nsha256  H  m.gguf" forged the whole-model line of the manifest `hash` wrote, and the first
// line of a name decides, so `--check` passed a swapped file whose data hashes to H. Names are one
// word each: such a name is escaped, and the manifest has only the lines of the run.
TEST(HashText, ANameCannotForgeALine) {
  const TempDir dir;
  const std::string swapped_data = "exyz";
  const std::string forged = "n\nsha256    " +
                             hex(detail::sha256_of(swapped_data.data(), swapped_data.size())) +
                             "  m.gguf";
  dir.write("m.gguf",
            write_bytes(document({}, {bytes_tensor(forged, "e"), bytes_tensor("w", "abc")})));
  const CapturedRun made = in_dir(dir, {"hash", "--sha256", "m.gguf"});
  ASSERT_EQ(made.status, 0) << made;
  EXPECT_EQ(std::count(made.out.begin(), made.out.end(), '\n'), 3) << made.out;  // 2 + model
  EXPECT_NE(made.out.find("  m.gguf:n\\x0asha256\\x20\\x20\\x20\\x20"), std::string::npos)
      << made.out;
  write_text(dir.path() / "m.manifest", made.out);
  // The swap: the forged name kept, "w" renamed and its data changed.
  dir.write("m.gguf",
            write_bytes(document({}, {bytes_tensor(forged, "e"), bytes_tensor("v", "xyz")})));
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, std::vector<std::string>{"--no-layer"}}) {
    std::vector<std::string> args = {"hash", "--check", "m.manifest"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("m.gguf");
    const CapturedRun check = in_dir(dir, args);
    EXPECT_EQ(check.status, 1) << check;
    EXPECT_NE(check.out.find("  m.gguf  -  Mismatch\n"), std::string::npos) << check;
  }
}

// Every byte a terminal or a line reader could misread is escaped, in file and tensor names, and
// in the names a directory walk finds; an escaped word holds a backslash, a plain one never does.
TEST(HashText, NamesAndPathsAreOneEscapedWord) {
  const TempDir dir;
  const std::string evil_file = "sub/a\x1b]0;t\x07 b.gguf";
  dir.write(evil_file, golden_bytes());
  dir.write("names.gguf",
            write_bytes(document(
                {}, {bytes_tensor("sp ace", "a"), bytes_tensor("tab\tx", "b"),
                     bytes_tensor("back\\slash", "c"), bytes_tensor("rlo\xE2\x80\xAEx", "d"),
                     bytes_tensor("csi\xC2\x9Bx", "e"), bytes_tensor("plain.weight", "f")})));
  const CapturedRun walk = in_dir(dir, {"hash", "--no-layer", "sub"});
  EXPECT_EQ(walk.status, 0) << walk;
  EXPECT_EQ(walk.out, std::string("xxh64     ") + kXxhAbcd + "  sub/a\\x1b]0;t\\x07\\x20b.gguf\n");
  const CapturedRun names = in_dir(dir, {"hash", "names.gguf"});
  EXPECT_EQ(names.status, 0) << names;
  for (const char* word : {"names.gguf:sp\\x20ace\n", "names.gguf:tab\\x09x\n",
                           "names.gguf:back\\\\slash\n", "names.gguf:rlo\\xe2\\x80\\xaex\n",
                           "names.gguf:csi\\xc2\\x9bx\n", "names.gguf:plain.weight\n"}) {
    EXPECT_NE(names.out.find(word), std::string::npos) << word << names;
  }
  // --check reads the escaped words back: every line found.
  write_text(dir.path() / "names.manifest", names.out);
  const CapturedRun check = in_dir(dir, {"hash", "--check", "names.manifest", "names.gguf"});
  EXPECT_EQ(check.status, 0) << check;
  EXPECT_EQ(check.out.find("Not Found"), std::string::npos) << check;
}

// --- the engine ---------------------------------------------------------------------------

std::vector<Tensor> varied_tensors() {
  // Sizes around the 1 MiB piece: 0 (a zero dim), tiny, exactly one piece, one byte over, a few.
  std::vector<Tensor> tensors;
  std::uint32_t seed = 7;
  const auto bytes_of = [&](std::size_t n) {
    ByteVector b(n);
    for (auto& x : b) {
      seed = seed * 1664525U + 1013904223U;
      x = static_cast<std::uint8_t>(seed >> 24);
    }
    return b;
  };
  const std::vector<std::uint64_t> sizes = {0, 5, 1 << 20, (1 << 20) + 1, 3 << 20, 77, 2500000};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Tensor t = tensor("t" + std::to_string(i), {sizes[i]}, kI8);
    t.data = bytes_of(static_cast<std::size_t>(sizes[i]));
    tensors.push_back(std::move(t));
  }
  return tensors;
}

TEST(HashEngine, EveryThreadCountGivesTheOneShotDigests) {
  const TempDir dir;
  const Written written = write(document({}, varied_tensors()));
  const auto path = dir.write("varied.gguf", written.bytes);
  HashOptions options;
  options.algorithms = {true, true, true, true};
  options.manifest = true;
  for (const unsigned threads : {1U, 2U, 3U, 8U}) {
    options.threads = threads;
    const HashResult r = hash_model({path.string()}, options);
    ASSERT_EQ(r.status, 0) << r.error;
    ASSERT_EQ(r.tensors.size(), written.layout.tensors.size());
    ByteVector all;
    for (std::size_t i = 0; i < r.tensors.size(); ++i) {
      const WrittenTensor& w = written.layout.tensors[i];
      const std::uint8_t* data = written.bytes.data() + w.data_position;
      detail::Digest sha256(detail::DigestKind::Sha256), sha1(detail::DigestKind::Sha1),
          xxh(detail::DigestKind::Xxh64);
      for (detail::Digest* d : {&sha256, &sha1, &xxh}) d->update(data, w.nbytes);
      EXPECT_EQ(r.tensors[i].sha256, sha256.sha256()) << threads << " " << i;
      EXPECT_EQ(r.tensors[i].sha1, sha1.sha1()) << threads << " " << i;
      EXPECT_EQ(r.tensors[i].xxh64, xxh.xxh64()) << threads << " " << i;
      EXPECT_EQ(r.tensors[i].nbytes, w.nbytes);
      all.insert(all.end(), data, data + w.nbytes);
    }
    EXPECT_EQ(r.sha256, detail::sha256_of(all.data(), all.size())) << threads;
    detail::Digest uuid(detail::DigestKind::Sha1);
    uuid.update(kLlamaCppUuidNamespace.data(), kLlamaCppUuidNamespace.size());
    uuid.update(all.data(), all.size());
    EXPECT_EQ(r.uuid, detail::uuid_v5(uuid.sha1()));
    EXPECT_EQ(r.files[0].header_sha256,
              detail::sha256_of(written.bytes.data(), written.layout.data_start));
    // The gaps: every byte after the data start that no tensor holds (here each tensor's
    // padding; the tensors are in file order).
    ByteVector gaps;
    std::uint64_t at = written.layout.data_start;
    for (const WrittenTensor& w : written.layout.tensors) {
      gaps.insert(gaps.end(), written.bytes.begin() + static_cast<std::ptrdiff_t>(at),
                  written.bytes.begin() + static_cast<std::ptrdiff_t>(w.data_position));
      at = w.data_position + w.nbytes;
    }
    gaps.insert(gaps.end(), written.bytes.begin() + static_cast<std::ptrdiff_t>(at),
                written.bytes.end());
    EXPECT_GT(gaps.size(), 0U);
    EXPECT_EQ(r.files[0].gap_bytes, gaps.size()) << threads;
    EXPECT_EQ(r.files[0].gaps_sha256, detail::sha256_of(gaps.data(), gaps.size())) << threads;
  }
}

// The per-tensor sha256 are the ones `dump --level 3` computes on its own path.
TEST(HashEngine, AgreesWithDump) {
  const fs::path sample = fs::path(GGUFCHECK_SOURCE_DIR) / "examples/valid/tiny-llama.gguf";
  HashOptions options;
  options.manifest = true;
  options.algorithms.sha256 = true;
  const HashResult r = hash_model({sample.string()}, options);
  ASSERT_EQ(r.status, 0) << r.error;
  Options dump_options;
  const json dumped = json::parse(dump_file(sample.string(), dump_options, DumpLevel::Data).json);
  ASSERT_EQ(dumped["tensors"].size(), r.tensors.size());
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    EXPECT_EQ(dumped["tensors"][i]["data_sha256"], hex(r.tensors[i].sha256)) << i;
  }
}

TEST(HashEngine, MerkleRootIsRfc6962) {
  // RFC 6962's tree over d0..d2: root = H(1 | H(1 | H(0|d0) | H(0|d1)) | H(0|d2)).
  std::vector<Sha256Digest> leaves(3);
  for (std::size_t i = 0; i < leaves.size(); ++i) leaves[i].fill(static_cast<std::uint8_t>(i + 1));
  const auto leaf = [](const Sha256Digest& d) {
    ByteVector b = {0x00};
    b.insert(b.end(), d.begin(), d.end());
    return detail::sha256_of(b.data(), b.size());
  };
  const auto node = [](const Sha256Digest& l, const Sha256Digest& r) {
    ByteVector b = {0x01};
    b.insert(b.end(), l.begin(), l.end());
    b.insert(b.end(), r.begin(), r.end());
    return detail::sha256_of(b.data(), b.size());
  };
  EXPECT_EQ(merkle_root(leaves), node(node(leaf(leaves[0]), leaf(leaves[1])), leaf(leaves[2])));
  EXPECT_EQ(merkle_root({leaves[0]}), leaf(leaves[0]));
  EXPECT_EQ(hex(merkle_root({})), kSha256Empty);
}

TEST(HashEngine, ACancelledRunHoldsNoDigest) {
  const TempDir dir;
  const auto path = dir.write("varied.gguf", write_bytes(document({}, varied_tensors())));
  std::atomic<bool> cancel{true};
  HashOptions options;
  options.algorithms.sha256 = true;
  options.cancel = &cancel;
  const HashResult r = hash_model({path.string()}, options);
  EXPECT_EQ(r.status, 130);
  EXPECT_TRUE(r.tensors.empty());
}

// Found by fuzz_hash: options that ask no digest of the tensors' bytes (no algorithm, the default
// HashOptions; or none per tensor and none over the model) hung: a piece read that no digest read
// held its buffer forever, and the only thread waited for it. The tensors are listed, nothing
// hashed.
TEST(HashEngine, NoDigestAskedOfTheTensorsStillFinishes) {
  const TempDir dir;
  const auto path = dir.write("varied.gguf", write_bytes(document({}, varied_tensors())));
  HashOptions none;  // the defaults: no algorithm
  HashOptions model_only_off;
  model_only_off.algorithms.sha1 = true;
  model_only_off.per_tensor = false;
  model_only_off.whole_model = false;
  for (HashOptions options : {none, model_only_off}) {
    for (const unsigned threads : {1U, 2U}) {
      options.threads = threads;
      const HashResult r = hash_model({path.string()}, options);
      ASSERT_EQ(r.status, 0) << r.error;
      EXPECT_EQ(r.tensors.size(), varied_tensors().size());
      for (const TensorHash& t : r.tensors) EXPECT_EQ(t.sha1, Sha1Digest{});
      EXPECT_EQ(r.sha1, Sha1Digest{});
    }
  }
}

// --- hostile files ------------------------------------------------------------------------

// Tensor infos that claim terabytes of data, or elements past 2^63, with none behind them: refused
// from the header alone, nothing allocated for the claim, nothing read.
TEST(HashHostile, HugeClaimsAreRefusedWithoutAllocating) {
  const TempDir dir;
  struct Case {
    std::string name;
    Tensor tensor;
    std::string why;
  };
  std::vector<Case> cases = {
      {"terabytes.gguf", tensor("w", {std::uint64_t{1} << 38, 4}, kF32), "is not inside the file"},
      {"wraps.gguf", tensor("w", {std::uint64_t{1} << 32, std::uint64_t{1} << 32}, kF16),
       "no byte size"},
      {"far-offset.gguf", tensor("w", {8}, kF32, std::uint64_t{1} << 62), "is not inside"},
  };
  for (Case& c : cases) {
    c.tensor.data = ByteVector{};
    const auto path = dir.write(c.name, write_bytes(document({}, {c.tensor})));
    const PeakProbe probe;
    HashOptions options;
    options.algorithms.sha256 = true;
    const HashResult r = hash_model({path.string()}, options);
    EXPECT_EQ(r.status, 1) << c.name;
    EXPECT_NE(r.error.find(c.why), std::string::npos) << r.error;
    EXPECT_LT(probe.peak(), std::size_t{4} << 20) << c.name;
    const CapturedRun cli = in_dir(dir, {"hash", c.name});
    EXPECT_EQ(cli.status, 1) << cli;
    EXPECT_EQ(cli.out, "");
    EXPECT_NE(cli.err.find("cannot hash: " + c.name + ": tensor[0] \"w\""), std::string::npos)
        << cli;
  }
}

// Many tensors over the same bytes would make the work the count times the file: refused.
TEST(HashHostile, OverlappingTensorsAreRefused) {
  const TempDir dir;
  std::vector<Tensor> tensors;
  for (int i = 0; i < 1000; ++i) {
    Tensor t = tensor("w" + std::to_string(i), {1024}, kF32, 0);
    t.data = i == 0 ? ByteVector(4096, 1) : ByteVector{};
    tensors.push_back(std::move(t));
  }
  const auto path = dir.write("overlap.gguf", write_bytes(document({}, tensors)));
  HashOptions options;
  options.algorithms.xxh64 = true;
  const HashResult r = hash_model({path.string()}, options);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.error.find("overlap"), std::string::npos) << r.error;
}

TEST(HashHostile, UnreadableAndBrokenFilesExitAsCheckDoes) {
  const TempDir dir;
  const ByteVector golden = golden_bytes();
  dir.write("cut.gguf", prefix(golden, golden.size() - 32));  // the last tensor's data cut
  dir.write("header.gguf", prefix(golden, 20));
  dir.write("text.gguf", ByteVector{'h', 'e', 'l', 'l', 'o'});
  const CapturedRun missing = in_dir(dir, {"hash", "missing.gguf"});
  EXPECT_EQ(missing.status, 2) << missing;
  EXPECT_NE(missing.err.find("missing.gguf"), std::string::npos);
  for (const char* name : {"cut.gguf", "header.gguf", "text.gguf"}) {
    const CapturedRun r = in_dir(dir, {"hash", "--sha256", name});
    EXPECT_EQ(r.status, 1) << name << r;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_NE(r.err.find(std::string("ggufcheck: cannot hash: ") + name), std::string::npos) << r;
  }
  // A directory of files: each hashed or refused, the worst status wins, the good output stays.
  dir.write("sub/golden.gguf", golden);
  dir.write("sub/zcut.gguf", prefix(golden, golden.size() - 32));
  const CapturedRun both = in_dir(dir, {"hash", "--no-layer", "sub"});
  EXPECT_EQ(both.status, 1) << both;
  EXPECT_EQ(both.out, std::string("xxh64     ") + kXxhAbcd + "  sub/golden.gguf\n");
  const CapturedRun stdin_run = in_dir(dir, {"hash", "-"});
  EXPECT_EQ(stdin_run.status, 3) << stdin_run;
}

// A 256 MiB tensor (a sparse file: its pages cost nothing) hashed in the ring's memory: the peak
// is the ring's (8 MiB on two threads), not the tensor's.
TEST(HashHostile, MemoryStaysBoundedWhateverTheSize) {
  const TempDir dir;
  constexpr std::uint64_t kElements = std::uint64_t{1} << 26;  // 256 MiB of F32
  Tensor big = tensor("big", {kElements}, kF32);
  big.data = ByteVector{};
  const Written head = write(document({}, {big}));
  const auto path = dir.write("big.gguf", head.bytes);
  ASSERT_EQ(::truncate(path.c_str(),
                       static_cast<off_t>(head.layout.tensors[0].data_position + kElements * 4)),
            0);
  const PeakProbe probe;
  HashOptions options;
  options.algorithms.xxh64 = true;
  options.per_tensor = false;
  options.threads = 2;
  const HashResult r = hash_model({path.string()}, options);
  ASSERT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(r.tensor_bytes, kElements * 4);
  RecordProperty("peak_heap_bytes", static_cast<int>(probe.peak()));
  EXPECT_LT(probe.peak(), std::size_t{32} << 20);
  const CapturedRun cli = in_dir(dir, {"hash", "--no-layer", "big.gguf"});
  EXPECT_EQ(cli.status, 0) << cli;
  RecordProperty("peak_rss_kib", static_cast<int>(cli.max_rss_kib));
  EXPECT_LT(cli.max_rss_kib, 256 * 1024);
}

// Ctrl-C: exit 130, nothing on stdout. The signal is sent once the CLI has opened the file (its
// handler is set by then); a 64 GiB sparse file takes far longer to hash than a signal to land.
TEST(HashCli, InterruptWritesNothing) {
  const TempDir dir;
  Tensor big = tensor("big", {std::uint64_t{1} << 34}, kF32);
  big.data = ByteVector{};
  const Written head = write(document({}, {big}));
  const auto path = dir.write("huge.gguf", head.bytes);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(head.layout.tensors[0].data_position +
                                                        (std::uint64_t{1} << 36))),
            0);
  const int watch = ::inotify_init1(IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, path.c_str(), IN_OPEN), 0);
  CaptureOptions options;
  options.cwd = dir.path().string();
  options.started = [watch](pid_t child) {
    char event[4096];
    (void)::read(watch, event, sizeof event);  // blocks until the CLI opens the file
    ::kill(child, SIGINT);
  };
  const CapturedRun r = run_cli_captured({"hash", "--sha256", "huge.gguf"}, options);
  ::close(watch);
  EXPECT_EQ(r.status, 130) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r;
}

// --- --check, as llama-gguf-hash --check -------------------------------------------------

TEST(HashCheck, VerdictsAndExitCodesAreLlamaGgufHashs) {
  const TempDir dir;
  dir.write("golden.gguf", golden_bytes());
  const std::string all = in_dir(dir, {"hash", "--all", "golden.gguf"}).out;
  write_text(dir.path() / "all.manifest", all);
  // One tensor's sha256 wrong.
  std::string bad = all;
  bad.replace(bad.find(kSha256D), 64, std::string(64, '0'));
  write_text(dir.path() / "bad.manifest", bad);
  write_text(dir.path() / "other.manifest", "sha256    00  other.gguf\n");
  write_text(dir.path() / "unknown.manifest", "md5 00 golden.gguf\n");

  CapturedRun ok = in_dir(dir, {"hash", "--check", "all.manifest", "golden.gguf"});
  EXPECT_EQ(ok.status, 0) << ok;
  EXPECT_EQ(ok.out, std::string("manifest  all.manifest  sha256  sha1  xxh64\n") + "sha256    " +
                        kSha256Abc + "  golden.gguf:t.abc  -  Ok\nsha256    " + kSha256D +
                        "  golden.gguf:t.d  -  Ok\nsha256    " + kSha256Abcd +
                        "  golden.gguf  -  Ok\n\nVerification results for all.manifest - "
                        "Success\n");
  const CapturedRun mismatch = in_dir(dir, {"hash", "-c", "bad.manifest", "golden.gguf"});
  EXPECT_EQ(mismatch.status, 1) << mismatch;
  EXPECT_NE(mismatch.out.find("golden.gguf:t.d  -  Mismatch\n"), std::string::npos);
  EXPECT_NE(mismatch.out.find("- Failure\n"), std::string::npos);
  const CapturedRun missing = in_dir(dir, {"hash", "--check", "other.manifest", "golden.gguf"});
  EXPECT_EQ(missing.status, 3) << missing;
  EXPECT_NE(missing.out.find("  -  Not Found\n"), std::string::npos);
  EXPECT_NE(missing.out.find("- Manifest Missing Entry\n"), std::string::npos);
  const CapturedRun unknown = in_dir(dir, {"hash", "--check", "unknown.manifest", "golden.gguf"});
  EXPECT_EQ(unknown.status, 4) << unknown;
  EXPECT_EQ(unknown.out, "ERROR manifest does not have any known hash format in unknown.manifest");
  const CapturedRun absent = in_dir(dir, {"hash", "--check", "absent.manifest", "golden.gguf"});
  EXPECT_EQ(absent.status, 5) << absent;
  EXPECT_EQ(absent.out, "ERROR cannot open manifest absent.manifest");
  // Its UUID check looks the UUID up among the sha256 lines: a Mismatch, so a Failure.
  const CapturedRun uuid =
      in_dir(dir, {"hash", "--check", "all.manifest", "--uuid", "golden.gguf"});
  EXPECT_EQ(uuid.status, 1) << uuid;
  EXPECT_EQ(uuid.out, std::string("manifest  all.manifest  sha256  sha1  xxh64\nuuid      ") +
                          kUuidAbcd +
                          "  golden.gguf  -  Mismatch\n\nVerification results for all.manifest - "
                          "Failure\n");
  EXPECT_NE(uuid.err.find("never matches"), std::string::npos);
}

// --- the JSON manifest and verify ------------------------------------------------------------

struct Model {
  std::vector<Tensor> tensors;
  std::vector<KeyValue> pairs;
};

Model base_model() {
  Tensor c = bytes_tensor("c", std::string(34, 'c'), kQ8_0);
  c.dims = {32};  // one Q8_0 block: 34 bytes
  return {{bytes_tensor("a", std::string(64, 'a'), kI8),
           bytes_tensor("b", std::string(96, 'b'), kI8), c},
          {}};
}

void save(const TempDir& dir, const std::string& name, const Model& m) {
  dir.write(name, write_bytes(document(m.pairs, m.tensors)));
}

TEST(HashJson, ManifestRecordsEveryTensorAndTheMerkleRoot) {
  const TempDir dir;
  save(dir, "m.gguf", base_model());
  const CapturedRun r = in_dir(dir, {"hash", "--format", "json", "--xxh64", "--uuid", "m.gguf"});
  ASSERT_EQ(r.status, 0) << r;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["format"], "ggufcheck-hash-manifest");
  EXPECT_EQ(j["version"], 1);
  ASSERT_EQ(j["models"].size(), 1U);
  const json& model = j["models"][0];
  const ByteVector bytes = read_file(dir.path() / "m.gguf");
  EXPECT_EQ(model["files"][0]["path"], "m.gguf");
  EXPECT_EQ(model["files"][0]["size"], bytes.size());
  EXPECT_EQ(model["tensor_count"], 3);
  EXPECT_EQ(model["tensor_bytes"], 64 + 96 + 34);
  ASSERT_EQ(model["tensors"].size(), 3U);
  EXPECT_EQ(model["tensors"][2]["type"], "Q8_0");
  EXPECT_EQ(model["tensors"][2]["type_id"], kQ8_0);
  EXPECT_EQ(model["tensors"][2]["shape"], json::array({32}));
  EXPECT_EQ(model["tensors"][0]["sha256"], hex(detail::sha256_of(std::string(64, 'a').data(), 64)));
  std::vector<Sha256Digest> leaves;
  for (const json& t : model["tensors"]) {
    Sha256Digest d{};
    const std::string h = t["sha256"];
    for (std::size_t i = 0; i < 32; ++i) {
      d[i] = static_cast<std::uint8_t>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
    }
    leaves.push_back(d);
    EXPECT_TRUE(t.contains("xxh64"));
  }
  EXPECT_EQ(model["digests"]["merkle_root"], hex(merkle_root(leaves)));
  EXPECT_TRUE(model["digests"].contains("uuid"));
  const ManifestRead read = parse_manifest(r.out);
  ASSERT_TRUE(read.manifest) << read.error;
  EXPECT_EQ(read.manifest->models[0].tensors.size(), 3U);
}

// The manifest's strings escape DEL, C1 controls and bidi overrides as \uXXXX (JSON reads them
// back as the same name), so `cat`ing a manifest cannot drive the terminal.
TEST(HashJson, ControlCharactersInNamesAreEscaped) {
  const TempDir dir;
  const std::string name =
      "csi\xC2\x9B"
      "1m rlo\xE2\x80\xAE"
      "x pdi\xE2\x81\xA9"
      "y del\x7F";
  save(dir, "c.gguf", {{bytes_tensor(name, "abc")}, {}});
  const CapturedRun r = in_dir(dir, {"hash", "--format", "json", "c.gguf"});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find(R"("name": "csi\u009b1m rlo\u202ex pdi\u2069y del\u007f")"),
            std::string::npos)
      << r.out;
  for (const char* raw : {"\xC2\x9B", "\xE2\x80\xAE", "\xE2\x81\xA9", "\x7F"}) {
    EXPECT_EQ(r.out.find(raw), std::string::npos);
  }
  const ManifestRead read = parse_manifest(r.out);
  ASSERT_TRUE(read.manifest) << read.error;
  EXPECT_EQ(read.manifest->models[0].tensors[0].name, name);
  write_text(dir.path() / "c.json", r.out);
  EXPECT_EQ(in_dir(dir, {"verify", "c.json"}).status, 0);
}

// A split set named by its first shard: one model, its shards' tensors in order.
TEST(HashJson, ASplitSetIsOneModel) {
  const TempDir dir;
  const std::vector<Document> shards = model_shards(2);
  dir.write("m-00001-of-00002.gguf", write_bytes(shards[0]));
  dir.write("m-00002-of-00002.gguf", write_bytes(shards[1]));
  const CapturedRun r = in_dir(dir, {"hash", "--format", "json", "m-00001-of-00002.gguf"});
  ASSERT_EQ(r.status, 0) << r;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["models"].size(), 1U);
  const json& model = j["models"][0];
  ASSERT_EQ(model["files"].size(), 2U);
  EXPECT_EQ(model["files"][1]["path"], "m-00002-of-00002.gguf");
  EXPECT_EQ(model["tensor_count"], shards[0].tensors.size() + shards[1].tensors.size());
  EXPECT_EQ(model["tensors"].back()["file"], 1);
  write_text(dir.path() / "m.json", r.out);
  const CapturedRun v = in_dir(dir, {"verify", "m.json"});
  EXPECT_EQ(v.status, 0) << v;
  EXPECT_NE(v.out.find("m-00001-of-00002.gguf (2 files): OK"), std::string::npos) << v;
}

class Verify : public ::testing::Test {
 protected:
  void SetUp() override {
    save(dir_, "m.gguf", base_model());
    const CapturedRun r = in_dir(dir_, {"hash", "--format", "json", "m.gguf"});
    ASSERT_EQ(r.status, 0) << r;
    write_text(dir_.path() / "m.json", r.out);
  }
  CapturedRun verify(const Model& m, std::vector<std::string> extra = {}) {
    save(dir_, "other.gguf", m);
    std::vector<std::string> args = {"verify", "m.json", "other.gguf"};
    args.insert(args.begin() + 1, extra.begin(), extra.end());
    return in_dir(dir_, args);
  }
  TempDir dir_;
};

TEST_F(Verify, Identical) {
  const CapturedRun r = in_dir(dir_, {"verify", "m.json"});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_EQ(r.out, "m.gguf: OK, 3 tensors (194 bytes of tensor data) as in the manifest\n");
  EXPECT_EQ(verify(base_model()).status, 0);
}

TEST_F(Verify, OneTensorChangedIsNamed) {
  Model m = base_model();
  m.tensors[1].data->at(5) = 'x';
  const CapturedRun r = verify(m);
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("other.gguf: tensor \"b\": data differs (sha256 "), std::string::npos) << r;
  EXPECT_EQ(r.out.find("tensor \"a\""), std::string::npos) << r;
  EXPECT_NE(r.out.find("other.gguf: 1 difference from the manifest\n"), std::string::npos) << r;
}

TEST_F(Verify, MissingAndExtraTensors) {
  Model m = base_model();
  m.tensors.erase(m.tensors.begin());
  m.tensors.push_back(bytes_tensor("d", "dddd"));
  const CapturedRun r = verify(m, {"--ignore-header"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("tensor \"a\": missing (in the manifest, not in the file)"),
            std::string::npos)
      << r;
  EXPECT_NE(r.out.find("tensor \"d\": extra (in the file, not in the manifest)"), std::string::npos)
      << r;
  // The padding after the last tensor differs too (30 bytes, now 28).
  EXPECT_NE(r.out.find("other.gguf: the bytes outside the header and the tensors"),
            std::string::npos)
      << r;
  EXPECT_NE(r.out.find("3 differences"), std::string::npos) << r;
}

TEST_F(Verify, TypeAndShapeChanges) {
  Model m = base_model();
  m.tensors[0] = bytes_tensor("a", std::string(64, 'a'), kI8);
  m.tensors[0].dims = {32, 2};  // the same bytes in another shape
  m.tensors[1].type = kF32;     // the same 96 bytes as 24 floats
  m.tensors[1].dims = {24};
  const CapturedRun r = verify(m, {"--ignore-header"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("tensor \"a\": shape [64] in the manifest, [32, 2] in the file\n"),
            std::string::npos)
      << r;
  EXPECT_NE(r.out.find("tensor \"b\": type I8 in the manifest, F32 in the file; shape [96] in "
                       "the manifest, [24] in the file\n"),
            std::string::npos)
      << r;
}

TEST_F(Verify, EditedMetadataIsAHeaderDifferenceUnlessIgnored) {
  Model m = base_model();
  m.pairs.push_back(pair("general.name", Value::string("renamed")));
  const CapturedRun r = verify(m);
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("other.gguf: the header (metadata and tensor infos"), std::string::npos)
      << r;
  EXPECT_EQ(verify(m, {"--ignore-header"}).status, 0);
}

TEST_F(Verify, TruncatedFile) {
  const ByteVector bytes = read_file(dir_.path() / "m.gguf");
  dir_.write("cut.gguf", prefix(bytes, bytes.size() - 40));
  const CapturedRun r = in_dir(dir_, {"verify", "m.json", "cut.gguf"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("cannot verify: cut.gguf: tensor[2] \"c\": its data"), std::string::npos)
      << r;
  const CapturedRun gone = in_dir(dir_, {"verify", "m.json", "gone.gguf"});
  EXPECT_EQ(gone.status, 2) << gone;
}

TEST_F(Verify, GeneralUuidThatIsNotTheDataUuid) {
  Model m = base_model();
  m.pairs.push_back(pair("general.uuid", Value::string("00000000-0000-5000-8000-000000000000")));
  const CapturedRun r = verify(m, {"--ignore-header"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("general.uuid is 00000000-0000-5000-8000-000000000000, but the UUID of "
                       "the tensor data (llama-gguf-hash --uuid) is "),
            std::string::npos)
      << r;
  // The right one (from hash --uuid) passes, in capitals too.
  save(dir_, "other.gguf", base_model());
  const std::string line = in_dir(dir_, {"hash", "--uuid", "other.gguf"}).out;
  std::string uuid = line.substr(10, 36);
  std::transform(uuid.begin(), uuid.end(), uuid.begin(), ::toupper);
  m.pairs.back() = pair("general.uuid", Value::string(uuid));
  EXPECT_EQ(verify(m, {"--ignore-header"}).status, 0);
  // hash --uuid says it on stderr, its output unchanged.
  m.pairs.back() = pair("general.uuid", Value::string("00000000-0000-5000-8000-000000000000"));
  save(dir_, "other.gguf", m);
  const CapturedRun h = in_dir(dir_, {"hash", "--uuid", "other.gguf"});
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.err.find("warning: general.uuid is 00000000-0000-5000-8000-000000000000"),
            std::string::npos)
      << h;
}

// Every byte of the file is compared: the header, the tensors, and the bytes between and after
// them (padding, gaps, trailing bytes), which no tensor digest covers.
TEST_F(Verify, PaddingAndTrailingBytesAreCompared) {
  ByteVector bytes = read_file(dir_.path() / "m.gguf");
  // Tensors of 64, 96 and 34 bytes: 30 bytes of padding after the last; one of them changed.
  bytes[bytes.size() - 1] = 'X';
  dir_.write("padded.gguf", bytes);
  const CapturedRun r = in_dir(dir_, {"verify", "m.json", "padded.gguf"});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_NE(r.out.find("padded.gguf: the bytes outside the header and the tensors (alignment "
                       "padding, gaps, trailing bytes) differ from the manifest's"),
            std::string::npos)
      << r;
  const json manifest = json::parse(read_text(dir_.path() / "m.json"));
  const json& file = manifest["models"][0]["files"][0];
  ASSERT_TRUE(file.contains("gap_bytes") && file.contains("data_start")) << file;
  EXPECT_EQ(file["gap_bytes"], 30);
  EXPECT_EQ(file["data_start"].get<std::uint64_t>() + 64 + 96 + 34 + 30, bytes.size());
  // 40 bytes after the data, with the header left out of the comparison: still a difference.
  bytes = read_file(dir_.path() / "m.gguf");
  bytes.insert(bytes.end(), 40, 'Z');
  dir_.write("longer.gguf", bytes);
  const CapturedRun longer = in_dir(dir_, {"verify", "--ignore-header", "m.json", "longer.gguf"});
  EXPECT_EQ(longer.status, 1) << longer;
  EXPECT_NE(longer.out.find("sha256 " + file["gaps_sha256"].get<std::string>().substr(0, 16) +
                            "... of 30 bytes in the manifest"),
            std::string::npos)
      << longer;
  EXPECT_NE(longer.out.find("of 70 bytes in the file"), std::string::npos) << longer;
  // A manifest of an earlier build (no gap digest) says exactly which ranges it did not compare.
  std::string old = read_text(dir_.path() / "m.json");
  const std::string cut = ", \"data_start\": " + std::to_string(file["data_start"].get<int>()) +
                          ", \"gap_bytes\": 30, \"gaps_sha256\": \"" +
                          file["gaps_sha256"].get<std::string>() + "\"";
  ASSERT_NE(old.find(cut), std::string::npos);
  old.erase(old.find(cut), cut.size());
  write_text(dir_.path() / "old.json", old);
  const std::uint64_t end = bytes.size() - 40;
  const CapturedRun noted = in_dir(dir_, {"verify", "old.json", "m.gguf"});
  EXPECT_EQ(noted.status, 0) << noted;
  EXPECT_NE(noted.out.find(fmt::format(
                "m.gguf: note: m.gguf: not compared: the 30 bytes outside the header and the "
                "tensors, in 1 range ([0x{:x}, 0x{:x})): the manifest records no gaps_sha256",
                end - 30, end)),
            std::string::npos)
      << noted;
}

// A manifest that disagrees with itself is not a manifest: refused (exit 2) before any file is
// read, naming the place, where it used to be compared as far as it went and pass.
TEST_F(Verify, InconsistentManifestsAreRefused) {
  const std::string good = read_text(dir_.path() / "m.json");
  // Each edit: from, to, what the error says.
  const std::vector<std::array<std::string, 3>> edits = {
      {"\"tensor_count\": 3,\n", "\"tensor_count\": 2,\n",
       "models[0]: tensor_count is 2, but 3 tensor records are listed"},
      {"\"tensor_count\": 3,\n", "", "models[0]: no tensor_count"},
      {"\"tensor_count\": 3, \"data_start\"", "\"tensor_count\": 2, \"data_start\"",
       "models[0]: the files' tensor_count add up to 2, the model's is 3"},
      {"\"tensor_bytes\": 194", "\"tensor_bytes\": 193",
       "models[0]: tensor_bytes is 193, but the tensors' nbytes add up to 194"},
      {"\"offset\": 64,", "\"offset\": 999999,", "models[0].tensors[1]: 96 bytes at offset 999999"},
      {"\"offset\": 64,", "\"offset\": 32,", "models[0]: tensors[0] and tensors[1] overlap"},
      {"\"offset\": 64, \"nbytes\": 96, ", "", "models[0].tensors[1]: no offset"},
      {"\"file\": 0, \"type\": \"I8\", \"type_id\": 24, \"shape\": [96]",
       "\"type\": \"I8\", \"type_id\": 24, \"shape\": [96]", "models[0].tensors[1]: no file"},
      {"\"gap_bytes\": 30", "\"gap_bytes\": 20", "models[0].files[0]: gap_bytes is 20"},
      {"\"path\": \"m.gguf\"", "\"path\": \"m.gguf\\u0000.evil\"",
       "models[0].files[0]: the path holds a NUL byte"},
      {"\"merkle_root\": \"", "\"merkle_root\": \"0", ""},  // bad hex: already refused
  };
  for (const auto& [from, to, says] : edits) {
    std::string text = good;
    ASSERT_NE(text.find(from), std::string::npos) << from;
    text.replace(text.find(from), from.size(), to);
    write_text(dir_.path() / "bad.json", text);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"verify", "bad.json"},
          std::vector<std::string>{"verify", "bad.json", "m.gguf"}}) {
      const CapturedRun r = in_dir(dir_, args);
      EXPECT_EQ(r.status, 2) << from << " -> " << to << r;
      EXPECT_EQ(r.out, "") << from;
      EXPECT_NE(r.err.find("ggufcheck: cannot verify: bad.json: " + says), std::string::npos) << r;
    }
  }
  // A manifest that declares sha1 (hash --sha1) needs it on every tensor.
  const CapturedRun sha1 = in_dir(dir_, {"hash", "--format", "json", "--sha1", "m.gguf"});
  ASSERT_EQ(sha1.status, 0) << sha1;
  std::string text = sha1.out;
  const std::size_t at = text.find(", \"sha1\": \"", text.find("\"name\": \"b\""));
  ASSERT_NE(at, std::string::npos);
  text.erase(at, 11 + 40 + 1);
  write_text(dir_.path() / "bad.json", text);
  const CapturedRun missing = in_dir(dir_, {"verify", "bad.json"});
  EXPECT_EQ(missing.status, 2) << missing;
  EXPECT_NE(missing.err.find("models[0].tensors[1]: no sha1, which the model's digests declare"),
            std::string::npos)
      << missing;
  // A Merkle root that is not the tensors' (an edited digest) is refused the same way.
  text = good;
  const std::size_t digest = text.find("\"sha256\": \"", text.find("\"name\": \"a\"")) + 11;
  text[digest] = text[digest] == '0' ? '1' : '0';
  write_text(dir_.path() / "bad.json", text);
  const CapturedRun root = in_dir(dir_, {"verify", "bad.json"});
  EXPECT_EQ(root.status, 2) << root;
  EXPECT_NE(root.err.find("models[0].digests.merkle_root: not the root of the tensors' sha256"),
            std::string::npos)
      << root;
}

// Paths from a manifest reach the terminal escaped (ESC, BEL, OSC, bidi overrides), and a NUL
// cannot cut the name of the file opened.
TEST_F(Verify, ManifestPathsAreEscaped) {
  const std::string evil = "m\x1b]0;owned\x07\xE2\x80\xAE.gguf";
  save(dir_, evil, base_model());
  std::string text = read_text(dir_.path() / "m.json");
  const std::string from = "\"path\": \"m.gguf\"";
  text.replace(text.find(from), from.size(), "\"path\": \"m\\u001b]0;owned\\u0007\\u202e.gguf\"");
  write_text(dir_.path() / "evil.json", text);
  const CapturedRun r = in_dir(dir_, {"verify", "evil.json"});
  EXPECT_EQ(r.status, 0) << r;  // the same bytes under another name
  const std::string shown = "m\\x1b]0;owned\\x07\\xe2\\x80\\xae.gguf";
  EXPECT_EQ(r.out.rfind(shown + ": ", 0), 0U) << r;
  for (const std::string& stream : {r.out, r.err}) {
    for (const char raw : {'\x1b', '\x07'}) {
      EXPECT_EQ(stream.find(raw), std::string::npos) << r;
    }
    EXPECT_EQ(stream.find("\xE2\x80\xAE"), std::string::npos) << r;
  }
  std::filesystem::remove(dir_.path() / evil);
  const CapturedRun gone = in_dir(dir_, {"verify", "evil.json"});
  EXPECT_EQ(gone.status, 2) << gone;
  EXPECT_NE(gone.err.find("cannot open " + shown), std::string::npos) << gone;
  EXPECT_EQ(gone.err.find('\x1b'), std::string::npos) << gone;
}

TEST_F(Verify, MalformedManifestsAreClearErrors) {
  const std::string good = read_text(dir_.path() / "m.json");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not JSON"},
      {"[]", "the manifest is not a JSON object"},
      {"{\"format\": \"ggufcheck-hash-manifest\"", "not JSON"},
      {"{\"version\": 1, \"models\": []}", "no \"format\""},
      {"{\"format\": \"ggufcheck-hash-manifest\", \"version\": 2}", "version 2"},
      {"{\"format\": \"ggufcheck-hash-manifest\", \"version\": 1, \"models\": 7}",
       "models: expected an array"},
      {"{\"format\": \"ggufcheck-hash-manifest\", \"version\": 1, \"models\": []}", "no model"},
      {std::string(100000, '['), "the manifest is not a JSON object"},
      {"{\"x\": " + std::string(100000, '['), "x[0][0][0][0][0][0][0]: nested deeper"},
  };
  std::vector<std::pair<std::string, std::string>> edits = {
      {"\"size\": ", "\"size\": -"},
      {"\"sha256\": \"", "\"sha256\": \"zz"},
      {"\"file\": 0", "\"file\": 9"},
      {"\"shape\": [", "\"shape\": [{}, "},
      {"\"tensors\": [", "\"tensors\": [\"x\", "},
  };
  std::vector<std::pair<std::string, std::string>> all = cases;
  for (const auto& [from, to] : edits) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    all.emplace_back(text, "");
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    write_text(dir_.path() / "bad.json", all[i].first);
    const CapturedRun r = in_dir(dir_, {"verify", "bad.json", "m.gguf"});
    EXPECT_EQ(r.status, 2) << i << r;
    EXPECT_EQ(r.out, "") << i;
    EXPECT_NE(r.err.find("ggufcheck: cannot verify: bad.json: " + all[i].second), std::string::npos)
        << i << r;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << i << r;  // one line
  }
}

// Member names are matched whole: a key spelling a schema path ("models.#.files") or an array
// position ("#") is an unknown member, never a place in the schema (a fuzzer found the first
// reading a file of a model that did not exist).
TEST(HashManifest, KeysSpellingSchemaPathsAreUnknownMembers) {
  const std::string head = "{\"format\": \"ggufcheck-hash-manifest\", \"version\": 1, ";
  for (const std::string& odd :
       {std::string("\"models.#.files\": [{}]"), std::string("\"models.#\": {\"files\": [{}]}"),
        std::string("\"models\": [], \"#\": {\"tensors\": [{}]}")}) {
    const ManifestRead read = parse_manifest(head + odd + "}");
    EXPECT_FALSE(read.manifest.has_value()) << odd;
    EXPECT_NE(read.error.find("no model"), std::string::npos) << odd << ": " << read.error;
  }
}

TEST(HashCli, HelpAndUsage) {
  const CapturedRun hash = run_cli_captured({"hash", "--help"});
  EXPECT_EQ(hash.status, 0);
  for (const char* word : {"--xxh64", "--sha1", "--sha256", "--uuid", "--all", "--no-layer",
                           "--check", "--format", "--jobs", "Exit status", "llama-gguf-hash"}) {
    EXPECT_NE(hash.out.find(word), std::string::npos) << word << hash;
  }
  const CapturedRun verify = run_cli_captured({"verify", "--help"});
  EXPECT_EQ(verify.status, 0);
  for (const char* word : {"MANIFEST", "--ignore-header", "Exit status", "0 identical"}) {
    EXPECT_NE(verify.out.find(word), std::string::npos) << word << verify;
  }
  EXPECT_EQ(run_cli_captured({"hash"}).status, 3);
  EXPECT_EQ(run_cli_captured({"verify"}).status, 3);
  EXPECT_EQ(run_cli_captured({"hash", "--format", "yaml", "x.gguf"}).status, 3);
  EXPECT_EQ(run_cli_captured({"hash", "--format", "json", "--check", "m", "x.gguf"}).status, 3);
  const CapturedRun typo = run_cli_captured({"hsah", "x"});
  EXPECT_EQ(typo.status, 3);
  EXPECT_NE(typo.err.find("did you mean 'hash'?"), std::string::npos) << typo;
}

}  // namespace
}  // namespace ggufcheck::testing

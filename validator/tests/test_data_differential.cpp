// The tensor data check against llama.cpp's own: ggml_validate_row_data from the pinned
// libggml-base.so. ggufcheck's verdict on a tensor's data (it passes llama.cpp's check when the
// type is not q8_1, which ggml refuses, and scan_blocks finds no non-finite value) must equal
// ggml's on every generated tensor, and where ggml names a block (or counts bf16 values) the
// kernels must name the same. Every tensor is also read a third way, through the block tables of
// the test kit (data_cases.hpp), and scanned by every SIMD target this CPU runs. What ggufcheck
// reports beyond ggml (docs/llama-cpp-divergences.md, "Tensor data") is asserted as a list.
//
// ggml runs only in a child process, forked once: it dlopens the library, reads requests (type,
// size, bytes) from a socket, and answers with ggml's verdict and everything it printed (stderr
// is a memfd in the child; the ggml log callback is captured too).
//
// Environment:
//   GGUFCHECK_DATA_SEED     seed of the generated tensors (default kDefaultSeed)
//   GGUFCHECK_DATA_TENSORS  number of generated tensors (default kDefaultTensors)
//   GGUFCHECK_DATA_FIRST    index of the first one (default 0); tensor i depends only on the seed
//                           and i, so FIRST=i TENSORS=1 reproduces one
//   GGUFCHECK_REFERENCE_GGML_LIB  the libggml-base.so to test against
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "container_options.hpp"
#include "data/kernels.hpp"
#include "data_cases.hpp"
#include "ggml_abi.hpp"
#include "ggml_reference.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;
using detail::BlockScan;
using detail::DataField;
using detail::DataTally;

constexpr std::uint64_t kDefaultSeed = 20261014;
constexpr std::uint64_t kDefaultTensors = 12000;
constexpr std::uint32_t kQ8_1 = 9;
constexpr std::uint32_t kBf16 = 30;
constexpr std::uint32_t kNvfp4 = 40;
constexpr unsigned kChildTimeLimitSeconds = 30;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

// --- ggml in a child process ------------------------------------------------------------------

struct Request {
  std::uint32_t type;
  std::uint32_t reserved;
  std::uint64_t nbytes;
};

struct AnswerHeader {
  std::uint8_t ok;
  std::uint8_t reserved[3];
  std::uint32_t log_size;
};

bool send_all(int socket, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::send(socket, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool receive_all(int socket, void* data, std::size_t size) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(socket, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool send_answer(int socket, bool ok, const std::string& log) {
  const AnswerHeader header{
      static_cast<std::uint8_t>(ok ? 1 : 0), {}, static_cast<std::uint32_t>(log.size())};
  return send_all(socket, &header, sizeof header) && send_all(socket, log.data(), log.size());
}

void append_log(int /*level*/, const char* text, void* user_data) {
  if (text != nullptr) static_cast<std::string*>(user_data)->append(text);
}

// Everything written to fd 2 since the last call, which empties it.
std::string take_stderr() {
  std::fflush(stderr);
  std::string out;
  const off_t end = ::lseek(2, 0, SEEK_END);
  if (end > 0 && ::lseek(2, 0, SEEK_SET) == 0) {
    out.resize(static_cast<std::size_t>(end));
    std::size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::read(2, out.data() + got, out.size() - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    out.resize(got);
  }
  if (::ftruncate(2, 0) != 0 || ::lseek(2, 0, SEEK_SET) != 0) out += "\n(cannot reset stderr)";
  return out;
}

// The child: a first answer says whether the library loaded (its log is the reason when not),
// then one answer per request until the parent closes the socket.
[[noreturn]] void run_child(int socket, const std::string& library_path) {
  const int capture = ::memfd_create("ggml-stderr", 0);
  if (capture < 0 || ::dup2(capture, 2) < 0) {
    send_answer(socket, false, std::string("memfd/dup2 failed: ") + std::strerror(errno));
    ::_exit(1);
  }
  std::unique_ptr<ggml::Library> library;
  try {
    library = std::make_unique<ggml::Library>(library_path);
  } catch (const ggml::LoadError& e) {
    send_answer(socket, false, e.what());
    ::_exit(1);
  }
  const ggml::Api& api = library->api();
  std::string logged;
  api.ggml_log_set(append_log, &logged);
  static_cast<void>(take_stderr());
  if (!send_answer(socket, true, "")) ::_exit(1);
  std::vector<std::uint8_t> buffer;
  for (;;) {
    Request request{};
    if (!receive_all(socket, &request, sizeof request)) ::_exit(0);
    buffer.resize(request.nbytes);
    if (!receive_all(socket, buffer.data(), buffer.size())) ::_exit(1);
    logged.clear();
    ::alarm(kChildTimeLimitSeconds);  // a hang kills the child, which fails the test
    const bool ok =
        api.ggml_validate_row_data(static_cast<int>(request.type), buffer.data(), buffer.size());
    ::alarm(0);
    if (!send_answer(socket, ok, take_stderr() + logged)) ::_exit(1);
  }
}

struct GgmlAnswer {
  bool ok = false;
  std::string log;
  std::string failure;  // the child could not answer: why (it died, it could not start)
};

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped";
}

class GgmlChild {
 public:
  explicit GgmlChild(std::string library_path) : library_path_(std::move(library_path)) {}
  ~GgmlChild() { stop(); }
  GgmlChild(const GgmlChild&) = delete;
  GgmlChild& operator=(const GgmlChild&) = delete;

  // Starts the child when none runs (the first time, or after one died); "" when it runs.
  std::string start() {
    if (pid_ > 0) return "";
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      return std::string("socketpair: ") + std::strerror(errno);
    }
    std::fflush(nullptr);  // the child must not flush the parent's buffered output again
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(sockets[0]);
      ::close(sockets[1]);
      return std::string("fork: ") + std::strerror(errno);
    }
    if (pid == 0) {
      ::close(sockets[0]);
      run_child(sockets[1], library_path_);
    }
    ::close(sockets[1]);
    pid_ = pid;
    socket_ = sockets[0];
    const GgmlAnswer hello = receive();
    if (!hello.failure.empty()) return "the ggml child did not start: " + hello.failure;
    if (!hello.ok) {
      stop();
      return "the ggml child could not load the library: " + hello.log;
    }
    return "";
  }

  GgmlAnswer validate(std::uint32_t type, std::span<const std::uint8_t> bytes) {
    if (const std::string why = start(); !why.empty()) return {false, "", why};
    const Request request{type, 0, bytes.size()};
    if (!send_all(socket_, &request, sizeof request) ||
        !send_all(socket_, bytes.data(), bytes.size())) {
      return died();
    }
    return receive();
  }

 private:
  GgmlAnswer receive() {
    AnswerHeader header{};
    GgmlAnswer answer;
    if (!receive_all(socket_, &header, sizeof header)) return died();
    answer.ok = header.ok != 0;
    answer.log.resize(header.log_size);
    if (!receive_all(socket_, answer.log.data(), answer.log.size())) return died();
    return answer;
  }

  GgmlAnswer died() {
    ::close(socket_);
    socket_ = -1;
    int status = 0;
    const pid_t waited = ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return {
        false, "",
        waited > 0 ? "the ggml child died: " + describe_status(status) : "the ggml child is gone"};
  }

  void stop() {
    if (socket_ >= 0) ::close(socket_);  // the child sees the end of the requests and exits
    socket_ = -1;
    if (pid_ > 0) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
  }

  std::string library_path_;
  pid_t pid_ = -1;
  int socket_ = -1;
};

// One child for the whole program. A missing library skips the tests outside CI and fails them
// in CI; a library that is there but does not load, or a child that does not start, fails them.
struct GgmlStatus {
  GgmlChild* child = nullptr;
  std::string why_not;
  bool library_missing = false;
};

const GgmlStatus& ggml_status() {
  static std::unique_ptr<GgmlChild> child;
  static const GgmlStatus status = [] {
    GgmlStatus s;
    const std::string path = reference_library_path();
    if (!fs::exists(path)) {
      s.library_missing = true;
      s.why_not = "llama.cpp's libggml-base.so is missing (" + path +
                  "): run scripts/setup.sh, or set GGUFCHECK_REFERENCE_GGML_LIB";
      return s;
    }
    child = std::make_unique<GgmlChild>(path);
    s.why_not = child->start();
    if (s.why_not.empty()) s.child = child.get();
    return s;
  }();
  return status;
}

#define GGUFCHECK_NEED_GGML(name)                                                   \
  GgmlChild* const name = ggml_status().child;                                      \
  if (name == nullptr) {                                                            \
    if (in_ci() || !ggml_status().library_missing) FAIL() << ggml_status().why_not; \
    GTEST_SKIP() << ggml_status().why_not;                                          \
  }

// --- ggml's message ---------------------------------------------------------------------------

struct GgmlMessage {
  enum class What : std::uint8_t {
    None,         // nothing printed
    Value,        // "found inf|nan value at block I"
    InvalidE,     // "found invalid e value V at block I"
    Bf16Nans,     // "found K NaNs in row of N BF16 values"
    Bf16Infs,     // "found K infinities in row of N BF16 values"
    InvalidType,  // "invalid type N"
    InvalidSize,  // "invalid size N for type NAME (type size = S)"
    Unknown,
  };
  What what = What::None;
  data::Kind kind = data::Kind::Finite;  // Value
  std::uint64_t block = 0;               // Value, InvalidE
  std::uint64_t count = 0;               // Bf16*: K; InvalidE: V; InvalidType, InvalidSize: N
  std::uint64_t total = 0;               // Bf16*: N; InvalidSize: S
  std::string type_name;                 // InvalidSize
};

GgmlMessage parse_message(const std::string& log) {
  GgmlMessage m;
  if (log.empty()) return m;
  m.what = GgmlMessage::What::Unknown;
  static constexpr std::string_view kPrefix = "ggml_validate_row_data: ";
  // One line, prefixed, and nothing else.
  if (log.rfind(kPrefix, 0) != 0 || log.find('\n') != log.size() - 1) return m;
  const std::string line = log.substr(kPrefix.size(), log.size() - kPrefix.size() - 1);
  std::smatch match;
  const auto number = [&match](std::size_t i) { return std::stoull(match[i].str()); };
  static const std::regex value(R"(^found (inf|nan) value at block ([0-9]+)$)");
  static const std::regex invalid_e(R"(^found invalid e value ([0-9]+) at block ([0-9]+)$)");
  static const std::regex bf16(
      R"(^found ([0-9]+) (NaNs|infinities) in row of ([0-9]+) BF16 values$)");
  static const std::regex invalid_type(R"(^invalid type ([0-9]+)$)");
  static const std::regex invalid_size(
      R"(^invalid size ([0-9]+) for type ([A-Za-z0-9_]+) \(type size = ([0-9]+)\)$)");
  if (std::regex_match(line, match, value)) {
    m.what = GgmlMessage::What::Value;
    m.kind = match[1] == "inf" ? data::Kind::Inf : data::Kind::Nan;
    m.block = number(2);
  } else if (std::regex_match(line, match, invalid_e)) {
    m.what = GgmlMessage::What::InvalidE;
    m.count = number(1);
    m.block = number(2);
  } else if (std::regex_match(line, match, bf16)) {
    m.what = match[2] == "NaNs" ? GgmlMessage::What::Bf16Nans : GgmlMessage::What::Bf16Infs;
    m.count = number(1);
    m.total = number(3);
  } else if (std::regex_match(line, match, invalid_type)) {
    m.what = GgmlMessage::What::InvalidType;
    m.count = number(1);
  } else if (std::regex_match(line, match, invalid_size)) {
    m.what = GgmlMessage::What::InvalidSize;
    m.count = number(1);
    m.type_name = match[2];
    m.total = number(3);
  }
  return m;
}

// --- ggufcheck's side -------------------------------------------------------------------------

// ggufcheck's verdict on llama.cpp's check: q8_1 is refused by type, the rest by their values.
bool ggufcheck_passes(std::uint32_t type, const BlockScan& scan) {
  return type != kQ8_1 && scan.non_finite.count == 0;
}

std::string_view field_name(DataField field) {
  switch (field) {
    case DataField::None: return "none";
    case DataField::Element: return "element";
    case DataField::D: return "d";
    case DataField::M: return "m";
    case DataField::Dmin: return "dmin";
    case DataField::E: return "e";
    case DataField::HiddenScale: return "scale";
    case DataField::SubScale: return "d[s]";
  }
  return "?";
}

// The kind of the kernel's first bad value, from its bits and the encoding of the layout's field
// of that name.
data::Kind kind_of_first(std::uint32_t type, const DataTally& tally) {
  for (const data::Field& f : data::layout(type).fields) {
    if (f.checked && f.name == field_name(tally.field))
      return data::classify(f.encoding, tally.bits);
  }
  return data::Kind::Finite;
}

std::string describe(const DataTally& t) {
  std::string out = "count " + std::to_string(t.count) + " (nan " + std::to_string(t.nan) +
                    ", inf " + std::to_string(t.inf) + ")";
  if (t.count != 0) {
    char bits[24];
    std::snprintf(bits, sizeof bits, "0x%llx", static_cast<unsigned long long>(t.bits));
    out += ", first block " + std::to_string(t.first) + " " + std::string(field_name(t.field)) +
           (t.field == DataField::SubScale ? std::to_string(t.sub) : "") + " = " + bits;
  }
  return out;
}

std::string describe(const BlockScan& s) {
  return "non_finite " + describe(s.non_finite) + "; nvfp4_scale " + describe(s.nvfp4_scale) +
         "; nonzero " + (s.nonzero ? "true" : "false");
}

bool same_tally(const DataTally& a, const DataTally& b) {
  return a.count == b.count && a.nan == b.nan && a.inf == b.inf && a.first == b.first &&
         a.field == b.field && a.sub == b.sub && a.bits == b.bits;
}

bool same_scan(const BlockScan& a, const BlockScan& b) {
  return same_tally(a.non_finite, b.non_finite) && same_tally(a.nvfp4_scale, b.nvfp4_scale) &&
         a.nonzero == b.nonzero;
}

BlockScan scan(std::uint32_t type, std::span<const std::uint8_t> bytes) {
  return detail::scan_blocks(type, bytes.data(), bytes.size() / data::layout(type).block_bytes);
}

// What is wrong with one tensor ("" when ggml, the kernels on every target and the block tables
// agree). `extra_targets`: also scan with every SIMD target and from an odd address.
std::string compare(std::uint32_t type, std::span<const std::uint8_t> bytes, const BlockScan& ours,
                    const GgmlAnswer& ggml, bool extra_targets) {
  std::string problems;
  const auto problem = [&problems](const std::string& text) { problems += "\n    " + text; };
  const data::BlockLayout& layout = data::layout(type);
  const data::ExpectedScan expected = data::expected_scan(type, bytes);
  const GgmlMessage message = parse_message(ggml.log);

  // The verdict: ggml's, ggufcheck's, the tables'.
  if (ggml.ok != ggufcheck_passes(type, ours)) {
    problem(std::string("VERDICT: ggml ") + (ggml.ok ? "passes" : "fails") + ", ggufcheck " +
            (ggufcheck_passes(type, ours) ? "passes" : "fails"));
  }
  if (ggml.ok != expected.ggml_passes) {
    problem(std::string("the block tables say ggml ") +
            (expected.ggml_passes ? "passes" : "fails"));
  }
  if (ggml.ok != (message.what == GgmlMessage::What::None)) problem("ggml's verdict and message");

  // Where and what ggml found.
  if (type == kQ8_1) {
    if (message.what != GgmlMessage::What::InvalidType || message.count != kQ8_1) {
      problem("q8_1: ggml did not say \"invalid type 9\"");
    }
  } else if (type == kBf16 && !ggml.ok) {
    const bool nans = ours.non_finite.nan != 0;
    if (message.what != (nans ? GgmlMessage::What::Bf16Nans : GgmlMessage::What::Bf16Infs) ||
        message.count != (nans ? ours.non_finite.nan : ours.non_finite.inf) ||
        message.total != bytes.size() / 2) {
      problem("bf16: ggml's count is not the kernel's");
    }
  } else if (type == 39 && !ggml.ok) {
    if (message.what != GgmlMessage::What::InvalidE || message.count != 255 ||
        message.block != ours.non_finite.first || ours.non_finite.field != DataField::E) {
      problem("mxfp4: ggml's block is not the kernel's first");
    }
  } else if (!ggml.ok) {
    if (message.what != GgmlMessage::What::Value || message.block != ours.non_finite.first ||
        message.kind != kind_of_first(type, ours.non_finite)) {
      problem("ggml's block and kind are not the kernel's first (kernel's kind " +
              std::string(data::to_string(kind_of_first(type, ours.non_finite))) + ")");
    }
  }

  // The kernel's tally against the block tables' (what ggml does not print).
  const DataTally& t = ours.non_finite;
  if (type != kQ8_1 &&
      (t.count != expected.bad_blocks || t.nan != expected.nan_blocks ||
       t.inf != expected.inf_blocks || t.first != expected.first_bad ||
       (t.count != 0 && field_name(t.field) != layout.fields[expected.first_field].name))) {
    problem("the kernel's tally is not the block tables' (" + std::to_string(expected.bad_blocks) +
            " bad, nan " + std::to_string(expected.nan_blocks) + ", inf " +
            std::to_string(expected.inf_blocks) + ", first " +
            (expected.bad_blocks != 0 ? std::to_string(expected.first_bad) + " " +
                                            std::string(layout.fields[expected.first_field].name)
                                      : "none") +
            ")");
  }
  if (type == kQ8_1 && t.count != 0) problem("q8_1: the kernel tallied values");
  // The extras.
  if (ours.nvfp4_scale.count != expected.bad_scale_blocks ||
      ours.nvfp4_scale.first != expected.first_bad_scale) {
    problem("nvfp4 scale bytes: the kernel's tally is not the block tables' (" +
            std::to_string(expected.bad_scale_blocks) + " blocks)");
  }
  if (ours.nonzero != expected.nonzero) problem("nonzero is not the bytes'");

  if (extra_targets) {
    const std::string automatic(detail::kernel_target());
    for (const std::string& target : detail::kernel_targets()) {
      if (!detail::use_kernel_target(target)) {
        problem("target " + target + " cannot be pinned");
        continue;
      }
      const BlockScan pinned = scan(type, bytes);
      if (!same_scan(pinned, ours)) problem("target " + target + ": " + describe(pinned));
    }
    detail::use_kernel_target("");
    // The blocks of a tensor sit at any address (offsets are multiples of the alignment only).
    std::vector<std::uint8_t> shifted(bytes.size() + 1);
    std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
    const BlockScan odd = scan(type, std::span(shifted).subspan(1));
    if (!same_scan(odd, ours)) problem("from an odd address: " + describe(odd));
    if (detail::kernel_target() != automatic) problem("the automatic target was not restored");
  }
  if (!problems.empty()) {
    problems = "\n    ggml: " + std::string(ggml.ok ? "passes" : "fails") + ", log \"" + ggml.log +
               "\"\n    ggufcheck: " + describe(ours) + problems;
  }
  return problems;
}

// --- generated tensors ------------------------------------------------------------------------

enum class Group : std::uint8_t { Valid, Edges, Unchecked, Checked, Mixed, Zero };
constexpr std::array<std::string_view, 6> kGroupNames = {"valid",   "edges", "unchecked-plants",
                                                         "checked", "mixed", "all-zero"};

struct DataCase {
  data::TensorSpec spec;
  Group group = Group::Valid;
  std::uint64_t bytes_seed = 0;
  bool large = false;
};

std::uint64_t mix(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A block where bugs hide: the first, the last, SIMD vector edges, or anywhere.
std::uint64_t pick_block(std::mt19937_64& rng, std::uint64_t blocks) {
  static constexpr std::array<std::uint64_t, 10> kEdges = {7, 8, 15, 16, 31, 32, 63, 64, 127, 128};
  switch (rng() % 6) {
    case 0: return 0;
    case 1: return blocks - 1;
    case 2: return blocks > 1 ? blocks - 2 : 0;
    case 3: {
      const std::uint64_t b = kEdges[rng() % kEdges.size()];
      return b < blocks ? b : blocks - 1;
    }
    default: return rng() % blocks;
  }
}

// A value ggml rejects in a field of this encoding: a listed one, or a NaN with a random payload.
std::uint64_t rejected_bits(std::mt19937_64& rng, data::Encoding encoding) {
  const std::span<const std::uint64_t> listed = data::rejected_values(encoding);
  if (rng() % 4 != 0) return listed[rng() % listed.size()];
  const std::uint64_t r = rng();
  switch (encoding) {
    case data::Encoding::F16:
    case data::Encoding::Iq1mScale: return 0x7C00 | (r & 0x83FF);
    case data::Encoding::BF16: return 0x7F80 | (r & 0x807F);
    case data::Encoding::F32: return 0x7F800000 | (r & 0x807FFFFF);
    case data::Encoding::F64: return 0x7FF0000000000000 | (r & 0x800FFFFFFFFFFFFF);
    default: return listed[r % listed.size()];
  }
}

// What a raw plant writes: the byte patterns of a NaN or an infinity of some width.
data::Plant raw_plant(std::mt19937_64& rng, std::uint64_t block, std::uint32_t field,
                      const data::Field& f) {
  static constexpr std::array<std::uint32_t, 4> kWidths = {1, 2, 4, 8};
  std::uint32_t width = kWidths[rng() % kWidths.size()];
  while (width > f.size) width /= 2;
  const std::uint32_t at = static_cast<std::uint32_t>(rng() % (f.size - width + 1));
  std::uint64_t bits = 0;
  switch (width) {
    case 1: bits = std::array<std::uint64_t, 3>{0xFF, 0x7F, 0x80}[rng() % 3]; break;
    case 2:
      bits = rejected_bits(rng, rng() % 2 ? data::Encoding::F16 : data::Encoding::BF16);
      break;
    case 4: bits = rejected_bits(rng, data::Encoding::F32); break;
    default: bits = rejected_bits(rng, data::Encoding::F64); break;
  }
  return {block, field, bits, at, width};
}

// Tensor `index` of the campaign: every type in turn; sizes from 1 block to a few thousand, and
// 1 MiB for 3 rounds of types; the groups' contents as their names say.
DataCase make_case(std::uint64_t seed, std::uint64_t index) {
  const std::span<const std::uint32_t> types = data::data_types();
  std::mt19937_64 rng(mix(seed, index));
  DataCase c;
  c.spec.type = types[index % types.size()];
  const data::BlockLayout& layout = data::layout(c.spec.type);
  const std::uint64_t round = index / types.size();
  c.large = round % 100 == 50;
  if (c.large) {
    c.spec.blocks = (std::uint64_t{1} << 20) / layout.block_bytes + rng() % 3;
  } else if (const std::uint64_t r = rng() % 100; r < 10) {
    c.spec.blocks = 1;
  } else if (r < 70) {
    c.spec.blocks = 2 + rng() % 63;
  } else {
    // Log-uniform in 65..4096.
    const double exponent = 6.0 + static_cast<double>(rng() % 6001) / 1000.0;
    c.spec.blocks = std::max<std::uint64_t>(65, static_cast<std::uint64_t>(std::exp2(exponent)));
  }

  const std::uint64_t g = rng() % 100;
  c.group = g < 25   ? Group::Valid
            : g < 35 ? Group::Edges
            : g < 45 ? Group::Unchecked
            : g < 80 ? Group::Checked
            : g < 95 ? Group::Mixed
                     : Group::Zero;
  std::vector<std::uint32_t> checked = layout.checked_fields();
  std::vector<std::uint32_t> unchecked;
  for (std::uint32_t i = 0; i < layout.fields.size(); ++i) {
    if (!layout.fields[i].checked) unchecked.push_back(i);
  }
  if ((c.group == Group::Checked || c.group == Group::Mixed) && checked.empty()) {
    c.group = Group::Unchecked;
  }
  if (c.group == Group::Unchecked && unchecked.empty()) c.group = Group::Valid;
  c.spec.fill = c.group == Group::Edges  ? data::Fill::Edges
                : c.group == Group::Zero ? data::Fill::Zero
                                         : data::Fill::Random;
  const auto plant_unchecked = [&] {
    const std::uint32_t field = unchecked[rng() % unchecked.size()];
    const data::Field& f = layout.fields[field];
    const std::uint64_t block = pick_block(rng, c.spec.blocks);
    if (f.encoding == data::Encoding::Raw) {
      c.spec.plants.push_back(raw_plant(rng, block, field, f));
    } else {
      c.spec.plants.push_back({block, field, rejected_bits(rng, f.encoding), 0, 0});
    }
  };
  const auto plant_checked = [&] {
    const std::uint32_t field = checked[rng() % checked.size()];
    c.spec.plants.push_back({pick_block(rng, c.spec.blocks), field,
                             rejected_bits(rng, layout.fields[field].encoding), 0, 0});
  };
  if ((c.group == Group::Unchecked || c.group == Group::Mixed) && !unchecked.empty()) {
    for (std::uint64_t n = 1 + rng() % 6; n > 0; --n) plant_unchecked();
  }
  if (c.group == Group::Checked || c.group == Group::Mixed) {
    for (std::uint64_t n = 1 + rng() % 4; n > 0; --n) plant_checked();
  }
  c.bytes_seed = rng();
  return c;
}

struct Tally {
  std::uint64_t tensors = 0, bytes = 0, large = 0;
  std::uint64_t fail_both = 0, pass_both = 0, disagreements = 0;
  std::uint64_t q8_1 = 0, nvfp4_flagged = 0, all_zero = 0, extra_targets = 0;
  std::map<std::string_view, std::uint64_t> groups;
  std::map<std::uint32_t, std::uint64_t> failing_by_type;
  std::map<std::uint32_t, std::uint64_t> disagreeing_by_type;
};

// --- the tests --------------------------------------------------------------------------------

// The harness tells passing from failing data, so a broken child cannot make everything agree.
TEST(DataDifferential, HarnessDiscriminates) {
  GGUFCHECK_NEED_GGML(ggml);
  std::vector<std::uint8_t> f16(2 * 64, 0);
  for (std::size_t i = 0; i < f16.size(); i += 2) f16[i + 1] = 0x3C;  // 1.0
  GgmlAnswer good = ggml->validate(1, f16);
  EXPECT_TRUE(good.failure.empty()) << good.failure;
  EXPECT_TRUE(good.ok) << good.log;
  EXPECT_EQ(good.log, "");

  f16[2 * 37] = 0x01;
  f16[2 * 37 + 1] = 0x7C;  // 0x7C01: a NaN
  const GgmlAnswer nan = ggml->validate(1, f16);
  EXPECT_FALSE(nan.ok);
  const GgmlMessage m = parse_message(nan.log);
  EXPECT_EQ(m.what, GgmlMessage::What::Value) << nan.log;
  EXPECT_EQ(m.kind, data::Kind::Nan) << nan.log;
  EXPECT_EQ(m.block, 37U) << nan.log;
  EXPECT_FALSE(ggufcheck_passes(1, scan(1, f16)));

  const GgmlAnswer unknown = ggml->validate(43, f16);
  EXPECT_FALSE(unknown.ok);
  EXPECT_EQ(parse_message(unknown.log).what, GgmlMessage::What::InvalidType) << unknown.log;
  EXPECT_EQ(parse_message(unknown.log).count, 43U) << unknown.log;

  // After a failure the child still passes good data (the elements before the NaN).
  good = ggml->validate(1, std::span(f16).first(2 * 37));
  EXPECT_TRUE(good.ok) << good.log;
}

// A child that dies is reported, not taken for an answer, and the next request gets a new one.
// A removed type id kills it: its type size is 0 and ggml's size check divides by it (SIGFPE;
// under AddressSanitizer the child exits instead), which is why the generated tensors skip them.
TEST(DataDifferential, ADeadChildIsReported) {
  GGUFCHECK_NEED_GGML(ggml);
  const std::vector<std::uint8_t> bytes(64, 0);
  const GgmlAnswer removed = ggml->validate(4, bytes);
  EXPECT_FALSE(removed.ok);
  EXPECT_NE(removed.failure.find("the ggml child died"), std::string::npos)
      << "failure \"" << removed.failure << "\", log \"" << removed.log << "\"";
  const GgmlAnswer after = ggml->validate(0, bytes);
  EXPECT_TRUE(after.failure.empty()) << after.failure;
  EXPECT_TRUE(after.ok) << after.log;
}

// Every block table has the library's type size, and its fields cover each byte once.
TEST(DataDifferential, BlockTablesMatchTheTypeTable) {
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TensorTypeInfo* info = tensor_type(id);
    ASSERT_NE(info, nullptr);
    const bool listed = std::find(data::data_types().begin(), data::data_types().end(), id) !=
                        data::data_types().end();
    EXPECT_EQ(listed, !info->removed()) << id;
    if (info->removed()) {
      EXPECT_THROW(static_cast<void>(data::layout(id)), std::invalid_argument) << id;
      continue;
    }
    const data::BlockLayout& l = data::layout(id);
    EXPECT_EQ(l.block_bytes, info->type_size) << info->name;
    std::vector<int> covered(l.block_bytes, 0);
    for (const data::Field& f : l.fields) {
      ASSERT_LE(f.offset + f.size, l.block_bytes) << info->name << " " << f.name;
      if (f.encoding == data::Encoding::Iq1mScale) continue;  // overlaps scales[]
      if (f.encoding != data::Encoding::Raw) {
        EXPECT_EQ(f.size, data::encoding_width(f.encoding)) << info->name << " " << f.name;
      }
      for (std::uint32_t b = f.offset; b < f.offset + f.size; ++b) ++covered[b];
    }
    for (std::uint32_t b = 0; b < l.block_bytes; ++b)
      EXPECT_EQ(covered[b], 1) << info->name << " byte " << b;
  }
}

TEST(DataDifferential, GeneratedTensors) {
  GGUFCHECK_NEED_GGML(ggml);
  const std::uint64_t seed = env_number("GGUFCHECK_DATA_SEED", kDefaultSeed);
  const std::uint64_t count = env_number("GGUFCHECK_DATA_TENSORS", kDefaultTensors);
  const std::uint64_t first = env_number("GGUFCHECK_DATA_FIRST", 0);
  Tally tally;
  constexpr std::uint64_t kReported = 10;
  for (std::uint64_t i = first; i < first + count; ++i) {
    const DataCase c = make_case(seed, i);
    const std::vector<std::uint8_t> bytes = data::tensor_bytes(c.spec, c.bytes_seed);
    const GgmlAnswer answer = ggml->validate(c.spec.type, bytes);
    const std::string reproduce = "GGUFCHECK_DATA_SEED=" + std::to_string(seed) +
                                  " GGUFCHECK_DATA_FIRST=" + std::to_string(i) +
                                  " GGUFCHECK_DATA_TENSORS=1";
    if (!answer.failure.empty()) {
      ADD_FAILURE() << answer.failure << " on tensor " << i << " of seed " << seed << ": "
                    << data::describe(c.spec) << "\n  " << reproduce;
      ++tally.disagreements;
      continue;
    }
    // Every SIMD target and an odd address on an eighth of the tensors and all large ones.
    const bool extra_targets = c.large || i % 8 == 0;
    const BlockScan ours = scan(c.spec.type, bytes);
    const std::string problems = compare(c.spec.type, bytes, ours, answer, extra_targets);
    if (!problems.empty()) ++tally.disagreeing_by_type[c.spec.type];
    if (!problems.empty() && tally.disagreements++ < kReported) {
      ADD_FAILURE() << "tensor " << i << " of seed " << seed << " ("
                    << kGroupNames[static_cast<std::size_t>(c.group)]
                    << "): " << data::describe(c.spec) << problems << "\n  " << reproduce;
    }
    const bool passes = ggufcheck_passes(c.spec.type, ours);
    ++tally.tensors;
    tally.bytes += bytes.size();
    tally.large += c.large ? 1 : 0;
    tally.extra_targets += extra_targets ? 1 : 0;
    ++tally.groups[kGroupNames[static_cast<std::size_t>(c.group)]];
    if (answer.ok && passes) ++tally.pass_both;
    if (!answer.ok && !passes) {
      ++tally.fail_both;
      ++tally.failing_by_type[c.spec.type];
    }
    tally.q8_1 += c.spec.type == kQ8_1 ? 1 : 0;
    tally.nvfp4_flagged += ours.nvfp4_scale.count != 0 ? 1 : 0;
    tally.all_zero += ours.nonzero ? 0 : 1;
    // Planted unchecked values change neither verdict.
    if (c.group == Group::Unchecked && c.spec.type != kQ8_1) {
      EXPECT_TRUE(answer.ok && passes) << "tensor " << i << ": " << data::describe(c.spec);
    }
    // ggml checks nothing in nvfp4 blocks, whatever ggufcheck flags in their scale bytes.
    if (c.spec.type == kNvfp4) {
      EXPECT_TRUE(answer.ok) << "tensor " << i << ": " << answer.log;
    }
    if (c.group == Group::Zero) {
      EXPECT_EQ(answer.ok, c.spec.type != kQ8_1) << "tensor " << i << ": " << answer.log;
      EXPECT_FALSE(ours.nonzero) << "tensor " << i;
    }
  }
  EXPECT_EQ(tally.disagreements, 0U) << "tensors where ggml and ggufcheck disagree (the first "
                                     << kReported << " are shown above), seed " << seed;
  if (first == 0 && count == kDefaultTensors) {
    EXPECT_GE(tally.tensors, 10000U);
    // Each group and each type's failures happen, so the figures below mean something.
    EXPECT_EQ(tally.groups.size(), kGroupNames.size());
    EXPECT_GT(tally.nvfp4_flagged, 0U);
    EXPECT_GT(tally.large, 0U);
    for (const std::uint32_t type : data::data_types()) {
      const bool checks_values = !data::layout(type).checked_fields().empty() || type == kQ8_1;
      EXPECT_EQ(tally.failing_by_type[type] > 0, checks_values) << data::layout(type).name;
    }
  }
  std::printf(
      "data differential: %llu tensors (seed %llu, %zu types, %llu of 1 MiB, %.1f MiB in all), "
      "%llu failing in both (%llu of them q8_1, refused by type), %llu passing in both, "
      "%llu disagreements; extras: %llu nvfp4 tensors with flagged scale bytes and %llu all-zero "
      "tensors (ggml passes them, but q8_1's); %llu tensors also scanned on %zu SIMD targets and "
      "from an odd address\n",
      static_cast<unsigned long long>(tally.tensors), static_cast<unsigned long long>(seed),
      data::data_types().size(), static_cast<unsigned long long>(tally.large),
      static_cast<double>(tally.bytes) / (1024.0 * 1024.0),
      static_cast<unsigned long long>(tally.fail_both), static_cast<unsigned long long>(tally.q8_1),
      static_cast<unsigned long long>(tally.pass_both),
      static_cast<unsigned long long>(tally.disagreements),
      static_cast<unsigned long long>(tally.nvfp4_flagged),
      static_cast<unsigned long long>(tally.all_zero),
      static_cast<unsigned long long>(tally.extra_targets), detail::kernel_targets().size());
  std::printf("  groups:");
  for (const auto& [name, n] : tally.groups) {
    std::printf(" %s %llu", std::string(name).c_str(), static_cast<unsigned long long>(n));
  }
  std::printf("\n");
  if (!tally.disagreeing_by_type.empty()) {
    std::printf("  disagreements by type:");
    for (const auto& [type, n] : tally.disagreeing_by_type) {
      std::printf(" %s %llu", std::string(data::layout(type).name).c_str(),
                  static_cast<unsigned long long>(n));
    }
    std::printf("\n");
  }
}

// Sizes that are not a whole number of blocks: ggml says "invalid size". ggufcheck never scans a
// partial block (the tensor-info checks reject a row that is not a block multiple before data
// is read), so only ggml's side is asserted, for the record.
// The same tensors through the whole check: packed into GGUF files of 400 tensors each and
// validated with the data check on two threads (pieces of one tensor on both), the tensors with
// a GGUF6001/6002/6003 finding are exactly those ggml's check refuses.
TEST(DataDifferential, FilesGiveGgmlsVerdictPerTensor) {
  GGUFCHECK_NEED_GGML(ggml);
  const std::uint64_t seed = env_number("GGUFCHECK_DATA_SEED", kDefaultSeed);
  const std::uint64_t count = env_number("GGUFCHECK_DATA_TENSORS", kDefaultTensors);
  constexpr std::uint64_t kPerFile = 400;
  Options options = container_options();
  options.profile = Profile::LlamaCpp;
  options.data.enabled = true;
  options.data.threads = 2;
  options.limits.max_findings = 100000;
  std::uint64_t tensors = 0, refused = 0, disagreements = 0;
  for (std::uint64_t start = 0; start < count; start += kPerFile) {
    std::vector<Tensor> infos;
    std::vector<bool> ggml_ok;
    for (std::uint64_t i = start; i < std::min(count, start + kPerFile); ++i) {
      const DataCase c = make_case(seed, i);
      if (c.spec.extra_bytes != 0) continue;  // a partial block is no tensor
      std::vector<std::uint8_t> bytes = data::tensor_bytes(c.spec, c.bytes_seed);
      const GgmlAnswer answer = ggml->validate(c.spec.type, bytes);
      ASSERT_TRUE(answer.failure.empty()) << answer.failure;
      ggml_ok.push_back(answer.ok);
      Tensor t;
      t.name = "t." + std::to_string(i);
      t.dims = {c.spec.blocks * tensor_type(c.spec.type)->block_size};
      t.type = c.spec.type;
      t.data = std::move(bytes);
      infos.push_back(std::move(t));
    }
    Document doc;
    doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
    doc.tensors = std::move(infos);
    const std::vector<std::uint8_t> file = write_bytes(doc);
    const Report report = validate(Bytes(file.data(), file.size()), options);
    ASSERT_TRUE(report.facts.data_checked.has_value()) << "the data check did not run";
    std::vector<bool> refused_here(ggml_ok.size(), false);
    for (const Finding& f : report.findings) {
      if (f.code != Code::NonFiniteElement && f.code != Code::NonFiniteScale &&
          f.code != Code::UncheckableTensorType) {
        continue;
      }
      const std::size_t index = std::stoul(f.path.substr(f.path.find('[') + 1));
      ASSERT_LT(index, refused_here.size()) << f.path;
      refused_here[index] = true;
    }
    for (std::size_t k = 0; k < ggml_ok.size(); ++k) {
      ++tensors;
      refused += refused_here[k] ? 1U : 0U;
      if (refused_here[k] == ggml_ok[k] && disagreements++ < 10) {
        ADD_FAILURE() << "tensor t." << start + k << " (seed " << seed << "): ggml "
                      << (ggml_ok[k] ? "accepts" : "refuses") << ", ggufcheck's file check "
                      << (refused_here[k] ? "refuses" : "accepts");
      }
    }
  }
  EXPECT_EQ(disagreements, 0U);
  std::printf(
      "data differential through files: %llu tensors in %llu files, %llu refused by both, "
      "%llu disagreements\n",
      static_cast<unsigned long long>(tensors),
      static_cast<unsigned long long>((count + kPerFile - 1) / kPerFile),
      static_cast<unsigned long long>(refused), static_cast<unsigned long long>(disagreements));
}

TEST(DataDifferential, PartialBlocksAreInvalidSizesForGgml) {
  GGUFCHECK_NEED_GGML(ggml);
  std::mt19937_64 rng(env_number("GGUFCHECK_DATA_SEED", kDefaultSeed));
  for (const std::uint32_t type : data::data_types()) {
    const data::BlockLayout& l = data::layout(type);
    if (l.block_bytes == 1) continue;  // every size is a multiple
    data::TensorSpec spec;
    spec.type = type;
    spec.blocks = 1 + rng() % 4;
    spec.extra_bytes = 1 + static_cast<std::uint32_t>(rng() % (l.block_bytes - 1));
    const std::vector<std::uint8_t> bytes = data::tensor_bytes(spec, rng());
    const GgmlAnswer answer = ggml->validate(type, bytes);
    ASSERT_TRUE(answer.failure.empty()) << answer.failure << ": " << data::describe(spec);
    EXPECT_FALSE(answer.ok) << data::describe(spec);
    const GgmlMessage m = parse_message(answer.log);
    EXPECT_EQ(m.what, GgmlMessage::What::InvalidSize) << answer.log;
    EXPECT_EQ(m.count, bytes.size()) << answer.log;
    EXPECT_EQ(m.type_name, l.name) << answer.log;
    EXPECT_EQ(m.total, l.block_bytes) << answer.log;
  }
}

// --- the deliberate extras (docs/llama-cpp-divergences.md, "Tensor data") ---------------------

struct Extra {
  std::string_view id;
  data::TensorSpec witness;
  bool (*fires)(const BlockScan& scan);
};

std::vector<Extra> extras() {
  data::TensorSpec nvfp4;
  nvfp4.type = kNvfp4;
  nvfp4.blocks = 4;
  nvfp4.plants = {{2, 1, 0x7F, 0, 0}, {3, 3, 0x80, 0, 0}};  // d1 of block 2, d3 of block 3
  data::TensorSpec zero;
  zero.type = 2;  // q4_0
  zero.blocks = 8;
  zero.fill = data::Fill::Zero;
  return {
      {"ambiguous-nvfp4-scale", nvfp4,
       [](const BlockScan& s) { return s.nvfp4_scale.count == 2 && s.nvfp4_scale.first == 2; }},
      {"all-zero-tensor", zero, [](const BlockScan& s) { return !s.nonzero; }},
  };
}

// On each witness ggml passes, ggufcheck's llama.cpp verdict passes too, and the extra fires.
TEST(DataDifferential, EveryExtraHasAWitness) {
  GGUFCHECK_NEED_GGML(ggml);
  for (const Extra& e : extras()) {
    SCOPED_TRACE(std::string(e.id));
    const std::vector<std::uint8_t> bytes = data::tensor_bytes(e.witness, 1);
    const GgmlAnswer answer = ggml->validate(e.witness.type, bytes);
    ASSERT_TRUE(answer.failure.empty()) << answer.failure;
    EXPECT_TRUE(answer.ok) << answer.log;
    const BlockScan s = scan(e.witness.type, bytes);
    EXPECT_TRUE(ggufcheck_passes(e.witness.type, s)) << describe(s);
    EXPECT_TRUE(e.fires(s)) << describe(s);
  }
}

// The page lists exactly these extras, in this order, as "### X<n>. `id`".
TEST(DataDifferential, DocumentedExtrasAreTheTestedList) {
  std::ifstream in(fs::path(GGUFCHECK_SOURCE_DIR) / "docs" / "llama-cpp-divergences.md");
  ASSERT_TRUE(in) << "docs/llama-cpp-divergences.md is missing";
  const std::regex heading(R"(^### X([0-9]+)\. `([a-z0-9-]+)`)");
  std::vector<std::string> documented, tested;
  std::uint64_t expected_number = 1;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, heading)) continue;
    EXPECT_EQ(std::stoull(m[1].str()), expected_number++) << line;
    documented.push_back(m[2]);
  }
  for (const Extra& e : extras()) tested.emplace_back(e.id);
  EXPECT_EQ(documented, tested);
}

}  // namespace
}  // namespace ggufcheck::testing

// `ggufcheck hash` and `verify` (docs/hash.md) on any bytes: the input is written to a memfd and
// hashed by path with hash_model, under options chosen from a hash of the input (every algorithm,
// per-tensor or not, whole-model or not, the manifest's digests or not, the UUID when declared,
// one file or the same file twice as a model of two), then:
// - a second hash of the same bytes gives the same result, field for field (fuzzing: one input in
//   four); a result that is not 0 holds no digest; the digests equal those of the input's bytes
//   recomputed here (each tensor's, the whole model's, the UUID, the header's and the gaps'), the
//   digests not asked for are zero, and the header, the tensors and the gaps are every byte of the
//   file;
// - a file the llama.cpp profile accepts (the container) is hashed;
// - llama-gguf-hash's lines (render_llama_hash) are one line per digest of three words, their
//   manifest kinds (LlamaManifest::kinds_of) are the algorithms, and --check of the same result
//   against them (llama_check_keys, LlamaManifest::read, render_llama_check) gives each line the
//   verdict of the first manifest line of its type and name, and the exit status the docs give;
// - the JSON manifest (render_manifest_model, render_manifest) parses back (parse_manifest) to the
//   records hashed and verifies: compare() with the same result, and with the files hashed again
//   with verify_hash_options, finds no difference but a general.uuid that is not the data's; a
//   copy with one byte flipped has a difference (the header, the tensors and the gaps are every
//   byte; fuzzing: one input in four);
// - cancelled, hash_model returns 130 and nothing else.
// Fuzzing, each input gets one option set; a replay (fuzz::every_run) checks several.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ggufcheck/hash.hpp"
#include "ggufcheck/validate.hpp"
#include "pipeline.hpp"
#include "util/digest.hpp"

namespace {

using namespace ggufcheck;

// Hashing is cheap; the validation before it is what a byte costs. 16 KiB holds every layout.
constexpr std::size_t kMaxInput = std::size_t{16} << 10;

// A memory-backed file holding `bytes`: its descriptor (closed by the destructor), or -1.
class MemFile {
 public:
  explicit MemFile(std::string_view bytes) : fd_(::memfd_create("fuzz_hash", MFD_CLOEXEC)) {
    if (fd_ < 0) return;
    std::size_t at = 0;
    while (at < bytes.size()) {
      const ssize_t n = ::write(fd_, bytes.data() + at, bytes.size() - at);
      if (n <= 0) {
        ::close(fd_);
        fd_ = -1;
        return;
      }
      at += static_cast<std::size_t>(n);
    }
  }
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  [[nodiscard]] std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

std::uint64_t fnv(const std::uint8_t* data, std::size_t size) {
  std::uint64_t h = 1469598103934665603ULL ^ size;
  const auto mix = [&](std::uint8_t b) { h = (h ^ b) * 1099511628211ULL; };
  for (std::size_t i = 0; i < std::min<std::size_t>(size, 64); ++i) mix(data[i]);
  for (std::size_t i = size > 64 ? std::max<std::size_t>(size - 64, 64) : size; i < size; ++i) {
    mix(data[i]);
  }
  return h;
}

// One choice of everything the harness varies, from 16 bits.
struct Choice {
  HashOptions options;
  bool twice = false;  // the file given twice: a model of two files
  std::string name;    // the name render_llama_hash prints
};

Choice choice_of(std::uint64_t bits) {
  Choice c;
  HashOptions& o = c.options;
  o.algorithms = {(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0};
  o.per_tensor = (bits & 16) == 0;
  o.manifest = (bits & 32) != 0;
  o.whole_model = (bits & 64) == 0;
  o.uuid_if_declared = (bits & 128) != 0;
  o.threads = (bits & 256) != 0 ? 0 : 1;  // one per core: threads start only past 2 MiB
  c.twice = (bits >> 9) % 4 == 0;
  // Names a line must escape: a space, control bytes (ESC, BEL), invalid UTF-8, a backslash, and
  // one longer than a sha256 in hex (the longest word LlamaManifest::read keeps by default).
  static const std::string kNames[] = {"model.gguf",
                                       "my model.gguf",
                                       "m\x1b]0;x\a.gguf",
                                       "dir/m\xff\\x.gguf",
                                       std::string(100, 'n') + ".gguf",
                                       "\xe2\x80\xae.gguf"};
  c.name = kNames[(bits >> 11) % std::size(kNames)];
  return c;
}

template <std::size_t N>
bool zero(const std::array<std::uint8_t, N>& digest) {
  return std::all_of(digest.begin(), digest.end(), [](std::uint8_t b) { return b == 0; });
}

std::string same_result(const HashResult& a, const HashResult& b) {
  if (a.status != b.status || a.error != b.error) return "status or error";
  if (a.files.size() != b.files.size() || a.tensors.size() != b.tensors.size()) return "counts";
  for (std::size_t i = 0; i < a.files.size(); ++i) {
    const FileHash& x = a.files[i];
    const FileHash& y = b.files[i];
    if (std::tie(x.path, x.size, x.data_start, x.header_sha256, x.gaps, x.gap_bytes, x.gaps_sha256,
                 x.tensor_count, x.general_uuid, x.general_uuid_problem) !=
        std::tie(y.path, y.size, y.data_start, y.header_sha256, y.gaps, y.gap_bytes, y.gaps_sha256,
                 y.tensor_count, y.general_uuid, y.general_uuid_problem)) {
      return "file " + std::to_string(i);
    }
  }
  for (std::size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorHash& x = a.tensors[i];
    const TensorHash& y = b.tensors[i];
    if (std::tie(x.name, x.type, x.shape, x.offset, x.nbytes, x.file, x.xxh64, x.sha1, x.sha256) !=
        std::tie(y.name, y.type, y.shape, y.offset, y.nbytes, y.file, y.xxh64, y.sha1, y.sha256)) {
      return "tensor " + std::to_string(i);
    }
  }
  if (std::tie(a.tensor_bytes, a.xxh64, a.sha1, a.sha256, a.uuid, a.merkle_root) !=
      std::tie(b.tensor_bytes, b.xxh64, b.sha1, b.sha256, b.uuid, b.merkle_root)) {
    return "the model's digests";
  }
  return {};
}

// The result against the input's bytes (every file of the model holds them).
std::string check_result(std::string_view bytes, const HashResult& r, const HashOptions& o,
                         std::size_t files) {
  using detail::Digest;
  using detail::DigestKind;
  if (r.status != 0) {
    if (r.error.empty()) return "a failure without an error";
    if (r.status != 1 && r.status != 2) return "status " + std::to_string(r.status);
    if (!r.files.empty() || !r.tensors.empty() || r.tensor_bytes != 0 || r.xxh64 != 0 ||
        !zero(r.sha1) || !zero(r.sha256) || !zero(r.uuid) || !zero(r.merkle_root)) {
      return "a failed result holds records or digests";
    }
    return {};
  }
  if (!r.error.empty()) return "hashed with an error";
  if (r.files.size() != files) return "not one record per file";
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  const bool tensor_sha256 = (o.per_tensor && o.algorithms.sha256) || o.manifest;
  const bool uuid = o.algorithms.uuid || (o.uuid_if_declared && r.files[0].general_uuid);
  Digest model_xxh64(DigestKind::Xxh64), model_sha1(DigestKind::Sha1),
      model_sha256(DigestKind::Sha256), model_uuid(DigestKind::Sha1);
  model_uuid.update(kLlamaCppUuidNamespace.data(), kLlamaCppUuidNamespace.size());
  std::uint64_t tensor_bytes = 0;
  std::size_t next = 0;
  std::vector<Sha256Digest> leaves;
  for (std::size_t f = 0; f < files; ++f) {
    const FileHash& fh = r.files[f];
    if (fh.size != bytes.size()) return "a file's size";
    if (fh.data_start > fh.size) return "data_start past the end";
    if (fh.tensor_count != r.files[0].tensor_count) return "the same bytes, other tensors";
    if (fh.general_uuid.has_value() && !fh.general_uuid_problem.empty()) {
      return "general.uuid both a string and a problem";
    }
    if (o.manifest && fh.header_sha256 != detail::sha256_of(data, fh.data_start)) {
      return "header_sha256 is not that of the bytes before data_start";
    }
    std::uint64_t in_file = 0;
    for (std::size_t i = 0; i < fh.tensor_count; ++i, ++next) {
      if (next >= r.tensors.size()) return "fewer tensor records than the files count";
      const TensorHash& t = r.tensors[next];
      if (t.file != f) return "a tensor's file index";
      if (t.offset > fh.size - fh.data_start || t.nbytes > fh.size - fh.data_start - t.offset) {
        return "a tensor outside its file";
      }
      const std::uint8_t* at = data + fh.data_start + t.offset;
      const auto n = static_cast<std::size_t>(t.nbytes);
      Digest x(DigestKind::Xxh64), s1(DigestKind::Sha1), s256(DigestKind::Sha256);
      x.update(at, n);
      s1.update(at, n);
      s256.update(at, n);
      const std::uint64_t want_x = x.xxh64();
      const Sha1Digest want_s1 = s1.sha1();
      const Sha256Digest want_s256 = s256.sha256();
      if (t.xxh64 != (o.per_tensor && o.algorithms.xxh64 ? want_x : 0)) return "a tensor's xxh64";
      if (t.sha1 != (o.per_tensor && o.algorithms.sha1 ? want_s1 : Sha1Digest{})) {
        return "a tensor's sha1";
      }
      if (t.sha256 != (tensor_sha256 ? want_s256 : Sha256Digest{})) return "a tensor's sha256";
      leaves.push_back(t.sha256);
      model_xxh64.update(at, n);
      model_sha1.update(at, n);
      model_sha256.update(at, n);
      model_uuid.update(at, n);
      in_file += t.nbytes;
      tensor_bytes += t.nbytes;
    }
    // The header, the tensors and the gaps are every byte of the file.
    std::uint64_t gap_sum = 0, previous = fh.data_start;
    Digest gaps(DigestKind::Sha256);
    for (const auto& [begin, length] : fh.gaps) {
      if (begin < previous || length == 0 || begin > fh.size || length > fh.size - begin) {
        return "gaps out of order, empty or outside the file";
      }
      previous = begin + length;
      gap_sum += length;
      gaps.update(data + begin, static_cast<std::size_t>(length));
    }
    if (gap_sum != fh.gap_bytes) return "gap_bytes against the gaps";
    if (fh.data_start + in_file + fh.gap_bytes != fh.size) {
      return "the header, the tensors and the gaps are not the whole file";
    }
    if (o.manifest && gaps.sha256() != fh.gaps_sha256) return "gaps_sha256";
  }
  if (next != r.tensors.size()) return "more tensor records than the files count";
  if (tensor_bytes != r.tensor_bytes) return "tensor_bytes";
  const bool whole = o.whole_model;
  if (r.xxh64 != (whole && o.algorithms.xxh64 ? model_xxh64.xxh64() : 0)) return "model xxh64";
  if (r.sha1 != (whole && o.algorithms.sha1 ? model_sha1.sha1() : Sha1Digest{})) {
    return "model sha1";
  }
  if (r.sha256 != (whole && o.algorithms.sha256 ? model_sha256.sha256() : Sha256Digest{})) {
    return "model sha256";
  }
  if (r.uuid != (uuid ? detail::uuid_v5(model_uuid.sha1()) : Uuid{})) return "model uuid";
  if (r.merkle_root != (o.manifest ? merkle_root(leaves) : Sha256Digest{})) return "merkle root";
  return {};
}

std::vector<std::string> words_of(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) words.emplace_back(line.substr(start, i - start));
  }
  return words;
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// llama-gguf-hash's lines, then --check of the same result against them.
std::string check_llama(const HashResult& r, const HashOptions& o, const std::string& name) {
  const HashAlgorithms& a = o.algorithms;
  const std::string text = render_llama_hash(r, o, name);
  const std::vector<std::string> lines = lines_of(text);
  const std::size_t per_tensor = std::size_t{a.xxh64} + a.sha1 + a.sha256;
  const std::size_t per_model = per_tensor + a.uuid;
  if (lines.size() != (o.per_tensor ? r.tensors.size() * per_tensor : 0) + per_model ||
      (!text.empty() && text.back() != '\n')) {
    return "llama lines: not one line per digest";
  }
  std::map<std::pair<std::string, std::string>, std::string> first;
  for (const std::string& line : lines) {
    const std::vector<std::string> w = words_of(line);
    if (w.size() != 3) return "llama lines: a line of other than three words: " + line;
    first.emplace(std::make_pair(w[0], w[2]), w[1]);
  }
  const MemFile manifest_file(text);
  if (!manifest_file.ok()) return {};
  const std::string manifest_path = manifest_file.path();
  const auto kinds = LlamaManifest::kinds_of(manifest_path);
  if (!kinds) return "llama manifest: cannot be read";
  if (std::tie(kinds->xxh64, kinds->sha1, kinds->sha256, kinds->uuid) !=
      std::tie(a.xxh64, a.sha1, a.sha256, a.uuid)) {
    return "llama manifest: its kinds are not the algorithms";
  }
  const auto keys = llama_check_keys(r, o, name);
  const auto manifest = LlamaManifest::read(manifest_path, keys);
  if (!manifest) return "llama manifest: cannot be read";
  const LlamaCheck check = render_llama_check(r, o, name, manifest_path, *manifest);
  const std::vector<std::string> out = lines_of(check.text);
  if (keys.size() != lines.size() || out.size() != lines.size() + 3) {
    return "llama check: not one verdict per line";
  }
  if (out[0] + "\n" != llama_manifest_line(manifest_path, manifest->kinds) ||
      !out[lines.size() + 1].empty()) {
    return "llama check: its frame";
  }
  bool layer_found = false, layer_mismatch = false, model_found = false, model_mismatch = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::vector<std::string> hashed = words_of(lines[i]);
    const std::vector<std::string> w = words_of(out[i + 1]);
    if (w.size() < 5 || w[0] != hashed[0] || w[1] != hashed[1] || w[2] != hashed[2] ||
        w[3] != "-" || w[2] != keys[i].second) {
      return "llama check: line " + std::to_string(i) + " is not the hashed one: " + out[i + 1];
    }
    const auto it = first.find(keys[i]);
    const char* want = it == first.end() ? "Not Found" : it->second == w[1] ? "Ok" : "Mismatch";
    const std::string verdict = w.size() == 6 ? w[4] + " " + w[5] : w[4];
    if (verdict != want) {
      return "llama check: line " + std::to_string(i) + " says " + verdict + ", not " + want;
    }
    const bool layer = i + per_model < lines.size();
    (layer ? layer_found : model_found) |= it != first.end();
    (layer ? layer_mismatch : model_mismatch) |= it != first.end() && it->second != w[1];
    // A line of its own manifest mismatches only for a uuid (looked up among the sha256 lines)
    // or a name cut at its NUL that another tensor's shares.
    if (it != first.end() && it->second != w[1] && w[0] != "uuid" && !layer) {
      return "llama check: a whole-model line mismatches its own manifest";
    }
  }
  int status = 0;
  if (!model_found) {
    status = !layer_found ? 3 : layer_mismatch ? 1 : 0;
  } else {
    status = (layer_found && layer_mismatch) || model_mismatch ? 1 : 0;
  }
  if (check.status != status) return "llama check: exit status";
  return {};
}

// The difference compare() finds in a model whose first file declares a general.uuid that is not
// the data's (or not a UUID).
std::size_t uuid_differences(const HashResult& r) {
  if (r.files.empty() || !r.files.front().general_uuid) return 0;
  const auto declared = parse_uuid(*r.files.front().general_uuid);
  return !declared || *declared != r.uuid ? 1 : 0;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "\n  " + l;
  return out;
}

std::string check_verification(const Verification& v, const HashResult& r, const char* what) {
  if (v.differences.size() != uuid_differences(r)) {
    return std::string(what) + ": the model does not verify:" + join(v.differences);
  }
  const bool note = !r.files.empty() && !r.files.front().general_uuid_problem.empty();
  if (v.notes.size() != (note ? 1U : 0U)) return std::string(what) + ": notes:" + join(v.notes);
  return {};
}

// The JSON manifest of `r` (hashed with manifest options), read back and verified.
std::string check_manifest(std::string_view bytes, const std::vector<std::string>& paths,
                           const HashResult& r, const HashOptions& o, bool two_models, bool flip) {
  const std::string model = render_manifest_model(r, o);
  const std::string text = two_models ? render_manifest({model, model}) : render_manifest({model});
  const ManifestRead read = parse_manifest(text);
  if (!read.manifest) return "the manifest written does not parse: " + read.error + "\n" + text;
  if (!read.error.empty()) return "the manifest parses with an error";
  if (read.manifest->models.size() != (two_models ? 2U : 1U)) return "manifest: models";
  for (const ManifestModel& m : read.manifest->models) {
    if (m.files.size() != r.files.size() || m.tensors.size() != r.tensors.size() ||
        m.tensor_count != r.tensors.size() || m.tensor_bytes != r.tensor_bytes) {
      return "manifest: counts";
    }
    for (std::size_t i = 0; i < m.files.size(); ++i) {
      const ManifestFile& e = m.files[i];
      const FileHash& f = r.files[i];
      if (e.path != f.path || e.size != f.size || e.header_sha256 != f.header_sha256 ||
          e.tensor_count != f.tensor_count || e.data_start != f.data_start ||
          e.gap_bytes != f.gap_bytes || e.gaps_sha256 != f.gaps_sha256) {
        return "manifest: file " + std::to_string(i) + " read back otherwise";
      }
    }
    for (std::size_t i = 0; i < m.tensors.size(); ++i) {
      const ManifestTensor& e = m.tensors[i];
      const TensorHash& t = r.tensors[i];
      if (e.name != t.name || e.file != t.file || e.type_id != t.type || e.shape != t.shape ||
          e.offset != t.offset || e.nbytes != t.nbytes || e.sha256 != t.sha256 ||
          e.xxh64.has_value() != o.algorithms.xxh64 || e.sha1.has_value() != o.algorithms.sha1 ||
          (e.xxh64 && *e.xxh64 != t.xxh64) || (e.sha1 && *e.sha1 != t.sha1)) {
        return "manifest: tensor " + std::to_string(i) + " read back otherwise";
      }
    }
    if (m.merkle_root != r.merkle_root || m.sha256 != r.sha256 ||
        m.general_uuid != r.files.front().general_uuid || m.uuid.has_value() != o.algorithms.uuid ||
        (m.uuid && *m.uuid != r.uuid)) {
      return "manifest: the model's digests read back otherwise";
    }
  }
  const ManifestModel& expected = read.manifest->models.front();
  std::string problem = check_verification(compare(expected, r), r, "compare with the same result");
  if (!problem.empty()) return problem;
  // As `verify` does: the files hashed again with what the manifest asks for.
  HashOptions verify = verify_hash_options(expected);
  verify.threads = 1;
  const HashResult again = hash_model(paths, verify);
  if (again.status != 0) return "verify: the files no longer hash: " + again.error;
  problem = check_verification(compare(expected, again), again, "verify");
  if (!problem.empty()) return problem;
  VerifyOptions ignore;
  ignore.ignore_header = true;
  problem = check_verification(compare(expected, again, ignore), again, "verify --ignore-header");
  if (!problem.empty()) return problem;
  // One byte flipped, wherever it is (header, tensor or gap), is a difference.
  if (!flip || bytes.empty()) return {};
  std::string flipped(bytes);
  const std::size_t at =
      static_cast<std::size_t>(r.merkle_root[0] | r.merkle_root[1] << 8) % flipped.size();
  flipped[at] =
      static_cast<char>(static_cast<unsigned>(flipped[at]) ^ (1U << (r.merkle_root[2] % 8U)));
  const MemFile changed(flipped);
  if (!changed.ok()) return {};
  std::vector<std::string> changed_paths = paths;
  changed_paths.back() = changed.path();
  const HashResult other = hash_model(changed_paths, verify);
  if (other.status != 0) return {};  // its structure no longer resolves
  // The path differs, not the name: compare() reads no path but to name it.
  const Verification v = compare(expected, other);
  if (v.differences.empty()) {
    return "verify: a byte flipped at " + std::to_string(at) + " makes no difference";
  }
  return {};
}

// `thorough`: also hash a second time, and a copy with a byte flipped (fuzzing: one input in
// four; each costs a validation of the file).
std::string check_hash(std::string_view bytes, const std::string& path, const Choice& c,
                       bool thorough) {
  const std::vector<std::string> paths =
      c.twice ? std::vector<std::string>{path, path} : std::vector<std::string>{path};
  const HashOptions& o = c.options;
  const HashResult r = hash_model(paths, o);
  if (thorough) {
    const HashResult again = hash_model(paths, o);
    if (const std::string d = same_result(r, again); !d.empty()) {
      return "the same bytes hashed twice differ: " + d;
    }
  }
  std::string problem = check_result(bytes, r, o, paths.size());
  if (!problem.empty()) return problem;
  if (r.status != 0) return {};
  problem = check_llama(r, o, c.name);
  if (!problem.empty()) return problem;
  // The JSON manifest, with the options `hash --format json` gives: sha256 and the manifest's
  // digests, per tensor.
  HashOptions json = o;
  json.algorithms.sha256 = true;
  json.manifest = true;
  json.per_tensor = true;
  const bool same = json.algorithms.sha256 == o.algorithms.sha256 && o.manifest && o.per_tensor;
  const HashResult m = same ? HashResult{} : hash_model(paths, json);
  const HashResult& hashed = same ? r : m;
  if (hashed.status != 0) return "hashed, but not with the manifest's options: " + hashed.error;
  problem = check_result(bytes, hashed, json, paths.size());
  if (!problem.empty()) return "with the manifest's options: " + problem;
  return check_manifest(bytes, paths, hashed, json, c.twice, thorough);
}

// Things that need no input: checked once per process.
std::string check_once() {
  HashOptions o;
  o.algorithms = {true, true, true, true};
  o.manifest = true;
  const HashResult none = hash_model({}, o);
  if (none.status != 0 || none.merkle_root != detail::sha256_of(nullptr, 0)) {
    return "no file: not the digests of nothing";
  }
  const HashResult missing = hash_model({"/nonexistent/fuzz_hash.gguf"}, o);
  if (missing.status != 2 || missing.error.empty()) return "a missing file: not status 2";
  if (parse_uuid(uuid_text(kLlamaCppUuidNamespace)) != kLlamaCppUuidNamespace) {
    return "a UUID's text does not read back";
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  const Bytes input(data, size);
  static const bool once = [&] {
    fuzz::fail_if(check_once(), input);
    return true;
  }();
  (void)once;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const MemFile file(bytes);
  if (!file.ok()) return 0;
  const std::string path = file.path();
  const std::uint64_t h = fnv(data, size);

  // Cancelled before it starts: 130, nothing else.
  const std::atomic<bool> cancel{true};
  HashOptions cancelled = choice_of(h).options;
  cancelled.cancel = &cancel;
  const HashResult c = hash_model({path}, cancelled);
  if (c.status != 130 || !c.files.empty() || !c.tensors.empty()) {
    fuzz::fail_if("a cancelled hash: status " + std::to_string(c.status), input);
  }

  // A container the llama.cpp profile accepts is hashed.
  if (fuzz::every_run || h % 4 == 0) {
    Options llama;
    llama.profile = Profile::LlamaCpp;
    llama.model_checks = false;
    llama.template_checks = false;
    llama.helper_thread = false;
    HashOptions o;
    o.threads = 1;
    if (validate_file(path, llama).passed()) {
      const HashResult r = hash_model({path}, o);
      if (r.status != 0) {
        fuzz::fail_if("the llama.cpp profile accepts the file, hash_model refuses it: " + r.error,
                      input);
      }
    }
  }

  if (!fuzz::every_run) {
    fuzz::fail_if(check_hash(bytes, path, choice_of(h >> 8), (h >> 30) % 4 == 0), input);
    return 0;
  }
  // A replay: the chosen options and a few that cover every switch between them.
  for (const std::uint64_t bits :
       {h >> 8, std::uint64_t{0x00f}, std::uint64_t{0x0a5 | 1U << 11},
        std::uint64_t{0x15a | 2U << 11}, std::uint64_t{0x0ff | 3U << 11 | 1U << 13}}) {
    fuzz::fail_if(check_hash(bytes, path, choice_of(bits), true), input);
  }
  return 0;
}

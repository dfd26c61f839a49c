// The texts of llama-gguf-hash (examples/gguf-hash in llama.cpp), byte for byte: its lines, its
// manifest as it reads one, and its --check verdicts and exit status. Also hex, UUIDs and the
// Merkle root.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <set>

#include "ggufcheck/hash.hpp"
#include "ggufcheck/render.hpp"
#include "index/keys.hpp"
#include "report/sink.hpp"
#include "util/digest.hpp"

namespace ggufcheck {

std::string hex(const std::uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(2 * size, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0x0f];
  }
  return out;
}

std::string xxh64_text(std::uint64_t value) {
  return fmt::format("{:016x}", value);
}

std::string uuid_text(const Uuid& u) {
  const std::string h = hex(u);
  return fmt::format("{}-{}-{}-{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 4),
                     h.substr(16, 4), h.substr(20));
}

std::optional<Uuid> parse_uuid(std::string_view text) {
  if (text.size() != 36) return std::nullopt;
  Uuid out{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return std::nullopt;
      continue;
    }
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    if (v < 0) return std::nullopt;
    out[n / 2] = static_cast<std::uint8_t>(out[n / 2] | (n % 2 == 0 ? v << 4 : v));
    ++n;
  }
  return out;
}

namespace {

// RFC 6962 section 2.1: MTH of leaves [begin, end), end - begin >= 1.
Sha256Digest subtree(const std::vector<Sha256Digest>& leaves, std::size_t begin, std::size_t end) {
  detail::Digest d(detail::DigestKind::Sha256);
  if (end - begin == 1) {
    const std::uint8_t prefix = 0x00;
    d.update(&prefix, 1);
    d.update(leaves[begin].data(), leaves[begin].size());
    return d.sha256();
  }
  std::size_t k = 1;
  while (k * 2 < end - begin) k *= 2;  // the largest power of two below the count
  const Sha256Digest left = subtree(leaves, begin, begin + k);
  const Sha256Digest right = subtree(leaves, begin + k, end);
  const std::uint8_t prefix = 0x01;
  d.update(&prefix, 1);
  d.update(left.data(), left.size());
  d.update(right.data(), right.size());
  return d.sha256();
}

// llama-gguf-hash's line: printf("%-8s  %-s  %s\n", type, hash, name).
void line(std::string& out, std::string_view type, std::string_view hash, std::string_view name) {
  out += fmt::format("{:<8}  {}  {}", type, hash, name);
}

// A file or tensor name as one word of a line: a line is read back as whitespace-separated words
// (--check), so a name holding a newline could forge a line of its own and one holding a space
// would be cut. Such a name (and one a terminal would misread: control bytes, C1, bidi overrides,
// invalid UTF-8, a backslash) is escaped as findings are (\xNN, \\, \"; a space \x20); the rest is
// as llama-gguf-hash prints it. An escaped word always holds a backslash and a plain one never
// does, so no two names print the same.
std::string line_word(std::string_view name) {
  if (name.find(' ') == std::string_view::npos) return shown_name(name);
  std::string out;
  for (const char c : detail::escape(name, name.size())) {
    if (c == ' ') {
      out += "\\x20";
    } else {
      out += c;
    }
  }
  return out;
}

// Its names are C strings: a tensor's name ends at its first NUL (gguf_get_tensor_name).
std::string layer_name(std::string_view file, std::string_view tensor) {
  std::string out = line_word(file);
  out += ':';
  out += line_word(detail::c_string_prefix(tensor));
  return out;
}

// The digests of one tensor, or of the model, in llama-gguf-hash's order: xxh64, sha1, sha256.
struct Hex {
  std::string_view type;
  std::string value;
};
std::vector<Hex> tensor_digests(const TensorHash& t, const HashAlgorithms& a) {
  std::vector<Hex> out;
  if (a.xxh64) out.push_back({"xxh64", xxh64_text(t.xxh64)});
  if (a.sha1) out.push_back({"sha1", hex(t.sha1)});
  if (a.sha256) out.push_back({"sha256", hex(t.sha256)});
  return out;
}
std::vector<Hex> model_digests(const HashResult& r, const HashAlgorithms& a) {
  std::vector<Hex> out;
  if (a.xxh64) out.push_back({"xxh64", xxh64_text(r.xxh64)});
  if (a.sha1) out.push_back({"sha1", hex(r.sha1)});
  if (a.sha256) out.push_back({"sha256", hex(r.sha256)});
  if (a.uuid) out.push_back({"uuid", uuid_text(r.uuid)});
  return out;
}

// C's isspace in the "C" locale: what `istream >> std::string` stops at.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string manifest_key(std::string_view type, std::string_view name) {
  std::string key(type);
  key += '\0';
  key += name;
  return key;
}

// Reads a llama-gguf-hash manifest as it does (getline, then `>> type >> hash >> name`), in
// blocks: each line's first three words, each kept up to `longest` + 1 bytes (a longer word
// equals nothing looked up), so a hostile line costs no memory. Calls word_line(words, count).
template <typename OnLine>
bool read_lines(const std::string& path, std::size_t longest, OnLine&& on_line) {
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "rb"),
                                                          &std::fclose);
  if (!file) return false;
  std::array<std::string, 3> words;
  std::size_t count = 0;  // words begun on this line
  bool in_word = false;
  const auto end_line = [&] {
    on_line(words, count);
    for (std::string& w : words) w.clear();
    count = 0;
    in_word = false;
  };
  std::vector<char> block(std::size_t{1} << 16);
  bool any = false;  // bytes since the last newline (getline's last line has no newline)
  for (;;) {
    const std::size_t n = std::fread(block.data(), 1, block.size(), file.get());
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = block[i];
      if (c == '\n') {
        end_line();
        any = false;
        continue;
      }
      any = true;
      if (is_space(c)) {
        in_word = false;
        continue;
      }
      if (!in_word) {
        in_word = true;
        ++count;
      }
      if (count <= words.size() && words[count - 1].size() <= longest) words[count - 1] += c;
    }
  }
  if (any) end_line();
  return true;
}

void note_kind(HashAlgorithms& kinds, std::string_view word) {
  if (word == "sha256") kinds.sha256 = true;
  if (word == "sha1") kinds.sha1 = true;
  if (word == "xxh64") kinds.xxh64 = true;
  if (word == "uuid") kinds.uuid = true;
}

}  // namespace

Sha256Digest merkle_root(const std::vector<Sha256Digest>& leaves) {
  if (leaves.empty()) return detail::sha256_of(nullptr, 0);
  return subtree(leaves, 0, leaves.size());
}

std::string render_llama_hash(const HashResult& result, const HashOptions& options,
                              std::string_view name) {
  std::string out;
  const HashAlgorithms& a = options.algorithms;
  if (options.per_tensor) {
    for (const TensorHash& t : result.tensors) {
      const std::string layer = layer_name(name, t.name);
      for (const Hex& h : tensor_digests(t, a)) {
        line(out, h.type, h.value, layer);
        out += '\n';
      }
    }
  }
  for (const Hex& h : model_digests(result, a)) {
    line(out, h.type, h.value, line_word(name));
    out += '\n';
  }
  return out;
}

std::optional<HashAlgorithms> LlamaManifest::kinds_of(const std::string& path) {
  HashAlgorithms kinds;
  if (!read_lines(path, 8, [&](const std::array<std::string, 3>& words, std::size_t count) {
        if (count >= 1) note_kind(kinds, words[0]);
      })) {
    return std::nullopt;
  }
  return kinds;
}

std::optional<LlamaManifest> LlamaManifest::read(
    const std::string& path, const std::vector<std::pair<std::string, std::string>>& wanted) {
  LlamaManifest manifest;
  std::set<std::string> keys;
  std::size_t longest = 64;  // a sha256 in hex
  for (const auto& [type, name] : wanted) {
    keys.insert(manifest_key(type, name));
    longest = std::max(longest, name.size());
  }
  if (!read_lines(path, longest, [&](const std::array<std::string, 3>& words, std::size_t count) {
        if (count >= 1) note_kind(manifest.kinds, words[0]);
        if (count < 3) return;  // llama-gguf-hash skips a line without three words
        std::string key = manifest_key(words[0], words[2]);
        if (keys.count(key) != 0) manifest.first_.emplace(std::move(key), words[1]);
      })) {
    return std::nullopt;
  }
  return manifest;
}

LlamaManifest::Match LlamaManifest::match(std::string_view type, std::string_view name,
                                          std::string_view digest) const {
  const auto it = first_.find(manifest_key(type, name));
  if (it == first_.end()) return Match::NotFound;
  return it->second == digest ? Match::Ok : Match::Mismatch;
}

std::string llama_manifest_line(const std::string& manifest_path, const HashAlgorithms& kinds) {
  std::string out = "manifest  " + line_word(manifest_path);
  if (kinds.sha256) out += "  sha256";
  if (kinds.sha1) out += "  sha1";
  if (kinds.xxh64) out += "  xxh64";
  if (kinds.uuid) out += "  uuid";
  out += '\n';
  return out;
}

std::vector<std::pair<std::string, std::string>> llama_check_keys(const HashResult& result,
                                                                  const HashOptions& options,
                                                                  std::string_view name) {
  std::vector<std::pair<std::string, std::string>> keys;
  const HashAlgorithms& a = options.algorithms;
  if (options.per_tensor) {
    for (const TensorHash& t : result.tensors) {
      const std::string layer = layer_name(name, t.name);
      for (const Hex& h : tensor_digests(t, a)) keys.emplace_back(h.type, layer);
    }
  }
  for (const Hex& h : model_digests(result, a)) {
    // llama-gguf-hash looks the UUID up among the sha256 lines (see render_llama_check).
    keys.emplace_back(h.type == "uuid" ? "sha256" : h.type, line_word(name));
  }
  return keys;
}

LlamaCheck render_llama_check(const HashResult& result, const HashOptions& options,
                              std::string_view name, const std::string& manifest_path,
                              const LlamaManifest& manifest) {
  LlamaCheck check;
  std::string& out = check.text;
  out = llama_manifest_line(manifest_path, manifest.kinds);
  static constexpr std::array<std::string_view, 3> kVerdict = {"Not Found", "Mismatch", "Ok"};
  bool layer_found = false, layer_mismatch = false, model_found = false, model_mismatch = false;
  const auto verdict = [&](std::string_view type, std::string_view lookup, const std::string& value,
                           std::string_view word, bool layer) {
    const LlamaManifest::Match m = manifest.match(lookup, word, value);
    bool& found = layer ? layer_found : model_found;
    bool& mismatch = layer ? layer_mismatch : model_mismatch;
    if (m != LlamaManifest::Match::NotFound) found = true;
    if (m == LlamaManifest::Match::Mismatch) mismatch = true;
    line(out, type, value, word);
    out += "  -  ";
    out += kVerdict[static_cast<std::size_t>(m)];
    out += '\n';
  };
  const HashAlgorithms& a = options.algorithms;
  if (options.per_tensor) {
    for (const TensorHash& t : result.tensors) {
      const std::string layer = layer_name(name, t.name);
      for (const Hex& h : tensor_digests(t, a)) verdict(h.type, h.type, h.value, layer, true);
    }
  }
  for (const Hex& h : model_digests(result, a)) {
    // As llama-gguf-hash does: the UUID is compared with the manifest's sha256 line of the file,
    // so it never matches (docs/hash.md, "Compatibility").
    verdict(h.type, h.type == "uuid" ? "sha256" : h.type, h.value, line_word(name), false);
  }
  if (!model_found) {
    if (!layer_found) {
      check.status = 3;  // HASH_EXIT_MANIFEST_MISSING_ENTRY
    } else {
      check.status = layer_mismatch ? 1 : 0;
    }
  } else {
    check.status = (layer_found && layer_mismatch) || model_mismatch ? 1 : 0;
  }
  static constexpr std::array<std::string_view, 6> kExit = {"Success",
                                                            "Failure",
                                                            "Mismatch",
                                                            "Manifest Missing Entry",
                                                            "Manifest Unknown Hash",
                                                            "Manifest File Error"};
  out += fmt::format("\nVerification results for {} - {}\n", line_word(manifest_path),
                     kExit[static_cast<std::size_t>(check.status)]);
  return check;
}

}  // namespace ggufcheck

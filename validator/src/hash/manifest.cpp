// The JSON manifest (docs/hash.md): written from a HashResult, read back with a SAX reader that
// keeps only the records it knows (no document tree: memory follows the tensors, bounded in
// depth), and compared with what the files hold now.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "ggufcheck/format.hpp"
#include "ggufcheck/hash.hpp"
#include "ggufcheck/render.hpp"
#include "report/sink.hpp"
#include "util/utf8.hpp"

namespace ggufcheck {

namespace {

constexpr std::string_view kFormat = "ggufcheck-hash-manifest";
constexpr std::uint64_t kVersion = 1;

// A JSON string: ", \\ and C0 escaped as JSON requires, and DEL, the C1 controls (U+0080..U+009F:
// CSI, OSC) and the bidi overrides (U+202A..U+202E, U+2066..U+2069) as \\uXXXX too, so that a
// manifest shown on a terminal cannot act on it through a name; a JSON reader decodes them to the
// same text.
void json_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    const auto next = [&](std::size_t k) {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
    };
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else if (u == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {  // U+0080..U+009F
      out += fmt::format("\\u{:04x}", next(1));
      ++i;
    } else if (u == 0xe2 && ((next(1) == 0x80 && next(2) >= 0xaa && next(2) <= 0xae) ||
                             (next(1) == 0x81 && next(2) >= 0xa6 && next(2) <= 0xa9))) {
      out += fmt::format("\\u{:04x}", 0x2000 + ((next(1) & 0x3f) << 6) + (next(2) & 0x3f));
      i += 2;
    } else {
      out += c;
    }
  }
  out += '"';
}

// "name": "..." when the bytes are UTF-8, else "name_hex": "..." (as dump does).
void text_member(std::string& out, std::string_view name, std::string_view bytes) {
  if (detail::is_valid_utf8(bytes)) {
    json_string(out, name);
    out += ": ";
    json_string(out, bytes);
  } else {
    json_string(out, std::string(name) + "_hex");
    out += ": ";
    json_string(out, hex(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  }
}

std::string type_name(std::uint32_t id) {
  const TensorTypeInfo* info = tensor_type(id);
  return info != nullptr ? std::string(info->name) : fmt::format("type {}", id);
}

}  // namespace

std::string render_manifest_model(const HashResult& r, const HashOptions& options) {
  const HashAlgorithms& a = options.algorithms;
  std::string out = "    {\n      \"files\": [\n";
  for (std::size_t i = 0; i < r.files.size(); ++i) {
    const FileHash& f = r.files[i];
    out += "        {";
    text_member(out, "path", f.path);
    out += fmt::format(
        ", \"size\": {}, \"header_sha256\": \"{}\", \"tensor_count\": {}, \"data_start\": {}, "
        "\"gap_bytes\": {}, \"gaps_sha256\": \"{}\"}}{}\n",
        f.size, hex(f.header_sha256), f.tensor_count, f.data_start, f.gap_bytes, hex(f.gaps_sha256),
        i + 1 < r.files.size() ? "," : "");
  }
  out += fmt::format("      ],\n      \"tensor_count\": {},\n      \"tensor_bytes\": {},\n",
                     r.tensors.size(), r.tensor_bytes);
  out += "      \"digests\": {";
  std::string digests = fmt::format("\"sha256\": \"{}\"", hex(r.sha256));
  digests += fmt::format(", \"merkle_root\": \"{}\"", hex(r.merkle_root));
  if (a.xxh64) digests += fmt::format(", \"xxh64\": \"{}\"", xxh64_text(r.xxh64));
  if (a.sha1) digests += fmt::format(", \"sha1\": \"{}\"", hex(r.sha1));
  if (a.uuid) digests += fmt::format(", \"uuid\": \"{}\"", uuid_text(r.uuid));
  out += digests + "},\n";
  if (!r.files.empty() && r.files.front().general_uuid) {
    out += "      ";
    text_member(out, "general_uuid", *r.files.front().general_uuid);
    out += ",\n";
  }
  out += "      \"tensors\": [\n";
  for (std::size_t i = 0; i < r.tensors.size(); ++i) {
    const TensorHash& t = r.tensors[i];
    out += "        {";
    text_member(out, "name", t.name);
    out += fmt::format(", \"file\": {}, \"type\": ", t.file);
    json_string(out, type_name(t.type));
    out += fmt::format(", \"type_id\": {}, \"shape\": [{}], \"offset\": {}, \"nbytes\": {}", t.type,
                       fmt::join(t.shape, ", "), t.offset, t.nbytes);
    out += fmt::format(", \"sha256\": \"{}\"", hex(t.sha256));
    if (a.xxh64) out += fmt::format(", \"xxh64\": \"{}\"", xxh64_text(t.xxh64));
    if (a.sha1) out += fmt::format(", \"sha1\": \"{}\"", hex(t.sha1));
    out += i + 1 < r.tensors.size() ? "},\n" : "}\n";
  }
  out += "      ]\n    }";
  return out;
}

std::string render_manifest(const std::vector<std::string>& models) {
  std::string out = fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"models\": [\n",
                                kFormat, kVersion);
  for (std::size_t i = 0; i < models.size(); ++i) {
    out += models[i];
    out += i + 1 < models.size() ? ",\n" : "\n";
  }
  out += "  ]\n}\n";
  return out;
}

// --- reading ---------------------------------------------------------------------------------

namespace {

using nlohmann::json;

// A structural mistake in the manifest: the SAX reader throws it, parse_manifest reports it.
struct Malformed {
  std::string message;
};

template <std::size_t N>
std::array<std::uint8_t, N> parse_hex(const std::string& where, const std::string& text) {
  std::array<std::uint8_t, N> out{};
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bool ok = text.size() == 2 * N;
  for (std::size_t i = 0; ok && i < N; ++i) {
    const int hi = digit(text[2 * i]), lo = digit(text[2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    if (ok) out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  if (!ok) throw Malformed{fmt::format("{}: expected {} hex digits", where, 2 * N)};
  return out;
}

// xxh64's text is its value in big-endian hex (xxh64_text).
std::uint64_t parse_xxh64(const std::string& where, const std::string& text) {
  std::uint64_t v = 0;
  for (const std::uint8_t b : parse_hex<8>(where, text)) v = v << 8 | b;
  return v;
}

std::string bytes_of_hex(const std::string& where, const std::string& text) {
  if (text.size() % 2 != 0) throw Malformed{fmt::format("{}: odd number of hex digits", where)};
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const auto pair = parse_hex<1>(where, text.substr(i, 2));
    out += static_cast<char>(pair[0]);
  }
  return out;
}

// Reads the manifest's events, keeping the members it knows by their path; unknown members are
// skipped (a later version may add some), anything nested deeper than the schema goes is refused.
class ManifestReader final : public json::json_sax_t {
 public:
  static constexpr std::size_t kMaxDepth = 8;

  Manifest manifest;
  bool format_seen = false;
  bool version_seen = false;
  // Which members each record had (the bits below): check_manifest requires those the writer
  // always writes, where a missing one would read as 0.
  struct Seen {
    std::uint32_t model = 0;
    std::vector<std::uint32_t> files;
    std::vector<std::uint32_t> tensors;
  };
  std::vector<Seen> seen;

  bool null() override { return scalar(Scalar{Kind::Null}); }
  bool boolean(bool) override { return scalar(Scalar{Kind::Other}); }
  bool number_integer(json::number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<json::number_unsigned_t>(v));
    return scalar(Scalar{Kind::Other});
  }
  bool number_unsigned(json::number_unsigned_t v) override {
    Scalar s{Kind::Unsigned};
    s.number = v;
    return scalar(s);
  }
  bool number_float(json::number_float_t, const json::string_t&) override {
    return scalar(Scalar{Kind::Other});
  }
  bool string(json::string_t& v) override {
    Scalar s{Kind::String};
    s.text = &v;
    return scalar(s);
  }
  bool binary(json::binary_t&) override { return scalar(Scalar{Kind::Other}); }

  bool start_object(std::size_t) override {
    open(false);
    const std::string p = pattern(frames_.size() - 1);
    if (p == "models.#") {
      manifest.models.emplace_back();
      seen.emplace_back();
    }
    if (p == "models.#.files.#") {
      model().files.emplace_back();
      seen.back().files.push_back(0);
    }
    if (p == "models.#.tensors.#") {
      model().tensors.emplace_back();
      seen.back().tensors.push_back(0);
    }
    if (p.empty() || is_object(p)) return true;
    expect_container(p, false);
    return true;
  }
  bool key(json::string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override {
    close();
    return true;
  }
  bool start_array(std::size_t) override {
    if (frames_.empty()) throw Malformed{"the manifest is not a JSON object"};
    open(true);
    const std::string p = pattern(frames_.size() - 1);
    expect_container(p, true);
    if (p == "models.#.tensors.#.shape") seen.back().tensors.back() |= kShape;
    return true;
  }
  bool end_array() override {
    close();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string what = e.what();
    const std::size_t at = what.find("parse error");
    if (at != std::string::npos) what = what.substr(at);
    throw Malformed{fmt::format("not JSON (byte {}): {}", position, what)};
  }

 private:
  enum class Kind : std::uint8_t { Null, Unsigned, String, Other };
  struct Scalar {
    Kind kind;
    std::uint64_t number = 0;
    const std::string* text = nullptr;
  };
  struct Frame {
    bool array = false;
    std::string key;        // objects: the member being read
    std::size_t index = 0;  // arrays: the element being read
    bool counted = false;   // arrays: an element was begun
  };

  ManifestModel& model() { return manifest.models.back(); }

  // The path of the value about to be read under frames [0, depth], as "models.#.files.#.size";
  // `where` the same with indices, for messages.
  // A key that is not a schema identifier ("models.#.files", "#") stands as "?", which no
  // schema path holds: such a member is unknown wherever it is, never a schema position.
  [[nodiscard]] std::string pattern(std::size_t depth) const {
    std::string p;
    for (std::size_t i = 0; i < depth; ++i) {
      if (!p.empty()) p += '.';
      p += frames_[i].array ? "#" : identifier_or_unknown(frames_[i].key);
    }
    return p;
  }
  static std::string identifier_or_unknown(const std::string& key) {
    const bool identifier = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
    return identifier ? key : "?";
  }
  // Where the value about to be read is, as "models[0].tensors[3].sha256", from the frames
  // [0, depth) (default: all).
  [[nodiscard]] std::string where(std::size_t depth = SIZE_MAX) const {
    std::string p;
    for (std::size_t i = 0; i < std::min(depth, frames_.size()); ++i) {
      const Frame& f = frames_[i];
      if (f.array) {
        p += fmt::format("[{}]", f.index);
      } else {
        if (!p.empty()) p += '.';
        p += detail::escape(f.key, 40);
      }
    }
    return p.empty() ? "the manifest" : p;
  }

  // A value begins in the innermost container: an array counts its elements.
  void begin_value() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (f.array) {
      if (f.counted) ++f.index;
      f.counted = true;
    }
  }
  void open(bool array) {
    begin_value();
    if (frames_.size() >= kMaxDepth) {
      throw Malformed{fmt::format("{}: nested deeper than a manifest goes", where())};
    }
    frames_.push_back(Frame{array, {}, 0, false});
  }
  void close() { frames_.pop_back(); }

  static bool is_array(const std::string& p) {
    return p == "models" || p == "models.#.files" || p == "models.#.tensors" ||
           p == "models.#.tensors.#.shape";
  }
  static bool is_object(const std::string& p) {
    return p == "models.#" || p == "models.#.files.#" || p == "models.#.tensors.#" ||
           p == "models.#.digests";
  }
  // Arrays and objects where the schema has them; elsewhere one of the wrong type.
  void expect_container(const std::string& p, bool array) {
    const bool known_array = is_array(p);
    if (array && known_array) return;
    if (known_array || is_object(p) || is_known_scalar(p)) {
      // The container just opened is the value: its place is the path without it.
      throw Malformed{fmt::format("{}: expected {}", where(frames_.size() - 1), expectation(p))};
    }
    // An unknown member: its contents are skipped.
  }
  static bool is_known_scalar(const std::string& p) {
    static const std::vector<std::string> kScalars = {"format",
                                                      "version",
                                                      "models.#.tensor_count",
                                                      "models.#.tensor_bytes",
                                                      "models.#.general_uuid",
                                                      "models.#.general_uuid_hex",
                                                      "models.#.files.#.path",
                                                      "models.#.files.#.path_hex",
                                                      "models.#.files.#.size",
                                                      "models.#.files.#.header_sha256",
                                                      "models.#.files.#.tensor_count",
                                                      "models.#.files.#.data_start",
                                                      "models.#.files.#.gap_bytes",
                                                      "models.#.files.#.gaps_sha256",
                                                      "models.#.digests.sha256",
                                                      "models.#.digests.merkle_root",
                                                      "models.#.digests.xxh64",
                                                      "models.#.digests.sha1",
                                                      "models.#.digests.uuid",
                                                      "models.#.tensors.#.name",
                                                      "models.#.tensors.#.name_hex",
                                                      "models.#.tensors.#.file",
                                                      "models.#.tensors.#.type",
                                                      "models.#.tensors.#.type_id",
                                                      "models.#.tensors.#.offset",
                                                      "models.#.tensors.#.nbytes",
                                                      "models.#.tensors.#.sha256",
                                                      "models.#.tensors.#.xxh64",
                                                      "models.#.tensors.#.sha1",
                                                      "models.#.tensors.#.shape.#"};
    return std::find(kScalars.begin(), kScalars.end(), p) != kScalars.end();
  }
  static std::string expectation(const std::string& p) {
    if (is_array(p)) return "an array";
    if (is_object(p)) return "an object";
    const std::string last = p.substr(p.rfind('.') + 1);
    if (last == "format" || last == "path" || last == "type" || last == "name" ||
        last == "general_uuid" || last.ends_with("_hex") || last == "uuid") {
      return "a string";
    }
    if (last == "version" || last == "size" || last == "tensor_count" || last == "tensor_bytes" ||
        last == "file" || last == "type_id" || last == "offset" || last == "nbytes" ||
        last == "data_start" || last == "gap_bytes" || last == "#") {
      return "a non-negative integer";
    }
    return "a string of hex digits";
  }

  bool scalar(const Scalar& s) {
    begin_value();
    const std::string p = pattern(frames_.size());
    if (p.empty()) throw Malformed{"the manifest is not a JSON object"};
    if (is_array(p) || is_object(p)) {
      throw Malformed{fmt::format("{}: expected {}", where(), expectation(p))};
    }
    if (!is_known_scalar(p)) return true;  // an unknown member
    const std::string want = expectation(p);
    const bool is_number = want == "a non-negative integer";
    if (is_number ? s.kind != Kind::Unsigned : s.kind != Kind::String) {
      throw Malformed{fmt::format("{}: expected {}", where(), want)};
    }
    const std::string w = where();
    const std::string text = s.text != nullptr ? *s.text : std::string();
    const std::uint64_t n = s.number;
    if (p == "format") {
      if (text != kFormat) {
        throw Malformed{fmt::format("format: \"{}\" is not \"{}\"", detail::escape(text), kFormat)};
      }
      format_seen = true;
    } else if (p == "version") {
      if (n != kVersion) {
        throw Malformed{fmt::format("version {}: this ggufcheck reads version {}", n, kVersion)};
      }
      version_seen = true;
    } else if (p.starts_with("models.#.files.#.")) {
      ManifestFile& f = model().files.back();
      std::uint32_t& had = seen.back().files.back();
      if (p.ends_with(".path")) f.path = text;
      if (p.ends_with(".path_hex")) f.path = bytes_of_hex(w, text);
      if (p.ends_with(".size")) {
        had |= kSize;
        f.size = n;
      }
      if (p.ends_with(".header_sha256")) f.header_sha256 = parse_hex<32>(w, text);
      if (p.ends_with(".tensor_count")) {
        had |= kCount;
        f.tensor_count = n;
      }
      if (p.ends_with(".data_start")) f.data_start = n;
      if (p.ends_with(".gap_bytes")) f.gap_bytes = n;
      if (p.ends_with(".gaps_sha256")) f.gaps_sha256 = parse_hex<32>(w, text);
    } else if (p.starts_with("models.#.tensors.#.")) {
      ManifestTensor& t = model().tensors.back();
      std::uint32_t& had = seen.back().tensors.back();
      if (p.ends_with(".name") || p.ends_with(".name_hex")) had |= kName;
      if (p.ends_with(".name")) t.name = text;
      if (p.ends_with(".name_hex")) t.name = bytes_of_hex(w, text);
      if (p.ends_with(".file")) {
        had |= kFile;
        t.file = static_cast<std::size_t>(std::min<std::uint64_t>(n, SIZE_MAX));
      }
      if (p.ends_with(".type")) t.type = text;
      if (p.ends_with(".type_id"))
        t.type_id = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, UINT32_MAX));
      if (p.ends_with(".shape.#")) t.shape.push_back(n);
      if (p.ends_with(".offset")) {
        had |= kOffset;
        t.offset = n;
      }
      if (p.ends_with(".nbytes")) {
        had |= kNbytes;
        t.nbytes = n;
      }
      if (p.ends_with(".sha256")) t.sha256 = parse_hex<32>(w, text);
      if (p.ends_with(".sha1")) t.sha1 = parse_hex<20>(w, text);
      if (p.ends_with(".xxh64")) t.xxh64 = parse_xxh64(w, text);
    } else if (p.starts_with("models.#.digests.")) {
      ManifestModel& m = model();
      if (p.ends_with(".sha256")) m.sha256 = parse_hex<32>(w, text);
      if (p.ends_with(".merkle_root")) m.merkle_root = parse_hex<32>(w, text);
      if (p.ends_with(".sha1")) m.sha1 = parse_hex<20>(w, text);
      if (p.ends_with(".xxh64")) m.xxh64 = parse_xxh64(w, text);
      if (p.ends_with(".uuid")) {
        m.uuid = parse_uuid(text);
        if (!m.uuid) throw Malformed{fmt::format("{}: not a UUID", w)};
      }
    } else if (p == "models.#.tensor_count") {
      seen.back().model |= kCount;
      model().tensor_count = n;
    } else if (p == "models.#.tensor_bytes") {
      seen.back().model |= kBytes;
      model().tensor_bytes = n;
    } else if (p == "models.#.general_uuid") {
      model().general_uuid = text;
    } else if (p == "models.#.general_uuid_hex") {
      model().general_uuid = bytes_of_hex(w, text);
    }
    return true;
  }

  std::vector<Frame> frames_;

 public:
  // Members seen (Seen's bits).
  static constexpr std::uint32_t kSize = 1, kCount = 2, kBytes = 4, kName = 8, kFile = 16,
                                 kShape = 32, kOffset = 64, kNbytes = 128;
};

// What a manifest must hold to be compared with anything: the members the writer always writes,
// and records that agree with each other (docs/hash.md, "A consistent manifest"). A manifest
// that fails is not compared at all: an edited count, a missing digest or a tensor outside its
// file would otherwise leave part of the model unchecked while verify says OK.
std::optional<std::string> check_manifest(const ManifestReader& reader) {
  using R = ManifestReader;
  if (!reader.format_seen) return fmt::format("no \"format\": \"{}\" member", kFormat);
  if (!reader.version_seen) return "no \"version\" member";
  const Manifest& m = reader.manifest;
  if (m.models.empty()) return "no model (\"models\" is missing or empty)";
  for (std::size_t i = 0; i < m.models.size(); ++i) {
    const ManifestModel& model = m.models[i];
    const ManifestReader::Seen& seen = reader.seen[i];
    const std::string at_model = fmt::format("models[{}]", i);
    if (model.files.empty()) return at_model + ": no file";
    if ((seen.model & R::kCount) == 0) return at_model + ": no tensor_count";
    if ((seen.model & R::kBytes) == 0) return at_model + ": no tensor_bytes";
    if (!model.sha256) return at_model + ".digests: no sha256";
    if (!model.merkle_root) return at_model + ".digests: no merkle_root";
    if (model.tensor_count != model.tensors.size()) {
      return fmt::format("{}: tensor_count is {}, but {} tensor record{} listed", at_model,
                         model.tensor_count, model.tensors.size(),
                         model.tensors.size() == 1 ? " is" : "s are");
    }
    std::uint64_t file_tensors = 0;
    for (std::size_t j = 0; j < model.files.size(); ++j) {
      const ManifestFile& f = model.files[j];
      const std::string at = fmt::format("{}.files[{}]", at_model, j);
      if (f.path.empty()) return at + ": no path";
      if (f.path.find('\0') != std::string::npos) {
        return at + ": the path holds a NUL byte (no file can be named so)";
      }
      if ((seen.files[j] & R::kSize) == 0) return at + ": no size";
      if (!f.header_sha256) return at + ": no header_sha256";
      if ((seen.files[j] & R::kCount) == 0) return at + ": no tensor_count";
      if (f.gaps_sha256.has_value() != f.gap_bytes.has_value() ||
          f.gaps_sha256.has_value() != f.data_start.has_value()) {
        return at + ": data_start, gap_bytes and gaps_sha256 go together (one is missing)";
      }
      if (f.data_start && *f.data_start > f.size) {
        return fmt::format("{}: data_start {} is past the file's size {}", at, *f.data_start,
                           f.size);
      }
      if (f.tensor_count > model.tensors.size()) {
        return fmt::format("{}: tensor_count is {}, but the model lists {} tensor{}", at,
                           f.tensor_count, model.tensors.size(),
                           model.tensors.size() == 1 ? "" : "s");
      }
      file_tensors += f.tensor_count;  // each at most the records': no wrap
    }
    if (file_tensors != model.tensor_count) {
      return fmt::format("{}: the files' tensor_count add up to {}, the model's is {}", at_model,
                         file_tensors, model.tensor_count);
    }
    // Per tensor: every member, its file in order, its bytes inside the file, the digests the
    // model declares; per file: the count of its tensors, and no two tensors overlapping.
    std::vector<std::uint64_t> in_file(model.files.size(), 0);
    std::vector<std::uint64_t> data_bytes(model.files.size(), 0);
    std::vector<std::pair<std::uint64_t, std::size_t>> starts;  // (offset, tensor) of one file
    std::uint64_t sum = 0;
    bool sum_wraps = false;
    std::size_t file = 0;
    std::vector<Sha256Digest> leaves;
    leaves.reserve(model.tensors.size());
    const auto overlaps = [&]() -> std::optional<std::string> {
      std::sort(starts.begin(), starts.end());
      for (std::size_t k = 1; k < starts.size(); ++k) {
        const ManifestTensor& before = model.tensors[starts[k - 1].second];
        if (before.offset + before.nbytes > starts[k].first) {
          return fmt::format(
              "{}: tensors[{}] and tensors[{}] overlap (offsets {} and {}, {} "
              "bytes from the first)",
              at_model, starts[k - 1].second, starts[k].second, before.offset, starts[k].first,
              before.nbytes);
        }
      }
      starts.clear();
      return std::nullopt;
    };
    for (std::size_t j = 0; j < model.tensors.size(); ++j) {
      const ManifestTensor& t = model.tensors[j];
      const std::uint32_t had = seen.tensors[j];
      const std::string at = fmt::format("{}.tensors[{}]", at_model, j);
      for (const auto& [bit, name] :
           {std::pair{R::kName, "name"}, std::pair{R::kFile, "file"}, std::pair{R::kShape, "shape"},
            std::pair{R::kOffset, "offset"}, std::pair{R::kNbytes, "nbytes"}}) {
        if ((had & bit) == 0) return fmt::format("{}: no {}", at, name);
      }
      if (t.type.empty()) return at + ": no type";
      if (!t.sha256) return at + ": no sha256";
      if (t.file >= model.files.size()) {
        return fmt::format("{}: file {} is not one of the model's {}", at, t.file,
                           model.files.size());
      }
      if (t.file < file) {
        return fmt::format("{}: file {} after a tensor of file {} (the tensors are in file order)",
                           at, t.file, file);
      }
      if (t.file != file) {
        if (auto problem = overlaps()) return problem;
        file = t.file;
      }
      const ManifestFile& f = model.files[t.file];
      const std::uint64_t base = f.data_start.value_or(0);
      // offset + nbytes inside the file, from the data section's start where it is recorded.
      if (t.offset > f.size - base || t.nbytes > f.size - base - t.offset) {
        return fmt::format(
            "{}: {} bytes at offset {} of the data section{} are not inside "
            "file {} ({} bytes)",
            at, t.nbytes, t.offset, f.data_start ? fmt::format(" (from {})", base) : std::string(),
            t.file, f.size);
      }
      if (t.nbytes > 0) starts.emplace_back(t.offset, j);
      ++in_file[t.file];
      data_bytes[t.file] += t.nbytes;  // inside the file: no wrap
      if (!sum_wraps && UINT64_MAX - sum < t.nbytes) sum_wraps = true;
      sum += t.nbytes;
      for (const auto& [declared, has, name] :
           {std::tuple{model.xxh64.has_value(), t.xxh64.has_value(), "xxh64"},
            std::tuple{model.sha1.has_value(), t.sha1.has_value(), "sha1"}}) {
        if (declared && !has) {
          return fmt::format("{}: no {}, which the model's digests declare", at, name);
        }
        if (!declared && has) {
          return fmt::format("{}: a {} digest, which the model's digests do not declare", at, name);
        }
      }
      leaves.push_back(*t.sha256);
    }
    if (auto problem = overlaps()) return problem;
    if (sum_wraps || sum != model.tensor_bytes) {
      return fmt::format("{}: tensor_bytes is {}, but the tensors' nbytes add up to {}", at_model,
                         model.tensor_bytes,
                         sum_wraps ? std::string("more than 2^64") : std::to_string(sum));
    }
    for (std::size_t j = 0; j < model.files.size(); ++j) {
      const ManifestFile& f = model.files[j];
      if (in_file[j] != f.tensor_count) {
        return fmt::format("{}.files[{}]: tensor_count is {}, but {} tensor{} name{} file {}",
                           at_model, j, f.tensor_count, in_file[j], in_file[j] == 1 ? "" : "s",
                           in_file[j] == 1 ? "s" : "", j);
      }
      if (f.gap_bytes && *f.gap_bytes != f.size - *f.data_start - data_bytes[j]) {
        return fmt::format(
            "{}.files[{}]: gap_bytes is {}, but the data section ({} bytes from {}) less the "
            "tensors' {} bytes is {}",
            at_model, j, *f.gap_bytes, f.size - *f.data_start, *f.data_start, data_bytes[j],
            f.size - *f.data_start - data_bytes[j]);
      }
    }
    if (merkle_root(leaves) != *model.merkle_root) {
      return at_model +
             ".digests.merkle_root: not the root of the tensors' sha256 (the manifest was "
             "edited)";
    }
  }
  return std::nullopt;
}

}  // namespace

ManifestRead parse_manifest(std::string_view text) {
  ManifestRead out;
  ManifestReader reader;
  try {
    (void)json::sax_parse(text.begin(), text.end(), &reader);
  } catch (const Malformed& e) {
    out.error = e.message;
    return out;
  } catch (const std::exception& e) {  // nlohmann's own, e.g. invalid UTF-8 in a string
    out.error = fmt::format("not JSON: {}", e.what());
    return out;
  }
  if (auto problem = check_manifest(reader)) {
    out.error = std::move(*problem);
    return out;
  }
  out.manifest = std::move(reader.manifest);
  return out;
}

ManifestRead read_manifest(const std::string& path) {
  ManifestRead out;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "rb"),
                                                          &std::fclose);
  struct stat st {};
  if (!file || ::fstat(::fileno(file.get()), &st) != 0) {
    out.error = fmt::format("cannot open {}: {}", shown_name(path), std::strerror(errno));
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.error = fmt::format("cannot read {}: not a regular file", shown_name(path));
    return out;
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxManifestBytes) {
    out.error = fmt::format("{} is {}; a manifest is read up to {}", shown_name(path),
                            detail::byte_count(static_cast<std::uint64_t>(st.st_size)),
                            detail::byte_count(kMaxManifestBytes));
    return out;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (!text.empty() && std::fread(text.data(), 1, text.size(), file.get()) != text.size()) {
    out.error = fmt::format("cannot read {}: {}", shown_name(path), std::strerror(errno));
    return out;
  }
  out = parse_manifest(text);
  if (!out.manifest) out.error = fmt::format("{}: {}", shown_name(path), out.error);
  return out;
}

// --- verify ----------------------------------------------------------------------------------

HashOptions verify_hash_options(const ManifestModel& model) {
  HashOptions options;
  options.algorithms.sha256 = true;
  for (const ManifestTensor& t : model.tensors) {
    options.algorithms.xxh64 = options.algorithms.xxh64 || t.xxh64.has_value();
    options.algorithms.sha1 = options.algorithms.sha1 || t.sha1.has_value();
  }
  options.per_tensor = true;
  options.manifest = true;  // the header digests
  options.whole_model = false;
  options.uuid_if_declared = true;
  return options;
}

namespace {

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string short_hex(const std::string& h) {
  return h.size() > 16 ? h.substr(0, 16) + "..." : h;
}

}  // namespace

Verification compare(const ManifestModel& expected, const HashResult& actual,
                     const VerifyOptions& options) {
  Verification v;
  auto& diff = v.differences;
  if (!options.ignore_header) {
    if (expected.files.size() != actual.files.size()) {
      diff.push_back(fmt::format("the model has {} file(s), the manifest {}", actual.files.size(),
                                 expected.files.size()));
    }
    for (std::size_t i = 0; i < std::min(expected.files.size(), actual.files.size()); ++i) {
      const ManifestFile& e = expected.files[i];
      const FileHash& a = actual.files[i];
      if (e.size != a.size) {
        diff.push_back(fmt::format("{}: {} bytes, the manifest says {}", detail::escape(a.path),
                                   a.size, e.size));
      }
      if (e.header_sha256 && *e.header_sha256 != a.header_sha256) {
        diff.push_back(fmt::format(
            "{}: the header (metadata and tensor infos, the {} before the tensor data) differs "
            "from the manifest's (sha256 {} in the manifest, {} in the file)",
            detail::escape(a.path), detail::byte_count(a.data_start),
            short_hex(hex(*e.header_sha256)), short_hex(hex(a.header_sha256))));
      }
    }
  }
  // The bytes outside the header and the tensors (padding, gaps, trailing bytes): compared where
  // the manifest records them, else named as not compared.
  for (std::size_t i = 0; i < std::min(expected.files.size(), actual.files.size()); ++i) {
    const ManifestFile& e = expected.files[i];
    const FileHash& a = actual.files[i];
    if (e.gaps_sha256) {
      if (*e.gaps_sha256 != a.gaps_sha256 || (e.gap_bytes && *e.gap_bytes != a.gap_bytes)) {
        diff.push_back(fmt::format(
            "{}: the bytes outside the header and the tensors (alignment padding, gaps, "
            "trailing bytes) differ from the manifest's (sha256 {} of {} in the manifest, {} of "
            "{} in the file)",
            detail::escape(a.path), short_hex(hex(*e.gaps_sha256)),
            detail::byte_count(e.gap_bytes.value_or(0)), short_hex(hex(a.gaps_sha256)),
            detail::byte_count(a.gap_bytes)));
      }
    } else if (a.gap_bytes > 0) {
      std::string ranges;
      constexpr std::size_t kShown = 8;
      for (std::size_t k = 0; k < std::min(a.gaps.size(), kShown); ++k) {
        ranges += fmt::format("{}[0x{:x}, 0x{:x})", k > 0 ? ", " : "", a.gaps[k].first,
                              a.gaps[k].first + a.gaps[k].second);
      }
      if (a.gaps.size() > kShown) ranges += fmt::format(" and {} more", a.gaps.size() - kShown);
      v.notes.push_back(fmt::format(
          "{}: not compared: the {} outside the header and the tensors, in {} range{} ({}): the "
          "manifest records no gaps_sha256 (an earlier ggufcheck wrote it)",
          detail::escape(a.path), detail::byte_count(a.gap_bytes), a.gaps.size(),
          a.gaps.size() == 1 ? "" : "s", ranges));
    }
  }
  // Tensors by name; the k-th of a name with the k-th (names should be unique, but a file with
  // duplicates is still compared).
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < actual.tensors.size(); ++i) {
    by_name[actual.tensors[i].name].push_back(i);
  }
  std::map<std::string, std::size_t> taken;
  std::vector<bool> matched(actual.tensors.size(), false);
  std::vector<std::size_t> order;  // the matched file tensors, in the manifest's order
  for (const ManifestTensor& e : expected.tensors) {
    const std::string name = fmt::format("tensor \"{}\"", detail::escape(e.name));
    const auto it = by_name.find(e.name);
    std::size_t& k = taken[e.name];
    if (it == by_name.end() || k >= it->second.size()) {
      diff.push_back(fmt::format("{}: missing (in the manifest, not in the file)", name));
      continue;
    }
    const std::size_t index = it->second[k++];
    matched[index] = true;
    order.push_back(index);
    const TensorHash& a = actual.tensors[index];
    std::vector<std::string> what;
    const std::string type = tensor_type(a.type) != nullptr ? std::string(tensor_type(a.type)->name)
                                                            : fmt::format("type {}", a.type);
    if (e.type != type) {
      what.push_back(
          fmt::format("type {} in the manifest, {} in the file", detail::escape(e.type), type));
    }
    if (e.shape != a.shape) {
      what.push_back(fmt::format("shape {} in the manifest, {} in the file", shape_text(e.shape),
                                 shape_text(a.shape)));
    }
    if (e.sha256 && *e.sha256 != a.sha256) {
      what.push_back(fmt::format("data differs (sha256 {} in the manifest, {} in the file)",
                                 short_hex(hex(*e.sha256)), short_hex(hex(a.sha256))));
    } else if (e.sha1 && *e.sha1 != a.sha1) {
      what.push_back(fmt::format("data differs (sha1 {} in the manifest, {} in the file)",
                                 short_hex(hex(*e.sha1)), short_hex(hex(a.sha1))));
    } else if (e.xxh64 && *e.xxh64 != a.xxh64) {
      what.push_back(fmt::format("data differs (xxh64 {} in the manifest, {} in the file)",
                                 xxh64_text(*e.xxh64), xxh64_text(a.xxh64)));
    }
    if (!what.empty()) diff.push_back(fmt::format("{}: {}", name, fmt::join(what, "; ")));
  }
  for (std::size_t i = 0; i < actual.tensors.size(); ++i) {
    if (!matched[i]) {
      diff.push_back(fmt::format("tensor \"{}\": extra (in the file, not in the manifest)",
                                 detail::escape(actual.tensors[i].name)));
    }
  }
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (order[i] < order[i - 1]) {
      diff.push_back(fmt::format(
          "the tensors are in another order than the manifest's (tensor \"{}\" is number {} in "
          "the file, {} in the manifest)",
          detail::escape(actual.tensors[order[i]].name), order[i], i));
      break;
    }
  }
  if (!actual.files.empty()) {
    const FileHash& first = actual.files.front();
    if (!first.general_uuid_problem.empty()) {
      v.notes.push_back(first.general_uuid_problem);
    } else if (first.general_uuid) {
      const auto declared = parse_uuid(*first.general_uuid);
      if (!declared) {
        diff.push_back(
            fmt::format("general.uuid \"{}\" is not a UUID", detail::escape(*first.general_uuid)));
      } else if (*declared != actual.uuid) {
        diff.push_back(fmt::format(
            "general.uuid is {}, but the UUID of the tensor data (llama-gguf-hash --uuid) is {}",
            uuid_text(*declared), uuid_text(actual.uuid)));
      }
    }
  }
  return v;
}

}  // namespace ggufcheck

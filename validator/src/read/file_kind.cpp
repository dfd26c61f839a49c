#include "read/file_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "input/cursor.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {
namespace {

using namespace std::string_view_literals;

constexpr std::string_view kLfsVersion = "version https://git-lfs.github.com/spec/v1\n";
// torch.save's legacy format starts with a pickled magic number: PROTO 2, LONG1 of 10 bytes
// (0x1950a86a20f9469cfc6c little-endian).
constexpr std::string_view kTorchLegacy =
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"sv;

constexpr FileSignature kSignatures[] = {
    {FileKind::ByteSwappedGguf, "gguf_byte_swapped", 0, "FUGG"},
    // The legacy ggml formats stored their magic as a little-endian u32: the bytes read reversed.
    {FileKind::LegacyGgml, "legacy_ggml_stored", 0, "lmgg"},
    {FileKind::LegacyGgml, "legacy_ggmf_stored", 0, "fmgg"},
    {FileKind::LegacyGgml, "legacy_ggjt_stored", 0, "tjgg"},
    {FileKind::LegacyGgml, "legacy_ggla_stored", 0, "algg"},
    {FileKind::LegacyGgml, "legacy_ggsa_stored", 0, "asgg"},
    {FileKind::LegacyGgml, "legacy_ggml", 0, "GGML"},
    {FileKind::LegacyGgml, "legacy_ggmf", 0, "GGMF"},
    {FileKind::LegacyGgml, "legacy_ggjt", 0, "GGJT"},
    {FileKind::LegacyGgml, "legacy_ggla", 0, "GGLA"},
    {FileKind::LegacyGgml, "legacy_ggsa", 0, "GGSA"},
    {FileKind::GitLfsPointer, "git_lfs_pointer", 0, kLfsVersion},
    {FileKind::Gzip, "gzip", 0, "\x1f\x8b\x08"sv},
    {FileKind::Zstd, "zstd", 0, "\x28\xb5\x2f\xfd"sv},
    {FileKind::Xz, "xz", 0, "\xfd\x37\x7a\x58\x5a\x00"sv},
    {FileKind::Bzip2, "bzip2", 0, "BZh"},
    {FileKind::Zip, "zip_local_header", 0, "PK\x03\x04"sv},
    {FileKind::Zip, "zip_empty", 0, "PK\x05\x06"sv},
    {FileKind::PytorchLegacy, "torch_legacy_magic", 0, kTorchLegacy},
    {FileKind::Pickle, "pickle_protocol_2", 0, "\x80\x02"sv},
    {FileKind::Pickle, "pickle_protocol_3", 0, "\x80\x03"sv},
    {FileKind::Pickle, "pickle_protocol_4", 0, "\x80\x04"sv},
    {FileKind::Pickle, "pickle_protocol_5", 0, "\x80\x05"sv},
    {FileKind::Tar, "tar_ustar", 257, "ustar"},
    // Text kinds are matched after a BOM and whitespace, case-insensitively; listed for
    // dictionaries.
    {FileKind::Html, "html_doctype", 0, "<!DOCTYPE html"},
    {FileKind::Html, "html", 0, "<html"},
    {FileKind::Html, "html_head", 0, "<head"},
    {FileKind::Json, "json_error", 0, "{\"error\":\""},
    {FileKind::Safetensors, "safetensors_header", 8, "{\""},
    {FileKind::Onnx, "onnx_ir_version", 0, "\x08"},
};

constexpr std::size_t kExcerpt = 60;  // bytes of a quoted excerpt (title, error, name)

constexpr std::string_view kGenericHint =
    "a GGUF file starts with the 4 bytes \"GGUF\" (47 47 55 46); this is not a GGUF file";
constexpr std::string_view kConvertHint =
    "llama.cpp loads GGUF only: convert the model with llama.cpp's convert_hf_to_gguf.py, run "
    "on the model's directory (its config.json and tokenizer files beside the weights)";

// The first bytes of the file, taken once through the cursor; every access below is checked
// against them.
class Head {
 public:
  explicit Head(const Input& input) : input_(input), text_(input.prefix(kIdentifyWindow)) {}
  [[nodiscard]] std::uint64_t file_size() const { return input_.size(); }
  [[nodiscard]] std::size_t size() const { return text_.size(); }
  [[nodiscard]] std::string_view text() const { return text_; }
  // The byte at i, or -1 past the bytes there are.
  [[nodiscard]] int at(std::size_t i) const {
    return i < text_.size() ? static_cast<unsigned char>(text_[i]) : -1;
  }
  [[nodiscard]] bool has(std::size_t offset, std::string_view bytes) const {
    return offset <= text_.size() && text_.size() - offset >= bytes.size() &&
           text_.substr(offset, bytes.size()) == bytes;
  }
  // Up to n bytes from offset (fewer at the end, none past it).
  [[nodiscard]] std::string_view from(std::size_t offset, std::size_t n) const {
    if (offset >= text_.size()) return {};
    return text_.substr(offset, std::min(n, text_.size() - offset));
  }
  [[nodiscard]] std::optional<std::uint64_t> le(std::size_t offset, std::size_t width) const {
    if (offset > text_.size() || text_.size() - offset < width) return std::nullopt;
    return input_.number_at(offset, static_cast<std::uint32_t>(width), Endian::Little);
  }
  // n bytes at any offset of the file (not only the head), or nothing if the file ends first.
  [[nodiscard]] std::optional<std::string_view> file_bytes(std::uint64_t offset,
                                                           std::uint64_t n) const {
    std::string_view out;
    if (!input_.view(offset, n, out)) return std::nullopt;
    return out;
  }

 private:
  const Input& input_;
  std::string_view text_;
};

bool is_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool starts_with_nocase(std::string_view text, std::size_t at, std::string_view lower_word) {
  if (at > text.size() || text.size() - at < lower_word.size()) return false;
  for (std::size_t i = 0; i < lower_word.size(); ++i) {
    if (lower(text[at + i]) != lower_word[i]) return false;
  }
  return true;
}

std::size_t find_nocase(std::string_view text, std::string_view lower_word, std::size_t from) {
  for (std::size_t at = from; at < text.size(); ++at) {
    if (starts_with_nocase(text, at, lower_word)) return at;
  }
  return std::string_view::npos;
}

// After an optional UTF-8 byte order mark and whitespace: where a text document starts.
std::size_t text_start(const Head& h) {
  std::size_t at = h.has(0, "\xef\xbb\xbf") ? 3 : 0;
  while (is_space(h.at(at))) ++at;
  return at;
}

// Whitespace runs become one space, the ends are trimmed: a title over three lines reads as one.
std::string squeeze(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (is_space(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string quoted(std::string_view excerpt) {
  return fmt::format("\"{}\"", escape(excerpt, kExcerpt));
}

Identification found(FileKind kind, std::string what, std::string_view hint) {
  return Identification{kind, std::move(what), std::string(hint)};
}

// --- the kinds ----------------------------------------------------------------------------------

// version https://git-lfs.github.com/spec/v1 / oid sha256:... / size N: what `git clone` leaves
// without git-lfs installed. Pointers are under 1024 bytes (git-lfs's own limit).
Identification git_lfs_pointer(const Head& h) {
  std::string what = "this is a Git LFS pointer, not the model";
  const std::string_view text = h.from(0, 1024);
  std::size_t at = text.find("\nsize ");
  if (at != std::string_view::npos) {
    at += 6;
    std::uint64_t n = 0;
    std::size_t digits = 0;
    bool ok = true;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      ok = ok && checked_mul(n, 10, n) &&
           checked_add(n, static_cast<std::uint64_t>(text[at] - '0'), n);
      ++at;
      ++digits;
    }
    if (ok && digits > 0 && (at == text.size() || text[at] == '\n')) {
      what += fmt::format(" (the pointer names {} bytes)", n);
    }
  }
  return found(FileKind::GitLfsPointer, std::move(what),
               "Git LFS never fetched the file: run \"git lfs pull\" in the clone (or \"git lfs "
               "install\" before cloning), or download the file itself");
}

Identification legacy_ggml(std::string_view magic) {
  std::string name(magic);
  if (name[0] >= 'a') {  // as stored: reversed, lower case
    std::reverse(name.begin(), name.end());
    for (char& c : name) c = static_cast<char>(c - 'a' + 'A');
  }
  if (name == "GGLA") {
    return found(FileKind::LegacyGgml, "this is a legacy GGLA file (a pre-GGUF LoRA adapter)",
                 "current llama.cpp loads no legacy ggml format: convert the adapter to GGUF "
                 "with llama.cpp's convert_lora_to_gguf.py");
  }
  return found(FileKind::LegacyGgml,
               fmt::format("this is a legacy {} file (pre-GGUF ggml format)", name),
               "current llama.cpp loads no legacy ggml format: convert the original weights "
               "to GGUF with llama.cpp's converter");
}

// gzip: ID1 ID2, CM 8 (deflate), FLG with its reserved bits clear; FNAME is the original name.
std::optional<Identification> gzip(const Head& h) {
  const int flags = h.at(3);
  if (flags < 0 || (flags & 0xE0) != 0) return std::nullopt;
  std::string what = "this is a gzip-compressed file";
  std::size_t at = 10;
  if ((flags & 0x04) != 0) {  // FEXTRA: a 2-byte length, then that many bytes
    const std::optional<std::uint64_t> extra = h.le(10, 2);
    at = extra ? 12 + static_cast<std::size_t>(*extra) : h.size();
  }
  if ((flags & 0x08) != 0) {  // FNAME, NUL-terminated
    const std::string_view rest = h.from(at, kIdentifyWindow);
    const std::size_t nul = rest.find('\0');
    if (nul != std::string_view::npos && nul > 0) {
      what += fmt::format(" (of {})", quoted(rest.substr(0, nul)));
    }
  }
  return found(FileKind::Gzip, std::move(what),
               "decompress it first (gunzip; a .tar.gz: tar -xzf) and check the GGUF file "
               "inside");
}

std::optional<Identification> bzip2(const Head& h) {
  const int level = h.at(3);
  // A compressed block's magic (pi) or the end of stream (sqrt(pi)) follows "BZh1".."BZh9".
  if (level < '1' || level > '9') return std::nullopt;
  if (!h.has(4, "\x31\x41\x59\x26\x53\x59"sv) && !h.has(4, "\x17\x72\x45\x38\x50\x90"sv)) {
    return std::nullopt;
  }
  return found(FileKind::Bzip2, "this is a bzip2-compressed file",
               "decompress it first (bunzip2) and check the GGUF file inside");
}

// A zip's first local file header names its first entry; torch.save's zip format puts
// <name>/data.pkl (or <name>/version) there.
Identification zip(const Head& h) {
  if (h.has(0, "PK\x05\x06"sv)) {
    return found(FileKind::Zip, "this is an empty zip archive",
                 "a zip holds no model here: download or export the model again");
  }
  std::string_view name;
  const std::optional<std::uint64_t> name_length = h.le(26, 2);
  if (name_length && *name_length > 0 && h.size() >= 30 + *name_length) {
    name = h.from(30, static_cast<std::size_t>(*name_length));
  }
  const auto ends_with = [name](std::string_view tail) {
    return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  if (ends_with("data.pkl") || ends_with("/version") || name == "version") {
    return found(FileKind::PytorchZip,
                 fmt::format("this is a PyTorch checkpoint (torch.save's zip format, first "
                             "entry {})",
                             quoted(name)),
                 std::string(kConvertHint) +
                     "; loading a pickle runs code, so convert only checkpoints you trust");
  }
  std::string what = "this is a zip archive";
  if (!name.empty()) what += fmt::format(" (first entry {})", quoted(name));
  return found(FileKind::Zip, std::move(what),
               "extract it first (unzip) and check the GGUF file inside");
}

// PROTO 2..5, then an opcode a pickler writes first: FRAME (protocol 4+), a container, a
// global, a small int, a string or None.
std::optional<Identification> pickle(const Head& h) {
  static constexpr std::string_view kFirstOpcodes = "\x95}]()cKMJXN\x8a\x8c\x88\x89"sv;
  const int op = h.at(2);
  if (op < 0 || kFirstOpcodes.find(static_cast<char>(op)) == std::string_view::npos) {
    return std::nullopt;
  }
  return found(FileKind::Pickle,
               fmt::format("this looks like a Python pickle (protocol {}), e.g. a PyTorch "
                           "checkpoint",
                           h.at(1)),
               std::string(kConvertHint) +
                   "; loading a pickle runs code, so convert only checkpoints you trust");
}

// POSIX ustar ("ustar\0") or GNU tar ("ustar  \0") at 257; the first entry's name at 0 (with
// the ustar prefix at 345).
std::optional<Identification> tar(const Head& h) {
  const int after = h.at(262);
  if (!h.has(257, "ustar") || (after != 0 && after != ' ')) return std::nullopt;
  const auto field = [&h](std::size_t offset, std::size_t width) {
    const std::string_view f = h.from(offset, width);
    return f.substr(0, f.find('\0'));
  };
  std::string name(field(0, 100));
  const std::string_view prefix = after == 0 ? field(345, 155) : std::string_view();
  if (!prefix.empty() && !name.empty()) name = std::string(prefix) + "/" + name;
  std::string what = "this is a tar archive";
  if (!name.empty()) what += fmt::format(" (first entry {})", quoted(name));
  return found(FileKind::Tar, std::move(what),
               "extract it first (tar -xf) and check the GGUF file inside");
}

// A u64 header length N, then N bytes of JSON ({"...": ...}, padded with spaces), then the
// data. N must fit the file and safetensors' own limit of 100 MB; the header must end in '}'.
std::optional<Identification> safetensors(const Head& h) {
  const std::optional<std::uint64_t> n = h.le(0, 8);
  if (!n || !h.has(8, "{\"") || *n < 2 || *n > 100'000'000 || *n > h.file_size() - 8) {
    return std::nullopt;
  }
  const std::uint64_t tail = std::min<std::uint64_t>(*n, 8);
  const std::optional<std::string_view> end = h.file_bytes(8 + *n - tail, tail);
  if (!end) return std::nullopt;
  const std::size_t last = end->find_last_not_of(' ');
  if (last == std::string_view::npos || (*end)[last] != '}') return std::nullopt;
  return found(FileKind::Safetensors, "this is a safetensors file, not GGUF", kConvertHint);
}

// A protobuf varint of at most 10 bytes at `at` in the head.
std::optional<std::uint64_t> varint(const Head& h, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const int b = h.at(at);
    if (b < 0) return std::nullopt;
    ++at;
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return std::nullopt;
}

// An ONNX ModelProto: ir_version (field 1, a small varint), then fields 2..8 in increasing
// order as protobuf serializers write them (producer_name, producer_version, domain,
// model_version, doc_string, graph, opset_import), each well-formed: strings that fit the file,
// names in printable ASCII. A false "this is ONNX" is worse than none: it takes the graph (field
// 7) or a printable producer name, and gives up at the first field that does not fit.
std::optional<Identification> onnx(const Head& h) {
  std::size_t at = 1;
  const std::optional<std::uint64_t> ir_version = varint(h, at);
  if (!ir_version || *ir_version < 1 || *ir_version > 20) return std::nullopt;
  int previous = 1;
  bool graph = false;
  std::string producer;
  for (int fields = 0; fields < 8 && !graph; ++fields) {
    const int tag = h.at(at);
    if (tag < 0) break;  // the head ends: judge on what was seen
    const int field = tag >> 3;
    const int wire = tag & 7;
    if (field <= previous || field > 8) return std::nullopt;
    ++at;
    previous = field;
    if (field == 5) {  // model_version, a varint
      if (wire != 0 || !varint(h, at)) return std::nullopt;
      continue;
    }
    if (wire != 2) return std::nullopt;
    const std::optional<std::uint64_t> length = varint(h, at);
    if (!length || *length > h.file_size() - std::min<std::uint64_t>(at, h.file_size())) {
      return std::nullopt;
    }
    if (field == 7) {
      graph = *length > 0;
      break;
    }
    if (field == 2 || field == 3 || field == 4) {
      if (*length > 256 || at + *length > h.size()) return std::nullopt;
      const std::string_view text = h.from(at, static_cast<std::size_t>(*length));
      if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
        return std::nullopt;
      }
      if (field == 2) producer = std::string(text);
      if (field == 3 && !producer.empty()) {
        producer += ' ';
        producer += text;
      }
    }
    if (at + *length > h.size()) break;
    at += static_cast<std::size_t>(*length);
  }
  if (!graph && producer.empty()) return std::nullopt;
  std::string what = "this looks like an ONNX model";
  if (!producer.empty()) what += fmt::format(" (producer {})", quoted(producer));
  return found(FileKind::Onnx, std::move(what),
               "llama.cpp does not load ONNX: convert the original weights (e.g. the Hugging "
               "Face model) to GGUF with llama.cpp's convert_hf_to_gguf.py");
}

std::optional<Identification> html(const Head& h) {
  const std::string_view text = h.text();
  const std::size_t start = text_start(h);
  if (!starts_with_nocase(text, start, "<!doctype html") &&
      !starts_with_nocase(text, start, "<html") && !starts_with_nocase(text, start, "<head")) {
    return std::nullopt;
  }
  std::string what = "this is an HTML page, not the model";
  const std::size_t title = find_nocase(text, "<title", start);
  if (title != std::string_view::npos) {
    const std::size_t open = text.find('>', title);
    const std::size_t close = open == std::string_view::npos ? open : text.find('<', open);
    if (close != std::string_view::npos) {
      const std::string shown = squeeze(text.substr(open + 1, close - open - 1));
      if (!shown.empty()) what += fmt::format(" (title {})", quoted(shown));
    }
  }
  return found(FileKind::Html, std::move(what),
               "a download returned a web page (an error, login or redirect page) instead of the "
               "file: check the URL (on Hugging Face a /blob/ link is the page, /resolve/ the "
               "file) and the access token, then download again");
}

// The string value of the first "key": "..." pair in the text, JSON escapes \" \\ \/ decoded
// and \n \r \t shown as spaces (others kept as written); nothing if the value is not a string.
std::optional<std::string> json_string_value(std::string_view text, std::string_view key) {
  const std::string needle = fmt::format("\"{}\"", key);
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    std::size_t i = at + needle.size();
    while (i < text.size() && is_space(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != ':') continue;
    ++i;
    while (i < text.size() && is_space(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size() || text[i] != '"') continue;
    std::string out;
    for (++i; i < text.size() && out.size() <= kExcerpt; ++i) {
      char c = text[i];
      if (c == '"') return squeeze(out);
      if (c == '\\' && i + 1 < text.size()) {
        c = text[++i];
        if (c == 'n' || c == 'r' || c == 't') {
          c = ' ';
        } else if (c != '"' && c != '\\' && c != '/') {
          out += '\\';
        }
      }
      out += c;
    }
    return squeeze(out);  // cut at the excerpt's length or the head's end
  }
  return std::nullopt;
}

// '{' then a key or '}', or '[' then a value or ']', after a BOM and whitespace, and no raw
// control byte but whitespace in the bytes looked at (JSON text has none).
std::optional<Identification> json(const Head& h) {
  const std::string_view text = h.text();
  const std::size_t start = text_start(h);
  const int open = h.at(start);
  std::size_t next = start + 1;
  while (is_space(h.at(next))) ++next;
  const int first = h.at(next);
  if (open == '{') {
    if (first != '"' && first != '}') return std::nullopt;
  } else if (open == '[') {
    if (first < 0 || std::string_view("{[\"]-0123456789tfn").find(static_cast<char>(first)) ==
                         std::string_view::npos) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (!std::all_of(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) >= 0x20 || is_space(static_cast<unsigned char>(c));
      })) {
    return std::nullopt;
  }
  std::string what = "this is a JSON document, not the model";
  for (const std::string_view key : {"error"sv, "message"sv, "detail"sv}) {
    if (const std::optional<std::string> value = json_string_value(text, key)) {
      if (value->empty()) continue;
      what += fmt::format(" ({} {})", key, quoted(*value));
      break;
    }
  }
  return found(FileKind::Json, std::move(what),
               "a download returned an API answer (often an error) instead of the file: check "
               "the URL, the access token (gated models need one) and that the file exists, "
               "then download again");
}

std::optional<Identification> by_signature(const Head& h, const FileSignature& s) {
  switch (s.kind) {
    case FileKind::ByteSwappedGguf:
      return found(s.kind, "this is \"GGUF\" stored as a byte-swapped u32",
                   "the magic is the 4 bytes \"GGUF\" (47 47 55 46); the writer stored it as a "
                   "byte-swapped u32");
    case FileKind::LegacyGgml: return legacy_ggml(s.bytes);
    case FileKind::GitLfsPointer: return git_lfs_pointer(h);
    case FileKind::Gzip: return gzip(h);
    case FileKind::Zstd:
      return found(s.kind, "this is a zstd-compressed file",
                   "decompress it first (zstd -d; a .tar.zst: tar --zstd -xf) and check the "
                   "GGUF file inside");
    case FileKind::Xz:
      return found(s.kind, "this is an xz-compressed file",
                   "decompress it first (xz -d; a .tar.xz: tar -xJf) and check the GGUF file "
                   "inside");
    case FileKind::Bzip2: return bzip2(h);
    case FileKind::Zip: return zip(h);
    case FileKind::PytorchLegacy:
      return found(s.kind, "this is a PyTorch checkpoint (torch.save's legacy format)",
                   std::string(kConvertHint) +
                       "; loading a pickle runs code, so convert only checkpoints you trust");
    case FileKind::Pickle: return pickle(h);
    case FileKind::Tar: return tar(h);
    default: return std::nullopt;  // matched below, by more than a fixed signature
  }
}

}  // namespace

std::string_view to_string(FileKind kind) {
  switch (kind) {
    case FileKind::Unknown: return "unknown";
    case FileKind::ByteSwappedGguf: return "byte-swapped-gguf";
    case FileKind::LegacyGgml: return "legacy-ggml";
    case FileKind::GitLfsPointer: return "git-lfs-pointer";
    case FileKind::Html: return "html";
    case FileKind::Json: return "json";
    case FileKind::Gzip: return "gzip";
    case FileKind::Zstd: return "zstd";
    case FileKind::Xz: return "xz";
    case FileKind::Bzip2: return "bzip2";
    case FileKind::Zip: return "zip";
    case FileKind::Tar: return "tar";
    case FileKind::Safetensors: return "safetensors";
    case FileKind::PytorchZip: return "pytorch-zip";
    case FileKind::PytorchLegacy: return "pytorch-legacy";
    case FileKind::Pickle: return "pickle";
    case FileKind::Onnx: return "onnx";
  }
  return "unknown";
}

std::span<const FileSignature> file_signatures() {
  return kSignatures;
}

Identification identify_file(const Input& input) {
  const Head h(input);
  // Fixed signatures first, in table order (the torch legacy magic before plain pickle; the
  // 4-byte legacy magics only on their exact 4 bytes, which a shorter file does not have).
  for (const FileSignature& s : kSignatures) {
    if (!h.has(static_cast<std::size_t>(s.offset), s.bytes)) continue;
    if (s.kind == FileKind::Html || s.kind == FileKind::Json || s.kind == FileKind::Safetensors ||
        s.kind == FileKind::Onnx) {
      continue;
    }
    if (std::optional<Identification> id = by_signature(h, s)) return std::move(*id);
  }
  for (const auto kind : {safetensors, onnx, html, json}) {
    if (std::optional<Identification> id = kind(h)) return std::move(*id);
  }
  return Identification{FileKind::Unknown, {}, std::string(kGenericHint)};
}

}  // namespace ggufcheck::detail

// `ggufcheck info` (ggufcheck/info.hpp): a summary of what the reader recorded, for people and
// for machines. Nothing here decides anything: the verdict is validation's, and every value is
// read back through the index as the checks read it, so a rejected file shows what was read.
#include "ggufcheck/info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "artifacts/artifacts.hpp"
#include "ggufcheck/render.hpp"
#include "index/keys.hpp"
#include "index/values.hpp"
#include "report/sink.hpp"
#include "splits/names.hpp"
#include "templates/known_templates.hpp"
#include "util/utf8.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {

namespace {

using detail::FileIndex;

// Names, keys and token texts are kept up to this many bytes (then shown cut, or JSON-cut).
constexpr std::size_t kInfoRawLimit = 4096;

struct FileTypeName {
  std::uint32_t value;
  std::string_view name;
};
constexpr FileTypeName kFileTypes[] = {
#define GGUFCHECK_FILE_TYPE(value, enumerator, name) {value, name},
#include "info/generated/file_types.inc"
#undef GGUFCHECK_FILE_TYPE
};

// What could move the cursor, hide or reorder text: C1 controls (CSI U+009B, OSC U+009D, ...),
// zero-width and bidi characters (U+200B..U+200F, U+202A..U+202E, U+2066..U+2069, ...), line
// and paragraph separators, the soft hyphen and the BOM.
bool hidden(std::uint32_t cp) {
  return (cp >= 0x80 && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF ||
         cp == 0xAD || cp == 0x061C;
}

// The UTF-8 sequence at bytes[i]: its length and code point, or length 0 when it is not valid.
std::size_t sequence_at(std::string_view bytes, std::size_t i, std::uint32_t& cp) {
  const auto byte = static_cast<unsigned char>(bytes[i]);
  const std::size_t length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
  if (length > bytes.size() - i || !detail::is_valid_utf8(bytes.substr(i, length))) return 0;
  cp = length == 1 ? byte : byte & (0xFFu >> (length + 1));
  for (std::size_t k = 1; k < length; ++k) {
    cp = (cp << 6) | (static_cast<unsigned char>(bytes[i + k]) & 0x3Fu);
  }
  return length;
}

// Text for a terminal: valid UTF-8 stays readable (tokens and names in any script), while what
// could move the cursor, hide or reorder text (controls, bidi and zero-width characters, invalid
// bytes) is escaped, and long text is cut at `limit` bytes. Written to `out` as it goes (a
// string, or the output of a streamed run: a value shown whole may be a gigabyte).
template <typename Sink>
void display_to(Sink& out, std::string_view bytes, std::size_t limit) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (i >= limit) {
      out += fmt::format("...({} bytes)", bytes.size());
      break;
    }
    const auto byte = static_cast<unsigned char>(bytes[i]);
    std::uint32_t cp = 0;
    const std::size_t length = sequence_at(bytes, i, cp);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", byte);
      ++i;
      continue;
    }
    if (length == 1) {
      if (byte == '"' || byte == '\\') {
        out += '\\';
        out += static_cast<char>(byte);
      } else if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\t') {
        out += "\\t";
      } else if (byte < 0x20 || byte == 0x7F) {
        out += fmt::format("\\x{:02x}", byte);
      } else {
        out += static_cast<char>(byte);
      }
    } else if (hidden(cp)) {
      out += fmt::format("\\u{{{:04x}}}", cp);
    } else {
      out += bytes.substr(i, length);
    }
    i += length;
  }
}

std::string display(std::string_view bytes, std::size_t limit) {
  std::string out;
  display_to(out, bytes, limit);
  return out;
}

// A JSON string of the bytes, quoted: what JSON requires escaped is (", \, C0), and so is what
// display() escapes for a terminal (DEL, C1, bidi and zero-width characters: as \uXXXX, which a
// JSON reader decodes to the same text), so a tool that prints a value cannot be made to move
// the cursor or reorder a line. Invalid UTF-8 becomes U+FFFD, byte by byte: info is for reading;
// `ggufcheck dump` gives exact bytes.
template <typename Sink>
void json_string_to(Sink& out, std::string_view bytes) {
  out += '"';
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    std::uint32_t cp = 0;
    const std::size_t length = sequence_at(bytes, i, cp);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (length > 1) {
      if (hidden(cp)) {
        out += fmt::format("\\u{:04x}", cp);
      } else {
        out += bytes.substr(i, length);
      }
    } else if (byte == '"' || byte == '\\') {
      out += '\\';
      out += static_cast<char>(byte);
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\b') {
      out += "\\b";
    } else if (byte == '\f') {
      out += "\\f";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += static_cast<char>(byte);
    }
    i += length;
  }
  out += '"';
}

// The output of a streamed run, in pieces: text is buffered and handed to the output each time
// the buffer holds 64 KiB, so no part of a file's info (a million pairs, a value shown whole)
// is ever held at once. After a failed write nothing more is written (failed()).
class Out {
 public:
  explicit Out(const InfoOutput& output) : output_(output) {}
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;
  ~Out() { (void)flush(); }

  Out& operator+=(std::string_view text) {
    if (!failed_) {
      buffer_.append(text);
      if (buffer_.size() >= kBuffer) (void)flush();
    }
    return *this;
  }
  Out& operator+=(char c) { return *this += std::string_view(&c, 1); }
  bool flush() {
    if (!failed_ && !buffer_.empty() && !output_(buffer_)) failed_ = true;
    buffer_.clear();
    return !failed_;
  }
  [[nodiscard]] bool failed() const { return failed_; }

 private:
  static constexpr std::size_t kBuffer = std::size_t{64} << 10;
  const InfoOutput& output_;
  std::string buffer_;
  bool failed_ = false;
};

// A JSON document written as it goes, indented as nlohmann's dump(2) indents; a value's own
// text (raw()) is written compact.
class JsonOut {
 public:
  explicit JsonOut(Out& out) : out_(out) {}
  void begin_object() { open('{'); }
  void begin_array() { open('['); }
  void end_object() { close('}'); }
  void end_array() { close(']'); }
  void key(std::string_view name) {
    element();
    json_string_to(out_, name);
    out_ += ": ";
    after_key_ = true;
  }
  // The start of a value: the comma and line before it (the caller writes the value to out()).
  Out& value() {
    if (after_key_) {
      after_key_ = false;
    } else if (!empty_.empty()) {
      element();
    }
    return out_;
  }
  void raw(std::string_view text) { value() += text; }
  void string(std::string_view bytes) { json_string_to(value(), bytes); }
  void null() { raw("null"); }
  void number(std::uint64_t n) { raw(std::to_string(n)); }
  void boolean(bool b) { raw(b ? "true" : "false"); }
  template <typename T>
  void optional(const std::optional<T>& v) {
    if (v) {
      number(*v);
    } else {
      null();
    }
  }
  void optional_string(const std::optional<std::string>& v) {
    if (v) {
      string(*v);
    } else {
      null();
    }
  }
  [[nodiscard]] Out& out() { return out_; }

 private:
  void open(char c) {
    value() += c;
    empty_.push_back(true);
  }
  void close(char c) {
    const bool empty = empty_.back();
    empty_.pop_back();
    if (!empty) newline();
    out_ += c;
  }
  void element() {
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    newline();
  }
  void newline() {
    out_ += '\n';
    for (std::size_t i = 0; i < empty_.size(); ++i) out_ += "  ";
  }

  Out& out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

std::string type_text(ValueType type) {
  return std::string(to_string(type));
}

std::string number_json(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt::format("{}", v);
}

// A scalar's value from its raw bits (host order, zero-extended from its width).
struct Scalar {
  std::string text;
  std::string json;
};
Scalar scalar_of(ValueType type, std::uint64_t bits) {
  switch (type) {
    case ValueType::Uint8:
    case ValueType::Uint16:
    case ValueType::Uint32:
    case ValueType::Uint64: {
      const std::string t = std::to_string(bits);
      return {t, t};
    }
    case ValueType::Int8:
    case ValueType::Int16:
    case ValueType::Int32:
    case ValueType::Int64: {
      const std::string t = std::to_string(detail::sign_extended(bits, scalar_size(type)));
      return {t, t};
    }
    case ValueType::Float32: {
      const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
      return {fmt::format("{}", f), number_json(static_cast<double>(f))};
    }
    case ValueType::Float64: {
      const double d = std::bit_cast<double>(bits);
      return {fmt::format("{}", d), number_json(d)};
    }
    case ValueType::Bool: {
      // A bool byte other than 0 or 1 is a finding of its own; shown as what it is.
      const std::string t = bits == 0 ? "false" : bits == 1 ? "true" : fmt::format("{}", bits);
      return {t, bits <= 1 ? t : std::to_string(bits)};
    }
    default: return {"?", "null"};
  }
}

// Renders one value through the value walker, as text (`text`) and/or JSON (`json`), written as
// it goes: arrays keep their first `head` elements at every level (all with full), and the walk
// stops once the outermost array has shown its head, so an elided array of a million strings
// costs its head, and a value shown whole costs the output buffer, not its size.
class ValueRender {
 public:
  ValueRender(std::size_t head, std::size_t string_limit, Out* text, Out* json)
      : head_(head), string_limit_(string_limit), text_(text), json_(json) {}

  bool scalar(ValueType type, std::uint64_t bits, std::uint64_t) {
    const Shown shown = element();
    if (shown != Shown::Yes) return shown == Shown::No;
    if (type != ValueType::Float32 && type != ValueType::Float64 && type != ValueType::Bool) {
      // Integers, the elements of the largest arrays: one conversion, no allocation.
      char digits[24];
      const bool is_signed = type == ValueType::Int8 || type == ValueType::Int16 ||
                             type == ValueType::Int32 || type == ValueType::Int64;
      const auto end = is_signed ? std::to_chars(digits, digits + sizeof digits,
                                                 detail::sign_extended(bits, scalar_size(type)))
                                       .ptr
                                 : std::to_chars(digits, digits + sizeof digits, bits).ptr;
      const std::string_view text(digits, static_cast<std::size_t>(end - digits));
      if (text_ != nullptr) *text_ += text;
      if (json_ != nullptr) *json_ += text;
      return !failed();
    }
    const Scalar s = scalar_of(type, bits);
    if (text_ != nullptr) *text_ += s.text;
    if (json_ != nullptr) *json_ += s.json;
    return !failed();
  }
  bool string(std::string_view text, std::uint64_t, std::uint64_t) {
    const Shown shown = element();
    if (shown != Shown::Yes) return shown == Shown::No;
    if (text.size() > string_limit_) elided_ = true;
    if (text_ != nullptr) {
      *text_ += '"';
      display_to(*text_, text, string_limit_);
      *text_ += '"';
    }
    if (json_ != nullptr)
      json_string_to(*json_, text.substr(0, std::min(text.size(), string_limit_)));
    return !failed();
  }
  bool begin_array(ValueType, std::uint64_t count, std::uint64_t) {
    const Shown shown = element();
    if (shown == Shown::Stop) return false;
    if (shown == Shown::Yes) put('[');
    levels_.push_back({count, 0, shown == Shown::Yes});
    return !failed();
  }
  bool end_array() {
    const Level level = levels_.back();
    levels_.pop_back();
    if (level.visible) {
      const std::uint64_t shown = std::min<std::uint64_t>(level.count, head_);
      if (level.count > shown) {
        elided_ = true;
        if (text_ != nullptr) {
          *text_ += fmt::format("{}... {} more", shown > 0 ? ", " : "", level.count - shown);
        }
      }
      put(']');
    }
    return !failed();
  }
  // After a walk that returned false: the outermost array stopped after its head; close it. (A
  // walk stopped by a failed output leaves the value cut: nothing more is written anyway.)
  void finish() {
    if (stopped_) (void)end_array();
  }

  [[nodiscard]] bool elided() const { return elided_; }

 private:
  enum class Shown : std::uint8_t { Yes, No, Stop };
  struct Level {
    std::uint64_t count;
    std::uint64_t started;
    bool visible;
  };
  void put(char c) {
    if (text_ != nullptr) *text_ += c;
    if (json_ != nullptr) *json_ += c;
  }
  [[nodiscard]] bool failed() const {
    return (text_ != nullptr && text_->failed()) || (json_ != nullptr && json_->failed());
  }
  // At the start of every value: whether it is shown, or the walk stops (the outermost array has
  // shown its head).
  Shown element() {
    if (levels_.empty()) return Shown::Yes;
    Level& level = levels_.back();
    const std::uint64_t index = level.started++;
    if (index >= head_) {
      if (levels_.size() == 1) {
        stopped_ = true;
        return Shown::Stop;
      }
      return Shown::No;
    }
    if (!level.visible) return Shown::No;
    if (index > 0) {
      if (text_ != nullptr) *text_ += ", ";
      if (json_ != nullptr) *json_ += ',';
    }
    return Shown::Yes;
  }

  std::size_t head_;
  std::size_t string_limit_;
  Out* text_;
  Out* json_;
  std::vector<Level> levels_;
  bool elided_ = false;
  bool stopped_ = false;
};

// The type info shows for pair i: "u32", "string", "array[string]", ...
std::string value_type(const FileIndex& index, std::size_t i) {
  const ValueType type = index.metadata[i].type();
  if (type == ValueType::Array) {
    return fmt::format("array[{}]", type_text(index.array(i).elements()));
  }
  return type_text(type);
}

// Arrays: the element count; strings: the byte length.
std::uint64_t value_count(const FileIndex& index, std::size_t i) {
  const ValueType type = index.metadata[i].type();
  if (type == ValueType::Array) return index.array(i).count;
  if (type == ValueType::String) return index.metadata[i].payload();
  return 0;
}

class KeyFinder {
 public:
  // Finds the first pair of each of `keys` (by the profile's key identity) in one pass: only the
  // keys info looks up are kept, not every key of a file of millions.
  KeyFinder(const FileIndex& index, Profile profile, const InfoOptions& options)
      : file_index_(index), profile_(profile), options_(options) {}

  void want(const std::vector<std::string>& keys) {
    std::unordered_map<std::string_view, std::optional<std::size_t>> wanted;
    for (const std::string& k : keys) wanted.emplace(k, std::nullopt);
    for (std::size_t i = 0; i < file_index_.metadata.size(); ++i) {
      const auto it = wanted.find(detail::key_identity(file_index_.key(i), profile_));
      if (it != wanted.end() && !it->second) it->second = i;
    }
    for (const auto& [key, index] : wanted) {
      if (index) first_.emplace(std::string(key), *index);
    }
  }

  // Only among the keys asked for with want().
  [[nodiscard]] std::optional<std::size_t> find(std::string_view key) const {
    const auto it = first_.find(std::string(key));
    if (it == first_.end()) return std::nullopt;
    return it->second;
  }
  // The raw bytes (cut at kInfoRawLimit: a hostile name may be a gigabyte).
  [[nodiscard]] std::optional<std::string> string(std::string_view key) const {
    const auto i = find(key);
    if (!i || file_index_.metadata[*i].type() != ValueType::String) return std::nullopt;
    return std::string(file_index_.string_value(*i).substr(0, kInfoRawLimit));
  }
  // Any integer type holding a value >= 0.
  [[nodiscard]] std::optional<std::uint64_t> unsigned_value(std::string_view key) const {
    const auto i = find(key);
    if (!i) return std::nullopt;
    const ValueType type = file_index_.metadata[*i].type();
    const std::uint64_t bits = file_index_.metadata[*i].payload();
    switch (type) {
      case ValueType::Uint8:
      case ValueType::Uint16:
      case ValueType::Uint32:
      case ValueType::Uint64: return bits;
      case ValueType::Int8:
      case ValueType::Int16:
      case ValueType::Int32:
      case ValueType::Int64: {
        const std::int64_t v = detail::sign_extended(bits, scalar_size(type));
        if (v < 0) return std::nullopt;
        return static_cast<std::uint64_t>(v);
      }
      default: return std::nullopt;
    }
  }
  [[nodiscard]] std::optional<std::uint64_t> array_count(std::string_view key) const {
    const auto i = find(key);
    if (!i || file_index_.metadata[*i].type() != ValueType::Array) return std::nullopt;
    return file_index_.array(*i).count;
  }
  // The value rendered (text and JSON); with `lazy`, its type and count only (a streamed run
  // renders it as it writes it).
  [[nodiscard]] InfoValue value(std::size_t i, bool lazy = false) const {
    InfoValue v;
    v.type = value_type(file_index_, i);
    v.count = value_count(file_index_, i);
    if (lazy) return v;
    const InfoOutput text_output = [&v](std::string_view t) {
      v.text.append(t);
      return true;
    };
    const InfoOutput json_output = [&v](std::string_view t) {
      v.json.append(t);
      return true;
    };
    {
      Out text(text_output), json(json_output);
      ValueRender render(head(), limit(), &text, &json);
      if (!detail::walk_value(file_index_, i, render)) render.finish();
      v.elided = render.elided();
    }
    return v;
  }
  [[nodiscard]] std::size_t head() const { return options_.full ? SIZE_MAX : kInfoArrayHead; }
  [[nodiscard]] std::size_t limit() const { return options_.full ? SIZE_MAX : kInfoStringHead; }
  [[nodiscard]] std::optional<InfoValue> value(std::string_view key, bool lazy = false) const {
    const auto i = find(key);
    if (!i) return std::nullopt;
    return value(*i, lazy);
  }

 private:
  const FileIndex& file_index_;
  Profile profile_;
  const InfoOptions& options_;
  std::map<std::string, std::size_t> first_;  // a wanted key -> its first pair
};

// The token texts of `ids` in one walk over tokenizer.ggml.tokens (ids are few; the array may
// hold a million strings).
class TokenTexts {
 public:
  explicit TokenTexts(std::map<std::uint64_t, std::optional<std::string>>& wanted)
      : wanted_(wanted) {}
  bool scalar(ValueType, std::uint64_t, std::uint64_t) { return false; }
  bool begin_array(ValueType type, std::uint64_t, std::uint64_t) {
    return depth_++ == 0 && type == ValueType::String;
  }
  bool end_array() { return true; }
  bool string(std::string_view text, std::uint64_t, std::uint64_t) {
    const auto it = wanted_.find(index_++);
    if (it != wanted_.end()) it->second = std::string(text.substr(0, kInfoRawLimit));
    return index_ <= wanted_.rbegin()->first;  // past the largest id: done
  }

 private:
  std::map<std::uint64_t, std::optional<std::string>>& wanted_;
  std::uint64_t index_ = 0;
  int depth_ = 0;
};

constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kSpecialTokens = {{
    {"bos", "tokenizer.ggml.bos_token_id"},
    {"eos", "tokenizer.ggml.eos_token_id"},
    {"eot", "tokenizer.ggml.eot_token_id"},
    {"eom", "tokenizer.ggml.eom_token_id"},
    {"unk", "tokenizer.ggml.unknown_token_id"},
    {"sep", "tokenizer.ggml.seperator_token_id"},
    {"pad", "tokenizer.ggml.padding_token_id"},
    {"mask", "tokenizer.ggml.mask_token_id"},
    {"cls", "tokenizer.ggml.cls_token_id"},
    {"fim_pre", "tokenizer.ggml.fim_pre_token_id"},
    {"fim_suf", "tokenizer.ggml.fim_suf_token_id"},
    {"fim_mid", "tokenizer.ggml.fim_mid_token_id"},
    {"fim_pad", "tokenizer.ggml.fim_pad_token_id"},
    {"fim_rep", "tokenizer.ggml.fim_rep_token_id"},
    {"fim_sep", "tokenizer.ggml.fim_sep_token_id"},
}};

// label, key suffix after "<arch>."
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kHyperparameters = {{
    {"context length", "context_length"},
    {"embedding", "embedding_length"},
    {"layers", "block_count"},
    {"feed forward", "feed_forward_length"},
    {"heads", "attention.head_count"},
    {"kv heads", "attention.head_count_kv"},
    {"key length", "attention.key_length"},
    {"value length", "attention.value_length"},
    {"experts", "expert_count"},
    {"experts used", "expert_used_count"},
    {"rope base", "rope.freq_base"},
    {"rope dims", "rope.dimension_count"},
}};

std::string type_name(std::uint32_t id) {
  const TensorTypeInfo* t = tensor_type(id);
  return t != nullptr ? std::string(t->name) : fmt::format("type {}", id);
}

// What --full lists of tensor i.
InfoTensor tensor_record(const FileIndex& index, const detail::DataLayout& layout, std::size_t i) {
  InfoTensor t;
  t.name = std::string(index.name(i).substr(0, kInfoRawLimit));
  t.type = type_name(index.tensors[i].type);
  const auto dims = index.dims(i);
  t.shape.assign(dims.begin(),
                 dims.begin() + std::min<std::uint32_t>(index.tensors[i].n_dims, kMaxDims));
  if (const auto extent = layout.tensor(index, i)) {
    t.offset = extent->begin;
    t.bytes = extent->nbytes;
  }
  return t;
}

// A file being written while it is mapped: what a streamed run renders from the index itself.
struct Live {
  const FileIndex& index;
  const detail::DataLayout& layout;
  std::size_t head;   // kInfoArrayHead, or SIZE_MAX with --full
  std::size_t limit;  // kInfoStringHead, or SIZE_MAX with --full
  bool full;

  void text_value(Out& out, std::size_t i) const {
    ValueRender render(head, limit, &out, nullptr);
    if (!detail::walk_value(index, i, render)) render.finish();
  }
  // Writes the value; whether it was elided.
  [[nodiscard]] bool json_value(Out& out, std::size_t i) const {
    ValueRender render(head, limit, nullptr, &out);
    if (!detail::walk_value(index, i, render)) render.finish();
    return render.elided();
  }
  // Each tensor's record (--full), one at a time.
  template <typename Each>
  void tensors(Each&& each) const {
    if (!full) return;
    for (std::size_t i = 0; i < index.tensors.size(); ++i) each(tensor_record(index, layout, i));
  }
};

// What info shows of a file. `lazy` (a streamed run): the pairs, the tensor list and the
// hyperparameters' values are left out, to be rendered from the index as they are written, so
// that nothing in proportion to the pairs or the values is held.
void fill(Info& info, const detail::Validated& v, const Options& options,
          const InfoOptions& info_options, bool lazy = false) {
  const FileIndex& file_index = v.index;
  const detail::DataLayout& layout = v.layout;
  const Facts& facts = v.report.facts;
  info.file_size = facts.file_size;
  info.version = facts.version;
  info.endian = facts.endian;
  info.alignment = layout.alignment;
  info.kv_count = facts.kv_count;
  info.tensor_count = facts.tensor_count;
  info.data_offset = layout.data_start;

  if (file_index.header_complete)
    info.kind = std::string(detail::kind_name(detail::file_kind(file_index).kind));
  KeyFinder r(file_index, options.profile, info_options);
  {
    std::vector<std::string> keys = {
        "general.architecture",  "general.name",          "general.size_label",
        "general.basename",      "general.finetune",      "general.license",
        "general.file_type",     "tokenizer.ggml.model",  "tokenizer.ggml.pre",
        "tokenizer.ggml.tokens", "tokenizer.ggml.merges", "split.no",
        "split.count",           "split.tensors.count"};
    for (const auto& [role, key] : kSpecialTokens) keys.emplace_back(key);
    r.want(keys);
  }
  info.architecture = r.string("general.architecture");
  info.name = r.string("general.name");
  info.size_label = r.string("general.size_label");
  info.basename = r.string("general.basename");
  info.finetune = r.string("general.finetune");
  info.license = r.string("general.license");
  info.file_type = r.unsigned_value("general.file_type");
  if (info.file_type) {
    for (const FileTypeName& f : kFileTypes) {
      if (f.value == *info.file_type) info.file_type_name = std::string(f.name);
    }
  }
  if (const auto i = r.find("general.architecture");
      i && file_index.metadata[*i].type() == ValueType::String) {
    const std::string arch(file_index.string_value(*i));
    std::vector<std::string> keys;
    for (const auto& [label, suffix] : kHyperparameters)
      keys.push_back(arch + "." + std::string(suffix));
    r.want(keys);
    for (std::size_t k = 0; k < kHyperparameters.size(); ++k) {
      if (const auto index = r.find(keys[k])) {
        info.hyperparameters.push_back({std::string(kHyperparameters[k].first),
                                        std::string(kHyperparameters[k].second),
                                        r.value(*index, lazy), *index});
      }
    }
  }

  info.tokenizer_model = r.string("tokenizer.ggml.model");
  info.tokenizer_pre = r.string("tokenizer.ggml.pre");
  info.tokens = r.array_count("tokenizer.ggml.tokens");
  info.merges = r.array_count("tokenizer.ggml.merges");
  std::map<std::uint64_t, std::optional<std::string>> texts;
  for (const auto& [role, key] : kSpecialTokens) {
    if (const auto id = r.unsigned_value(key)) {
      info.special_tokens.push_back({std::string(role), *id, std::nullopt});
      if (info.tokens && *id < *info.tokens) texts.emplace(*id, std::nullopt);
    }
  }
  if (!texts.empty()) {
    TokenTexts walk(texts);
    (void)detail::walk_value(file_index, *r.find("tokenizer.ggml.tokens"), walk);
    for (InfoSpecialToken& t : info.special_tokens) {
      if (const auto it = texts.find(t.id); it != texts.end()) t.text = it->second;
    }
  }
  for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
    const std::string_view key = file_index.key(i);
    if (key != "tokenizer.chat_template" && key.rfind("tokenizer.chat_template.", 0) != 0) {
      continue;
    }
    InfoTemplate t;
    t.key = std::string(key.substr(0, kInfoRawLimit));
    if (file_index.metadata[i].type() == ValueType::String) {
      const std::string_view text = file_index.string_value(i);
      t.bytes = text.size();
      if (const auto* known = detail::find_identical(text)) {
        t.known = std::string(known->name);
      } else if (const auto near = detail::find_near(text)) {
        t.near = std::string(near->known->name);
      }
    }
    info.chat_templates.push_back(std::move(t));
  }

  info.tensors_read = file_index.tensors.size();
  std::map<std::uint32_t, InfoTypeRow> rows;
  std::uint64_t parameters = 0, bytes = 0;
  bool parameters_known = true, bytes_known = true;
  for (std::size_t i = 0; i < file_index.tensors.size(); ++i) {
    const std::uint32_t type = file_index.tensors[i].type;
    InfoTypeRow& row = rows[type];
    row.type = type_name(type);
    ++row.tensors;
    const auto extent = layout.tensor(file_index, i);
    if (extent) {
      parameters_known =
          parameters_known && detail::checked_add(parameters, extent->elements, parameters);
      bytes_known = bytes_known && detail::checked_add(bytes, extent->nbytes, bytes);
      (void)detail::checked_add(row.elements, extent->elements, row.elements);
      (void)detail::checked_add(row.bytes, extent->nbytes, row.bytes);
    } else {
      parameters_known = bytes_known = false;
    }
    if (info_options.full && !lazy) info.tensors.push_back(tensor_record(file_index, layout, i));
  }
  if (parameters_known && file_index.tensors_complete) info.parameters = parameters;
  if (bytes_known && file_index.tensors_complete) info.tensor_bytes = bytes;
  for (auto& [type, row] : rows) info.tensor_types.push_back(std::move(row));

  info.split_no = r.unsigned_value("split.no");
  info.split_count = r.unsigned_value("split.count");
  info.split_tensors = r.unsigned_value("split.tensors.count");
  if (info.split_count && *info.split_count > 1 && *info.split_count <= 65535) {
    if (const auto shard = detail::parse_shard_name(info.path);
        shard && shard->count == *info.split_count) {
      for (std::uint32_t k = 1; k <= shard->count; ++k) {
        info.shards.push_back(detail::shard_path(shard->prefix, k, shard->count));
      }
    }
  }

  if (!lazy) {
    for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
      info.metadata.push_back(
          {std::string(file_index.key(i).substr(0, kInfoRawLimit)), r.value(i)});
    }
  }
}

}  // namespace

Info info_file(const std::string& path, const Options& options, const InfoOptions& info_options) {
  Info info;
  info.path = path;
  detail::Validated validated;
  const std::string shown = path == "-" ? "<stdin>" : path;
  const auto error = detail::with_input(path, [&](const detail::Input& input) {
    detail::validate_input(input, nullptr, options, shown, validated);
    fill(info, validated, options, info_options);
  });
  if (!error.ok()) {
    Info unreadable;
    unreadable.path = path;
    unreadable.report = unreadable_report(shown, error.why());
    return unreadable;
  }
  info.report = std::move(validated.report);
  // The verdict is check's for the same path: a file is validated as the set it names or the
  // lone shard its split keys make it (validate_set), which is a second read of its metadata.
  // Standard input cannot be read twice, and has no name to place it in a set.
  if (options.model_checks && path != "-") {
    const std::vector<std::vector<std::string>> groups = group_inputs({path});
    if (!groups.empty()) {
      SetReports set = validate_set(groups[0], options);
      for (Report& report : set.reports) {
        if (report.path == path) info.report = std::move(report);
      }
    }
  }
  return info;
}

Info info_bytes(Bytes bytes, const Options& options, const InfoOptions& info_options,
                std::string path) {
  Info info;
  info.path = path;
  detail::Validated validated;
  detail::validate_input(detail::Input(bytes), nullptr, options, std::move(path), validated);
  fill(info, validated, options, info_options);
  info.report = std::move(validated.report);
  return info;
}

// ---------------------------------------------------------------------------------------------
// Text

namespace {

// 1,234,567. Built forwards: string::insert here trips g++ 12's -Wrestrict at -O3.
std::string with_thousands(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// 15.2M, 7.24B: the size people quote a model by.
std::string parameter_text(std::uint64_t n) {
  if (n < 1000) return std::to_string(n);
  static constexpr std::array<const char*, 5> kUnits = {"K", "M", "B", "T", "Q"};
  double value = static_cast<double>(n) / 1000.0;
  std::size_t unit = 0;
  while (value >= 999.95 && unit + 1 < kUnits.size()) {
    value /= 1000.0;
    ++unit;
  }
  return fmt::format("{:.{}f}{}", value, value < 10 ? 2 : value < 100 ? 1 : 0, kUnits[unit]);
}

std::string shown(std::string_view raw) {
  return display(raw, kInfoStringHead);
}

void line(Out& out, std::string_view label, std::string_view text) {
  out += fmt::format("  {:<15} {}\n", label, text);
}

// The kind line: what loads the file.
std::string kind_text(std::string_view kind) {
  if (kind == "vocabulary") return "vocabulary only (no tensors; loaded with vocab_only)";
  if (kind == "adapter") return "LoRA adapter (llama_adapter_lora_init, with its base model)";
  if (kind == "mmproj") return "multimodal projector (mtmd's clip loader)";
  if (kind == "imatrix") return "importance matrix (llama-imatrix, llama-quantize --imatrix)";
  return std::string(kind);
}

// A file's text, written to `out`; with `live`, the pairs, the tensor list and the
// hyperparameters' values rendered from the index as they are written.
void write_text(Out& out, const Info& info, const Live* live, bool color) {
  const std::string name = shown_name(info.path == "-" ? "<stdin>" : info.path);
  if (info.report.unreadable()) {
    out += render_text(info.report, TextStyle{color, false});
    return;
  }
  out += fmt::format("{}\n", name);
  if (info.version) {
    line(out, "container",
         fmt::format("GGUF v{}{}, {}{}, alignment {}", *info.version,
                     info.endian == Endian::Big ? " big-endian" : "", human_size(info.file_size),
                     info.file_size < 1024
                         ? std::string()
                         : fmt::format(" ({} bytes)", with_thousands(info.file_size)),
                     info.alignment));
  }
  // A model says so by its model line; the other kinds are named.
  if (!info.kind.empty() && info.kind != "model") line(out, "kind", kind_text(info.kind));
  if (info.architecture || info.name) {
    std::string model = info.architecture ? shown(*info.architecture) : "(no architecture)";
    if (info.name) model += fmt::format(" \"{}\"", shown(*info.name));
    std::vector<std::string> extra;
    if (info.size_label) extra.push_back("size label " + shown(*info.size_label));
    if (info.finetune) extra.push_back("finetune " + shown(*info.finetune));
    if (info.license) extra.push_back("license " + shown(*info.license));
    if (!extra.empty()) model += fmt::format(" ({})", fmt::join(extra, ", "));
    line(out, "model", model);
  }
  if (info.file_type) {
    line(out, "file type",
         info.file_type_name.empty()
             ? fmt::format("{} (not a type llama.cpp names)", *info.file_type)
             : fmt::format("{} ({})", info.file_type_name, *info.file_type));
  }
  if (info.parameters && info.tensors_read > 0) {
    line(
        out, "parameters",
        fmt::format("{} ({})", parameter_text(*info.parameters), with_thousands(*info.parameters)));
  }
  for (const InfoHyperparameter& h : info.hyperparameters) {
    if (live == nullptr) {
      line(out, h.label, h.value.text);
      continue;
    }
    out += fmt::format("  {:<15} ", h.label);
    live->text_value(out, h.index);
    out += '\n';
  }
  if (info.tokenizer_model || info.tokens) {
    std::string vocab =
        info.tokenizer_model ? shown(*info.tokenizer_model) : "(no tokenizer model)";
    if (info.tokenizer_pre) vocab += fmt::format(", pre {}", shown(*info.tokenizer_pre));
    if (info.tokens) vocab += fmt::format(", {} tokens", with_thousands(*info.tokens));
    if (info.merges) vocab += fmt::format(", {} merges", with_thousands(*info.merges));
    line(out, "vocabulary", vocab);
  }
  if (!info.special_tokens.empty()) {
    std::vector<std::string> parts;
    for (const InfoSpecialToken& t : info.special_tokens) {
      parts.push_back(t.text ? fmt::format("{} {} \"{}\"", t.role, t.id, shown(*t.text))
                             : fmt::format("{} {} (not in the vocabulary)", t.role, t.id));
    }
    line(out, "special tokens", fmt::format("{}", fmt::join(parts, ", ")));
  }
  for (const InfoTemplate& t : info.chat_templates) {
    std::string what = fmt::format("{}: {}", shown(t.key), human_size(t.bytes));
    if (!t.known.empty()) what += fmt::format(", identical to llama.cpp's {}", t.known);
    if (!t.near.empty()) what += fmt::format(", a modified {} (GGUF9016)", t.near);
    line(out, "chat template", what);
  }
  std::string tensors = fmt::format("{}", with_thousands(info.tensors_read));
  if (info.tensor_count && *info.tensor_count != info.tensors_read) {
    tensors += fmt::format(" of {} declared", with_thousands(*info.tensor_count));
  }
  if (info.tensor_bytes && info.tensors_read > 0) {
    tensors += fmt::format(", {}", human_size(*info.tensor_bytes));
  }
  if (info.data_offset && info.tensors_read > 0) {
    tensors += fmt::format(", data at 0x{:x}", *info.data_offset);
  }
  line(out, "tensors", tensors);
  if (!info.tensor_types.empty()) {
    out += fmt::format("    {:<10} {:>8} {:>16} {:>12} {:>7}\n", "type", "tensors", "elements",
                       "bytes", "share");
    for (const InfoTypeRow& row : info.tensor_types) {
      const double share =
          info.tensor_bytes && *info.tensor_bytes > 0
              ? 100.0 * static_cast<double>(row.bytes) / static_cast<double>(*info.tensor_bytes)
              : 0.0;
      out += fmt::format("    {:<10} {:>8} {:>16} {:>12} {:>6.1f}%\n", row.type, row.tensors,
                         with_thousands(row.elements), human_size(row.bytes), share);
    }
  }
  const auto tensor_line = [&out](const InfoTensor& t) {
    out += fmt::format(
        "    {} {} [{}]{}\n", shown(t.name), t.type, fmt::join(t.shape, ", "),
        t.offset ? fmt::format(" at 0x{:x}, {}", *t.offset, human_size(*t.bytes)) : std::string());
  };
  if (live != nullptr) {
    live->tensors(tensor_line);
  } else {
    for (const InfoTensor& t : info.tensors) tensor_line(t);
  }
  if (info.split_count || info.split_no) {
    std::string split =
        fmt::format("shard {} of {}", info.split_no ? std::to_string(*info.split_no + 1) : "?",
                    info.split_count ? std::to_string(*info.split_count) : "?");
    if (info.split_tensors) {
      split += fmt::format(", {} tensors in the set", with_thousands(*info.split_tensors));
    }
    line(out, "split set", split);
    for (const std::string& shard : info.shards) out += fmt::format("    {}\n", shown_name(shard));
  }
  if (live != nullptr) {
    const FileIndex& file_index = live->index;
    line(out, "metadata", fmt::format("{} pairs", with_thousands(file_index.metadata.size())));
    // The keys' width in a first pass, then each pair as it is written.
    std::size_t width = 0;
    for (std::size_t i = 0; i < file_index.metadata.size(); ++i) {
      width = std::max(width, std::min<std::size_t>(shown(file_index.key(i)).size(), 40));
    }
    for (std::size_t i = 0; i < file_index.metadata.size() && !out.failed(); ++i) {
      out += fmt::format("    {:<{}} {:<14} ", shown(file_index.key(i)), width,
                         value_type(file_index, i));
      live->text_value(out, i);
      out += '\n';
    }
  } else {
    line(out, "metadata", fmt::format("{} pairs", with_thousands(info.metadata.size())));
    std::vector<std::string> keys;
    std::size_t width = 0;
    for (const InfoPair& p : info.metadata) {
      keys.push_back(shown(p.key));
      width = std::max(width, std::min<std::size_t>(keys.back().size(), 40));
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const InfoValue& v = info.metadata[i].value;
      out += fmt::format("    {:<{}} {:<14} {}\n", keys[i], width, v.type, v.text);
    }
  }
  out += render_summary_line(info.report, TextStyle{color, false});
}

}  // namespace

std::string render_info_text(const Info& info, bool color) {
  std::string text;
  const InfoOutput output = [&text](std::string_view t) {
    text.append(t);
    return true;
  };
  {
    Out out(output);
    write_text(out, info, nullptr, color);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// JSON, written as it goes

namespace {

void value_json(JsonOut& json, const InfoValue& v, const Live* live, std::size_t index) {
  json.begin_object();
  json.key("type");
  json.string(v.type);
  json.key("value");
  bool elided = v.elided;
  if (live != nullptr) {
    elided = live->json_value(json.value(), index);
  } else {
    json.raw(v.json.empty() ? "null" : v.json);
  }
  if (v.type.rfind("array", 0) == 0 || v.type == "string") {
    json.key("count");
    json.number(v.count);
  }
  if (elided) {
    json.key("elided");
    json.boolean(true);
  }
  json.end_object();
}

void write_json_file(JsonOut& json, const Info& info, const Live* live) {
  json.begin_object();
  json.key("path");
  json.string(info.path);
  const Report& r = info.report;
  json.key("verdict");
  json.begin_object();
  json.key("status");
  json.string(r.unreadable() ? "unreadable" : r.passed() ? "pass" : "fail");
  json.key("exit_status");
  json.number(static_cast<std::uint64_t>(r.exit_status()));
  json.key("errors");
  json.number(r.errors);
  json.key("warnings");
  json.number(r.warnings);
  json.key("notes");
  json.number(r.notes);
  if (r.unreadable()) {
    json.key("reason");
    json.string(r.findings.empty() ? "" : r.findings.front().message);
    json.end_object();
    json.end_object();
    return;
  }
  json.end_object();
  json.key("container");
  json.begin_object();
  json.key("version");
  json.optional(info.version);
  json.key("endianness");
  json.string(info.endian == Endian::Big ? "big" : "little");
  json.key("file_size");
  json.number(info.file_size);
  json.key("alignment");
  json.number(info.alignment);
  json.key("kv_count");
  json.optional(info.kv_count);
  json.key("tensor_count");
  json.optional(info.tensor_count);
  json.key("data_offset");
  json.optional(info.data_offset);
  json.end_object();
  json.key("model");
  json.begin_object();
  json.key("kind");
  json.optional_string(info.kind.empty() ? std::nullopt : std::optional(info.kind));
  for (const auto& [key, value] :
       {std::pair{"architecture", &info.architecture}, std::pair{"name", &info.name},
        std::pair{"size_label", &info.size_label}, std::pair{"basename", &info.basename},
        std::pair{"finetune", &info.finetune}, std::pair{"license", &info.license}}) {
    json.key(key);
    json.optional_string(*value);
  }
  json.key("file_type");
  json.optional(info.file_type);
  json.key("file_type_name");
  json.optional_string(info.file_type_name.empty() ? std::nullopt
                                                   : std::optional(info.file_type_name));
  json.key("parameters");
  json.optional(info.parameters);
  json.key("hyperparameters");
  json.begin_object();
  for (const InfoHyperparameter& h : info.hyperparameters) {
    json.key(h.name);
    value_json(json, h.value, live, h.index);
  }
  json.end_object();
  json.end_object();
  json.key("vocabulary");
  json.begin_object();
  json.key("model");
  json.optional_string(info.tokenizer_model);
  json.key("pre");
  json.optional_string(info.tokenizer_pre);
  json.key("tokens");
  json.optional(info.tokens);
  json.key("merges");
  json.optional(info.merges);
  json.key("special_tokens");
  json.begin_array();
  for (const InfoSpecialToken& t : info.special_tokens) {
    json.begin_object();
    json.key("role");
    json.string(t.role);
    json.key("id");
    json.number(t.id);
    json.key("text");
    json.optional_string(t.text);
    json.end_object();
  }
  json.end_array();
  json.key("chat_templates");
  json.begin_array();
  for (const InfoTemplate& t : info.chat_templates) {
    json.begin_object();
    json.key("key");
    json.string(t.key);
    json.key("bytes");
    json.number(t.bytes);
    json.key("known");
    json.optional_string(t.known.empty() ? std::nullopt : std::optional(t.known));
    json.key("near");
    json.optional_string(t.near.empty() ? std::nullopt : std::optional(t.near));
    json.end_object();
  }
  json.end_array();
  json.end_object();
  json.key("tensors");
  json.begin_object();
  json.key("count");
  json.number(info.tensors_read);
  json.key("bytes");
  json.optional(info.tensor_bytes);
  json.key("by_type");
  json.begin_array();
  for (const InfoTypeRow& row : info.tensor_types) {
    json.begin_object();
    json.key("type");
    json.string(row.type);
    json.key("tensors");
    json.number(row.tensors);
    json.key("elements");
    json.number(row.elements);
    json.key("bytes");
    json.number(row.bytes);
    json.end_object();
  }
  json.end_array();
  const auto tensor = [&json](const InfoTensor& t) {
    json.begin_object();
    json.key("name");
    json.string(t.name);
    json.key("type");
    json.string(t.type);
    json.key("shape");
    json.begin_array();
    for (const std::uint64_t d : t.shape) json.number(d);
    json.end_array();
    json.key("offset");
    json.optional(t.offset);
    json.key("bytes");
    json.optional(t.bytes);
    json.end_object();
  };
  const bool listed =
      live != nullptr ? live->full && live->index.tensors.size() > 0 : !info.tensors.empty();
  if (listed) {
    json.key("list");
    json.begin_array();
    if (live != nullptr) {
      live->tensors(tensor);
    } else {
      for (const InfoTensor& t : info.tensors) tensor(t);
    }
    json.end_array();
  }
  json.end_object();
  json.key("split");
  if (info.split_count || info.split_no) {
    json.begin_object();
    json.key("no");
    json.optional(info.split_no);
    json.key("count");
    json.optional(info.split_count);
    json.key("tensors");
    json.optional(info.split_tensors);
    json.key("shards");
    json.begin_array();
    for (const std::string& shard : info.shards) json.string(shard);
    json.end_array();
    json.end_object();
  } else {
    json.null();
  }
  json.key("metadata");
  json.begin_array();
  const auto pair = [&](std::string_view key, const InfoValue& v, std::size_t index) {
    json.begin_object();
    json.key("key");
    json.string(key);
    json.key("type");
    json.string(v.type);
    json.key("value");
    bool elided = v.elided;
    if (live != nullptr) {
      elided = live->json_value(json.value(), index);
    } else {
      json.raw(v.json.empty() ? "null" : v.json);
    }
    if (v.type.rfind("array", 0) == 0 || v.type == "string") {
      json.key("count");
      json.number(v.count);
    }
    if (elided) {
      json.key("elided");
      json.boolean(true);
    }
    json.end_object();
  };
  if (live != nullptr) {
    const FileIndex& file_index = live->index;
    for (std::size_t i = 0; i < file_index.metadata.size() && !json.out().failed(); ++i) {
      InfoValue v;
      v.type = value_type(file_index, i);
      v.count = value_count(file_index, i);
      pair(file_index.key(i).substr(0, kInfoRawLimit), v, i);
    }
  } else {
    for (std::size_t i = 0; i < info.metadata.size(); ++i) {
      pair(info.metadata[i].key, info.metadata[i].value, i);
    }
  }
  json.end_array();
  json.end_object();
}

void begin_document(JsonOut& json) {
  json.begin_object();
  json.key("ggufcheck_info");
  json.number(1);
  json.key("ggufcheck_version");
  json.string(tool_version());
  json.key("files");
  json.begin_array();
}

void end_document(JsonOut& json) {
  json.end_array();
  json.end_object();
  json.out() += '\n';
}

}  // namespace

std::string render_info_json(const std::vector<Info>& infos) {
  std::string text;
  const InfoOutput output = [&text](std::string_view t) {
    text.append(t);
    return true;
  };
  {
    Out out(output);
    JsonOut json(out);
    begin_document(json);
    for (const Info& info : infos) write_json_file(json, info, nullptr);
    end_document(json);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Streamed

struct InfoWriter::Impl {
  explicit Impl(InfoOutput o) : output(std::move(o)), out(output), json(out) {}
  InfoOutput output;
  Out out;
  JsonOut json;
  bool is_json = false;
  bool color = false;
  std::size_t files = 0;
};

InfoWriter::InfoWriter(bool json, bool color, InfoOutput output)
    : impl_(std::make_unique<Impl>(std::move(output))) {
  impl_->is_json = json;
  impl_->color = color;
  if (json) begin_document(impl_->json);
}

InfoWriter::~InfoWriter() = default;

void InfoWriter::write(const Info& info) {
  if (impl_->is_json) {
    write_json_file(impl_->json, info, nullptr);
  } else {
    if (impl_->files > 0) impl_->out += '\n';
    write_text(impl_->out, info, nullptr, impl_->color);
  }
  ++impl_->files;
}

int InfoWriter::file(const std::string& path, const Options& options,
                     const InfoOptions& info_options) {
  const std::string shown = path == "-" ? "<stdin>" : path;
  // The verdict first (check's, as info_file says), so that the file's own read below is the
  // only index held while it is written.
  std::optional<Report> set_report;
  if (options.model_checks && path != "-") {
    const std::vector<std::vector<std::string>> groups = group_inputs({path});
    if (!groups.empty()) {
      SetReports set = validate_set(groups[0], options);
      for (Report& report : set.reports) {
        if (report.path == path) set_report = std::move(report);
      }
    }
  }
  int status = 0;
  const auto error = detail::with_input(path, [&](const detail::Input& input) {
    detail::Validated validated;
    detail::validate_input(input, nullptr, options, shown, validated);
    Info info;
    info.path = path;
    fill(info, validated, options, info_options, true);
    info.report = set_report ? std::move(*set_report) : std::move(validated.report);
    status = info.report.exit_status();
    const Live live{validated.index, validated.layout,
                    info_options.full ? SIZE_MAX : kInfoArrayHead,
                    info_options.full ? SIZE_MAX : kInfoStringHead, info_options.full};
    if (impl_->is_json) {
      write_json_file(impl_->json, info, &live);
    } else {
      if (impl_->files > 0) impl_->out += '\n';
      write_text(impl_->out, info, &live, impl_->color);
    }
    ++impl_->files;
    (void)impl_->out.flush();  // the mapping goes: nothing of it may wait in the buffer
  });
  if (!error.ok()) {
    Info unreadable;
    unreadable.path = path;
    unreadable.report = unreadable_report(shown, error.why());
    write(unreadable);
    return unreadable.report.exit_status();
  }
  return status;
}

bool InfoWriter::finish() {
  if (impl_->is_json) end_document(impl_->json);
  return impl_->out.flush();
}

}  // namespace ggufcheck

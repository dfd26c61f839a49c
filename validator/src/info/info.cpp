// `ggufcheck info` (ggufcheck/info.hpp): a summary of what the reader recorded, for people and
// for machines. Nothing here decides anything: the verdict is validation's, and every value is
// read back through the model as the checks read it, so a rejected file shows what was read.
#include "ggufcheck/info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "checks/checks.hpp"
#include "ggufcheck/render.hpp"
#include "model/keys.hpp"
#include "model/values.hpp"
#include "report/sink.hpp"
#include "splits/names.hpp"
#include "templates/known_templates.hpp"
#include "util/utf8.hpp"

namespace ggufcheck {

namespace {

using detail::Model;
using Json = nlohmann::ordered_json;

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

// Text for a terminal: valid UTF-8 stays readable (tokens and names in any script), while what
// could move the cursor, hide or reorder text (controls, bidi and zero-width characters, invalid
// bytes) is escaped, and long text is cut at `limit` bytes.
std::string display(std::string_view bytes, std::size_t limit) {
  std::string out;
  std::size_t i = 0;
  while (i < bytes.size()) {
    if (i >= limit) {
      out += fmt::format("...({} bytes)", bytes.size());
      break;
    }
    const auto byte = static_cast<unsigned char>(bytes[i]);
    std::size_t length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
    if (length > bytes.size() - i || !detail::is_valid_utf8(bytes.substr(i, length))) {
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
      ++i;
      continue;
    }
    std::uint32_t cp = byte & (0xFFu >> (length + 1));
    for (std::size_t k = 1; k < length; ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(bytes[i + k]) & 0x3Fu);
    }
    const bool hidden = (cp >= 0x80 && cp < 0xA0) || (cp >= 0x200B && cp <= 0x200F) ||
                        (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) ||
                        cp == 0xFEFF || cp == 0xAD || cp == 0x061C;
    if (hidden) {
      out += fmt::format("\\u{{{:04x}}}", cp);
    } else {
      out.append(bytes.substr(i, length));
    }
    i += length;
  }
  return out;
}

std::string json_string(std::string_view bytes) {
  // Invalid UTF-8 becomes U+FFFD: info is for reading; `ggufcheck dump` gives exact bytes.
  return Json(std::string(bytes)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

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

// Renders one value through the value walker: arrays keep their first `head` elements at every
// level (all with full), and the walk stops once the outermost array has shown its head, so an
// elided array of a million strings costs its head.
class ValueRender {
 public:
  ValueRender(std::size_t head, std::size_t string_limit)
      : head_(head), string_limit_(string_limit) {}

  bool scalar(ValueType type, std::uint64_t bits, std::uint64_t) {
    const Shown shown = element();
    if (shown != Shown::Yes) return shown == Shown::No;
    const Scalar s = scalar_of(type, bits);
    text_ += s.text;
    json_ += s.json;
    return true;
  }
  bool string(std::string_view text, std::uint64_t, std::uint64_t) {
    const Shown shown = element();
    if (shown != Shown::Yes) return shown == Shown::No;
    if (text.size() > string_limit_) elided_ = true;
    text_ += '"' + display(text, string_limit_) + '"';
    json_ += json_string(text.substr(0, std::min(text.size(), string_limit_)));
    return true;
  }
  bool begin_array(ValueType, std::uint64_t count, std::uint64_t) {
    const Shown shown = element();
    if (shown == Shown::Stop) return false;
    if (shown == Shown::Yes) {
      text_ += '[';
      json_ += '[';
    }
    levels_.push_back({count, 0, shown == Shown::Yes});
    return true;
  }
  bool end_array() {
    const Level level = levels_.back();
    levels_.pop_back();
    if (level.visible) {
      const std::uint64_t shown = std::min<std::uint64_t>(level.count, head_);
      if (level.count > shown) {
        elided_ = true;
        text_ += fmt::format("{}... {} more", shown > 0 ? ", " : "", level.count - shown);
      }
      text_ += ']';
      json_ += ']';
    }
    return true;
  }
  // After a walk that returned false: the outermost array stopped after its head; close it.
  void finish() {
    if (stopped_) (void)end_array();
  }

  [[nodiscard]] const std::string& text() const { return text_; }
  [[nodiscard]] const std::string& json() const { return json_; }
  [[nodiscard]] bool elided() const { return elided_; }

 private:
  enum class Shown : std::uint8_t { Yes, No, Stop };
  struct Level {
    std::uint64_t count;
    std::uint64_t started;
    bool visible;
  };
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
      text_ += ", ";
      json_ += ',';
    }
    return Shown::Yes;
  }

  std::size_t head_;
  std::size_t string_limit_;
  std::string text_;
  std::string json_;
  std::vector<Level> levels_;
  bool elided_ = false;
  bool stopped_ = false;
};

class Reader {
 public:
  Reader(const Model& model, Profile profile, const InfoOptions& options)
      : model_(model), options_(options) {
    for (std::size_t i = 0; i < model.metadata.size(); ++i) {
      first_.emplace(detail::key_identity(model.key(i), profile), i);
    }
  }

  [[nodiscard]] std::optional<std::size_t> find(std::string_view key) const {
    const auto it = first_.find(key);
    if (it == first_.end()) return std::nullopt;
    return it->second;
  }
  // The raw bytes (cut at kInfoRawLimit: a hostile name may be a gigabyte).
  [[nodiscard]] std::optional<std::string> string(std::string_view key) const {
    const auto i = find(key);
    if (!i || model_.metadata[*i].type() != ValueType::String) return std::nullopt;
    return std::string(model_.string_value(*i).substr(0, kInfoRawLimit));
  }
  // Any integer type holding a value >= 0.
  [[nodiscard]] std::optional<std::uint64_t> unsigned_value(std::string_view key) const {
    const auto i = find(key);
    if (!i) return std::nullopt;
    const ValueType type = model_.metadata[*i].type();
    const std::uint64_t bits = model_.metadata[*i].payload();
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
    if (!i || model_.metadata[*i].type() != ValueType::Array) return std::nullopt;
    return model_.array(*i).count;
  }
  [[nodiscard]] InfoValue value(std::size_t i) const {
    InfoValue v;
    const ValueType type = model_.metadata[i].type();
    v.type = type_text(type);
    if (type == ValueType::Array) {
      v.type = fmt::format("array[{}]", type_text(model_.array(i).elements()));
      v.count = model_.array(i).count;
    } else if (type == ValueType::String) {
      v.count = model_.metadata[i].payload();
    }
    const std::size_t head = options_.full ? SIZE_MAX : kInfoArrayHead;
    const std::size_t limit = options_.full ? SIZE_MAX : kInfoStringHead;
    ValueRender render(head, limit);
    if (!detail::walk_value(model_, i, render)) render.finish();
    v.text = render.text();
    v.json = render.json();
    v.elided = render.elided();
    return v;
  }
  [[nodiscard]] std::optional<InfoValue> value(std::string_view key) const {
    const auto i = find(key);
    if (!i) return std::nullopt;
    return value(*i);
  }

 private:
  const Model& model_;
  const InfoOptions& options_;
  std::unordered_map<std::string_view, std::size_t> first_;  // key -> its first pair
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

void fill(Info& info, const detail::Validated& v, const Options& options,
          const InfoOptions& info_options) {
  const Model& model = v.model;
  const detail::Layout& layout = v.layout;
  const Facts& facts = v.report.facts;
  info.file_size = facts.file_size;
  info.version = facts.version;
  info.endian = facts.endian;
  info.alignment = layout.alignment;
  info.kv_count = facts.kv_count;
  info.tensor_count = facts.tensor_count;
  info.data_offset = layout.data_start;

  const Reader r(model, options.profile, info_options);
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
      i && model.metadata[*i].type() == ValueType::String) {
    const std::string arch(model.string_value(*i));
    for (const auto& [label, suffix] : kHyperparameters) {
      if (auto value = r.value(arch + "." + std::string(suffix))) {
        info.hyperparameters.push_back(
            {std::string(label), std::string(suffix), std::move(*value)});
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
    (void)detail::walk_value(model, *r.find("tokenizer.ggml.tokens"), walk);
    for (InfoSpecialToken& t : info.special_tokens) {
      if (const auto it = texts.find(t.id); it != texts.end()) t.text = it->second;
    }
  }
  for (std::size_t i = 0; i < model.metadata.size(); ++i) {
    const std::string_view key = model.key(i);
    if (key != "tokenizer.chat_template" && key.rfind("tokenizer.chat_template.", 0) != 0) {
      continue;
    }
    InfoTemplate t;
    t.key = std::string(key.substr(0, kInfoRawLimit));
    if (model.metadata[i].type() == ValueType::String) {
      const std::string_view text = model.string_value(i);
      t.bytes = text.size();
      if (const auto* known = detail::find_identical(text)) {
        t.known = std::string(known->name);
      } else if (const auto near = detail::find_near(text)) {
        t.near = std::string(near->known->name);
      }
    }
    info.chat_templates.push_back(std::move(t));
  }

  info.tensors_read = model.tensors.size();
  std::map<std::uint32_t, InfoTypeRow> rows;
  std::uint64_t parameters = 0, bytes = 0;
  bool parameters_known = true, bytes_known = true;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const std::uint32_t type = model.tensors[i].type;
    InfoTypeRow& row = rows[type];
    row.type = type_name(type);
    ++row.tensors;
    const auto extent = layout.tensor(model, i);
    if (extent) {
      parameters_known =
          parameters_known && detail::checked_add(parameters, extent->elements, parameters);
      bytes_known = bytes_known && detail::checked_add(bytes, extent->nbytes, bytes);
      (void)detail::checked_add(row.elements, extent->elements, row.elements);
      (void)detail::checked_add(row.bytes, extent->nbytes, row.bytes);
    } else {
      parameters_known = bytes_known = false;
    }
    if (info_options.full) {
      InfoTensor t;
      t.name = std::string(model.name(i).substr(0, kInfoRawLimit));
      t.type = row.type;
      const auto dims = model.dims(i);
      t.shape.assign(dims.begin(),
                     dims.begin() + std::min<std::uint32_t>(model.tensors[i].n_dims, kMaxDims));
      if (extent) {
        t.offset = extent->begin;
        t.bytes = extent->nbytes;
      }
      info.tensors.push_back(std::move(t));
    }
  }
  if (parameters_known && model.tensors_complete) info.parameters = parameters;
  if (bytes_known && model.tensors_complete) info.tensor_bytes = bytes;
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

  for (std::size_t i = 0; i < model.metadata.size(); ++i) {
    info.metadata.push_back({std::string(model.key(i).substr(0, kInfoRawLimit)), r.value(i)});
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
  if (error) {
    Info unreadable;
    unreadable.path = path;
    unreadable.report = unreadable_report(shown, *error);
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

void line(std::string& out, std::string_view label, std::string_view text) {
  out += fmt::format("  {:<15} {}\n", label, text);
}

}  // namespace

std::string render_info_text(const Info& info, bool color) {
  std::string out;
  const std::string name = shown_name(info.path == "-" ? "<stdin>" : info.path);
  if (info.report.unreadable()) return render_text(info.report, TextStyle{color, false});
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
  for (const InfoHyperparameter& h : info.hyperparameters) line(out, h.label, h.value.text);
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
  for (const InfoTensor& t : info.tensors) {
    out += fmt::format(
        "    {} {} [{}]{}\n", shown(t.name), t.type, fmt::join(t.shape, ", "),
        t.offset ? fmt::format(" at 0x{:x}, {}", *t.offset, human_size(*t.bytes)) : std::string());
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
  out += render_summary_line(info.report, TextStyle{color, false});
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

Json value_json(const InfoValue& v) {
  Json out;
  out["type"] = v.type;
  out["value"] = Json::parse(v.json.empty() ? "null" : v.json);
  if (v.type.rfind("array", 0) == 0 || v.type == "string") out["count"] = v.count;
  if (v.elided) out["elided"] = true;
  return out;
}

template <typename T>
Json optional_json(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// Raw bytes as a JSON string (nlohmann's replace handler turns invalid UTF-8 into U+FFFD when
// the document is written).
Json string_json(const std::optional<std::string>& v) {
  return v ? Json(*v) : Json(nullptr);
}

}  // namespace

std::string render_info_json(const std::vector<Info>& infos) {
  Json files = Json::array();
  for (const Info& info : infos) {
    Json f;
    f["path"] = Json(info.path);
    const Report& r = info.report;
    f["verdict"] = {{"status", r.unreadable() ? "unreadable"
                               : r.passed()   ? "pass"
                                              : "fail"},
                    {"exit_status", r.exit_status()},
                    {"errors", r.errors},
                    {"warnings", r.warnings},
                    {"notes", r.notes}};
    if (r.unreadable()) {
      f["verdict"]["reason"] = r.findings.empty() ? "" : r.findings.front().message;
      files.push_back(std::move(f));
      continue;
    }
    f["container"] = {{"version", optional_json(info.version)},
                      {"endianness", info.endian == Endian::Big ? "big" : "little"},
                      {"file_size", info.file_size},
                      {"alignment", info.alignment},
                      {"kv_count", optional_json(info.kv_count)},
                      {"tensor_count", optional_json(info.tensor_count)},
                      {"data_offset", optional_json(info.data_offset)}};
    Json hp = Json::object();
    for (const InfoHyperparameter& h : info.hyperparameters) hp[h.name] = value_json(h.value);
    f["model"] = {
        {"architecture", string_json(info.architecture)},
        {"name", string_json(info.name)},
        {"size_label", string_json(info.size_label)},
        {"basename", string_json(info.basename)},
        {"finetune", string_json(info.finetune)},
        {"license", string_json(info.license)},
        {"file_type", optional_json(info.file_type)},
        {"file_type_name", info.file_type_name.empty() ? Json(nullptr) : Json(info.file_type_name)},
        {"parameters", optional_json(info.parameters)},
        {"hyperparameters", std::move(hp)}};
    Json special = Json::array();
    for (const InfoSpecialToken& t : info.special_tokens) {
      special.push_back({{"role", t.role}, {"id", t.id}, {"text", string_json(t.text)}});
    }
    Json templates = Json::array();
    for (const InfoTemplate& t : info.chat_templates) {
      templates.push_back({{"key", t.key},
                           {"bytes", t.bytes},
                           {"known", t.known.empty() ? Json(nullptr) : Json(t.known)},
                           {"near", t.near.empty() ? Json(nullptr) : Json(t.near)}});
    }
    f["vocabulary"] = {
        {"model", string_json(info.tokenizer_model)}, {"pre", string_json(info.tokenizer_pre)},
        {"tokens", optional_json(info.tokens)},       {"merges", optional_json(info.merges)},
        {"special_tokens", std::move(special)},       {"chat_templates", std::move(templates)}};
    Json types = Json::array();
    for (const InfoTypeRow& row : info.tensor_types) {
      types.push_back({{"type", row.type},
                       {"tensors", row.tensors},
                       {"elements", row.elements},
                       {"bytes", row.bytes}});
    }
    f["tensors"] = {{"count", info.tensors_read},
                    {"bytes", optional_json(info.tensor_bytes)},
                    {"by_type", std::move(types)}};
    if (!info.tensors.empty()) {
      Json list = Json::array();
      for (const InfoTensor& t : info.tensors) {
        list.push_back({{"name", t.name},
                        {"type", t.type},
                        {"shape", t.shape},
                        {"offset", optional_json(t.offset)},
                        {"bytes", optional_json(t.bytes)}});
      }
      f["tensors"]["list"] = std::move(list);
    }
    if (info.split_count || info.split_no) {
      f["split"] = {{"no", optional_json(info.split_no)},
                    {"count", optional_json(info.split_count)},
                    {"tensors", optional_json(info.split_tensors)},
                    {"shards", info.shards}};
    } else {
      f["split"] = nullptr;
    }
    Json metadata = Json::array();
    for (const InfoPair& p : info.metadata) {
      Json entry = {{"key", p.key}};
      entry.update(value_json(p.value));
      metadata.push_back(std::move(entry));
    }
    f["metadata"] = std::move(metadata);
    files.push_back(std::move(f));
  }
  Json doc;
  doc["ggufcheck_info"] = 1;
  doc["ggufcheck_version"] = std::string(tool_version());
  doc["files"] = std::move(files);
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace ggufcheck

// Portability: shapes llama.cpp reads as written but another widely used parser reads otherwise
// or refuses. Every rule here was checked against the parser's own code (the versions pinned by
// conformance/setup): @huggingface/gguf 0.4.6, node-llama-cpp 3.22.1, hyllama 0.2.2 and gguf-py
// of node-llama-cpp 3.22.1's llama.cpp.
#include "portability/portability.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "index/keys.hpp"
#include "index/values.hpp"

namespace ggufcheck::detail {
namespace {

constexpr std::string_view kHuggingFace = "@huggingface/gguf 0.4.6";

// @huggingface/gguf's limits (dist/index.js): a value beyond one throws, refusing the file.
constexpr std::uint64_t kHfMaxStringLength = 10'000'000;
constexpr std::uint64_t kHfMaxArrayLength = 1'000'000;
constexpr std::uint64_t kHfMaxKvCount = 100'000;
constexpr std::uint64_t kHfMaxTensorCount = 10'000'000;
constexpr std::uint32_t kHfMaxDims = 8;
constexpr std::uint64_t kHfMaxDim = std::uint64_t{1} << 32;
constexpr std::uint32_t kHfMaxArrayDepth = 4;  // an array value read at this depth throws
// How it reads the file, locally or over HTTP alike: chunks of 2,000,000 bytes into one buffer
// of at most 50,000,000; one more chunk before a key or tensor info with fewer than 500,000
// bytes left after it; up to 30 more while a value's fixed-size fields run past the buffer.
// A string's bytes are sliced without a bounds check, so a string past the buffer comes out cut.
constexpr std::uint64_t kHfChunk = 2'000'000;
constexpr std::uint64_t kHfLeeway = 500'000;
constexpr std::uint64_t kHfBufferLimit = 50'000'000;
constexpr std::uint32_t kHfFetchesPerValue = 30;

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool has_prototype_segment(std::string_view key) {
  constexpr std::string_view kProto = "__proto__";
  for (std::size_t at = key.find(kProto); at != std::string_view::npos;
       at = key.find(kProto, at + 1)) {
    const std::size_t end = at + kProto.size();
    if ((at == 0 || key[at - 1] == '.') && (end == key.size() || key[end] == '.')) return true;
  }
  return false;
}

// --- keys ----------------------------------------------------------------------------------

void check_key_names(const FileIndex& index, std::size_t i, Sink& sink) {
  const std::string_view key = index.key(i);
  const std::uint64_t offset = index.metadata[i].key_offset();
  const std::uint64_t length = index.size_width() + key.size();
  const Field path = kv_path(i, key) + " key";
  if (key == "version" || key == "tensor_count" || key == "kv_count") {
    sink.report(Code::HeaderFieldKey, offset, length, path,
                "@huggingface/gguf and hyllama return the header's fields and the keys in one "
                "object, so this value replaces the header's; rename the key",
                "key \"{}\" is also the name of a header field: @huggingface/gguf reads its value "
                "as the file's {}",
                key, key);
  }
  if (has_prototype_segment(key)) {
    sink.report(
        Code::PrototypeKey, offset, length, path,
        "JavaScript parsers store keys as object properties, and assigning __proto__ "
        "sets the object's prototype instead; rename the key",
        "key \"{}\" {}", escape(key),
        key == "__proto__"
            ? "names the JavaScript prototype: @huggingface/gguf, hyllama and node-llama-cpp "
              "lose the pair"
            : "has a segment __proto__: node-llama-cpp, which nests keys by their dots, "
              "loses the pair");
  }
  if (key == "GGUF.version" || key == "GGUF.tensor_count" || key == "GGUF.kv_count") {
    sink.report(Code::ReservedGgufKey, offset, length, path,
                "gguf-py's GGUFReader keeps the header's fields under these names and raises "
                "KeyError on a duplicate; rename the key",
                "key \"{}\" is the name gguf-py gives a header field: it refuses the file", key);
  }
  if (starts_with(key, kByteOrderMark)) {
    sink.report(Code::LeadingByteOrderMark, offset, length, path,
                "@huggingface/gguf decodes strings with TextDecoder, which drops a leading "
                "U+FEFF; remove it",
                "key \"{}\" starts with U+FEFF: @huggingface/gguf reads it without", escape(key));
  }
}

// 64-bit FNV-1a, extended byte by byte: the hash of every prefix of a key in one pass.
constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

struct KeyHash {
  std::uint64_t hash;
  std::uint64_t length;
  std::size_t index;
  bool operator<(const KeyHash& o) const {
    return hash != o.hash       ? hash < o.hash
           : length != o.length ? length < o.length
                                : index < o.index;
  }
};

std::uint64_t hash_of(std::string_view text) {
  std::uint64_t h = kFnvOffset;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * kFnvPrime;
  return h;
}

// Keys node-llama-cpp does not nest under (its noDirectSubNestingGGufMetadataKeys, consts.js):
// tokenizer.chat_template.rag is kept as tokenizer["chat_template.rag"], beside the template.
bool is_flat_parent(std::string_view prefix) {
  return prefix == "general.license" || prefix == "tokenizer.chat_template";
}

// A key that is the dotted prefix of another (`general` beside `general.architecture`). Every
// key's hash goes in a sorted table; each key's dotted prefixes are hashed in one pass over it
// and looked up (O(n log n) in the keys, linear in their bytes). A hit is compared byte for
// byte; each key is reported once, naming the first longer key found.
void check_prefix_conflicts(const FileIndex& file_index, Sink& sink) {
  const std::size_t n = file_index.metadata.size();
  std::vector<KeyHash> table;
  table.reserve(n);
  bool any_dot = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view key = file_index.key(i);
    any_dot = any_dot || key.find('.') != std::string_view::npos;
    table.push_back({hash_of(key), key.size(), i});
  }
  if (!any_dot) return;
  std::sort(table.begin(), table.end());
  std::vector<bool> reported(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view key = file_index.key(i);
    std::uint64_t h = kFnvOffset;
    for (std::size_t p = 0; p < key.size(); ++p) {
      if (key[p] == '.' && !is_flat_parent(key.substr(0, p))) {
        const KeyHash probe{h, p, 0};
        for (auto it = std::lower_bound(table.begin(), table.end(), probe);
             it != table.end() && it->hash == h && it->length == p; ++it) {
          if (reported[it->index] || file_index.key(it->index) != key.substr(0, p)) continue;
          reported[it->index] = true;
          const std::string_view prefix = file_index.key(it->index);
          sink.report(Code::KeyPrefixConflict, file_index.metadata[it->index].key_offset(),
                      file_index.size_width() + prefix.size(), kv_path(it->index, prefix) + " key",
                      "node-llama-cpp 3.22.1 nests keys by their dots ({general: {architecture}}) "
                      "and cannot nest under a key that holds a value; rename one of the keys",
                      "key \"{}\" is the dotted prefix of kv[{}] \"{}\": node-llama-cpp cannot "
                      "nest \"{}\" under it",
                      escape(prefix), i, escape(key), escape(key));
          break;  // one report per shorter key; the same prefix never matches twice
        }
      }
      h = (h ^ static_cast<unsigned char>(key[p])) * kFnvPrime;
    }
  }
}

// --- @huggingface/gguf's reading, simulated ---------------------------------------------------

// What it needs of one value: `need`, the end of the last fixed-size field it reads (a length,
// a count, a scalar), which must lie in its buffer or it fetches more; the value's end; the
// last string (when the value ends with one's bytes, the string it may cut); and the first
// limit the value breaks.
struct ValueNeeds {
  std::uint64_t need = 0;
  std::uint64_t end = 0;
  bool ends_in_string = false;
  std::uint64_t last_string_offset = 0;  // its length field
  std::uint64_t last_string_bytes = 0;   // where its bytes begin
  std::uint64_t last_string_length = 0;  // of the bytes
  std::uint64_t last_string_index = 0;   // element index in the innermost array
  std::uint32_t last_string_depth = 0;   // 0: the pair's own string value
  std::optional<std::uint64_t> limit_offset;
  std::uint64_t limit_length = 0;
  std::string limit_message;
};

class NeedsWalker {
 public:
  NeedsWalker(const FileIndex& index, ValueNeeds& out) : file_index_(index), out_(out) {}

  bool begin_array(ValueType, std::uint64_t count, std::uint64_t count_offset) {
    const std::uint64_t hf_depth = depth_;
    fixed(count_offset + file_index_.size_width());
    if (hf_depth >= kHfMaxArrayDepth) {
      return limit(count_offset - 4, 4 + file_index_.size_width(),
                   fmt::format("arrays nested {} deep inside the value", hf_depth + 1));
    }
    if (count > kHfMaxArrayLength) {
      return limit(count_offset, file_index_.size_width(),
                   fmt::format("an array of {} elements", count));
    }
    ++depth_;
    index_.push_back(0);
    return true;
  }
  bool end_array() {
    --depth_;
    index_.pop_back();
    if (!index_.empty()) ++index_.back();
    return true;
  }
  bool scalar(ValueType type, std::uint64_t, std::uint64_t offset) {
    fixed(offset + scalar_size(type));
    if (!index_.empty()) ++index_.back();
    return true;
  }
  bool string(std::string_view text, std::uint64_t offset, std::uint64_t length) {
    const std::uint64_t bytes = offset + file_index_.size_width();
    fixed(bytes);
    if (text.size() > kHfMaxStringLength) {
      return limit(offset, file_index_.size_width(),
                   fmt::format("a string of {} bytes", text.size()));
    }
    if (!text.empty()) {
      out_.ends_in_string = true;
      out_.last_string_offset = offset;
      out_.last_string_bytes = bytes;
      out_.last_string_length = text.size();
      out_.last_string_index = index_.empty() ? 0 : index_.back();
      out_.last_string_depth = depth_;
    }
    out_.end = offset + length;
    if (!index_.empty()) ++index_.back();
    return true;
  }

 private:
  const FileIndex& file_index_;
  ValueNeeds& out_;
  std::uint32_t depth_ = 0;
  std::vector<std::uint64_t> index_;

  void fixed(std::uint64_t end) {
    out_.need = end;
    out_.end = end;
    out_.ends_in_string = false;
  }
  bool limit(std::uint64_t offset, std::uint64_t length, std::string message) {
    out_.limit_offset = offset;
    out_.limit_length = length;
    out_.limit_message = std::move(message);
    return false;
  }
};

// A finding @huggingface/gguf's reading leads to, kept until the reading is known to succeed.
struct CutString {
  std::uint64_t offset;
  std::uint64_t length;
  Field path;
  std::uint64_t read;   // bytes it keeps
  std::uint64_t total;  // bytes there are
  std::uint64_t buffer_end;
};

class HuggingFaceReading {
 public:
  HuggingFaceReading(const FileIndex& index, Sink& sink)
      : index_(index), sink_(sink), had_errors_(sink.has_profile_errors()) {}

  void run() {
    // Only a file read whole: past the end it reads zeros, and impossible counts are reported
    // by the structural checks.
    if (!index_.tensors_complete) return;
    if (index_.tensor_count > kHfMaxTensorCount) {
      return refuse(
          8, index_.size_width(), "header.tensor_count",
          fmt::format("{} tensors (it reads at most {})", index_.tensor_count, kHfMaxTensorCount));
    }
    if (index_.kv_count > kHfMaxKvCount) {
      return refuse(
          8 + index_.size_width(), index_.size_width(), "header.kv_count",
          fmt::format("{} metadata pairs (it reads at most {})", index_.kv_count, kHfMaxKvCount));
    }
    for (std::size_t i = 0; i < index_.metadata.size(); ++i) {
      if (!read_pair(i)) return;
    }
    for (std::size_t i = 0; i < index_.tensors.size(); ++i) {
      if (!read_tensor_info(i)) return;
    }
    for (const CutString& cut : cut_) {
      sink_.report(Code::StringTruncatedByParsers, cut.offset, cut.length, cut.path,
                   "@huggingface/gguf reads the file in chunks of 2,000,000 bytes and cuts a "
                   "string at the end of the last chunk it fetched; a pair's string value under "
                   "about 500,000 bytes is always read whole: shorten this one",
                   "{} reads the first {} of the string's {} bytes (its buffer ends at byte {} "
                   "of the file)",
                   kHuggingFace, cut.read, cut.total, cut.buffer_end);
    }
    check_data_offset();
  }

 private:
  const FileIndex& index_;
  Sink& sink_;
  bool had_errors_;
  std::uint64_t chunks_ = 1;  // the first chunk is read with the header
  std::vector<CutString> cut_;

  [[nodiscard]] std::uint64_t buffer_end() const { return chunks_ * kHfChunk; }
  [[nodiscard]] std::uint32_t width() const { return index_.size_width(); }

  bool fetch(std::uint64_t at, const Field& path) {
    if ((chunks_ + 1) * kHfChunk > kHfBufferLimit) {
      refuse(at, 0, path,
             fmt::format("a header that runs past byte {} (its buffer holds at most {} bytes)",
                         kHfBufferLimit, kHfBufferLimit));
      return false;
    }
    ++chunks_;
    return true;
  }
  bool fetch_if_needed(std::uint64_t at, const Field& path) {
    if (buffer_end() >= at + kHfLeeway) return true;
    return fetch(at, path);
  }
  // A fixed-size field read outside the retry loop: past the buffer, a RangeError ends the read.
  bool in_buffer(std::uint64_t end, std::uint64_t at, const Field& path) {
    if (end <= buffer_end()) return true;
    refuse(at, 0, path,
           fmt::format("a field at byte {}, past the {} bytes it has fetched (after a string "
                       "longer than its buffer)",
                       at, buffer_end()));
    return false;
  }
  void refuse(std::uint64_t offset, std::uint64_t length, const Field& path, std::string what) {
    // A file that already has an error fails anyway, and most shapes past these limits are
    // errors of their own (a 1 GiB string, a 2^30-element array, a nested array, 5 dims).
    if (had_errors_) return;
    sink_.report(Code::BeyondParserLimits, offset, length, path,
                 "@huggingface/gguf (the Hugging Face Hub's GGUF reader) throws on this file; "
                 "keep within its limits where the file is meant for it",
                 "{} refuses the file: {}", kHuggingFace, what);
  }
  void note_cut(std::uint64_t string_offset, std::uint64_t bytes, std::uint64_t length,
                Field path) {
    if (bytes + length <= buffer_end()) return;
    const std::uint64_t kept = bytes >= buffer_end() ? 0 : buffer_end() - bytes;
    cut_.push_back({string_offset, bytes + length - string_offset, std::move(path), kept, length,
                    buffer_end()});
  }
  // A string read outside a value (a key, a tensor name); false when it refuses.
  bool read_name(std::uint64_t at, std::uint64_t length, const Field& path) {
    if (!in_buffer(at + width(), at, path)) return false;
    if (length > kHfMaxStringLength) {
      refuse(at, width(), path, fmt::format("a string of {} bytes", length));
      return false;
    }
    note_cut(at, at + width(), length, path);
    return true;
  }

  bool read_pair(std::size_t i) {
    const std::string_view key = index_.key(i);
    const std::uint64_t at = index_.metadata[i].key_offset();
    const Field path = kv_path(i, key);
    if (!fetch_if_needed(at, path + " key")) return false;
    if (!read_name(at, key.size(), path + " key")) return false;
    const std::uint64_t type_offset = index_.type_offset(i);
    if (!in_buffer(type_offset + 4, type_offset, path + " type")) return false;
    ValueNeeds needs = value_needs(i);
    if (needs.limit_offset) {
      refuse(*needs.limit_offset, needs.limit_length, path, needs.limit_message);
      return false;
    }
    for (std::uint32_t fetches = 0; buffer_end() < needs.need; ++fetches) {
      if (fetches == kHfFetchesPerValue) {
        refuse(index_.value_range(i).offset, 0, path,
               fmt::format("a value that needs more than {} more chunks", kHfFetchesPerValue));
        return false;
      }
      if (!fetch(index_.value_range(i).offset, path)) return false;
    }
    if (needs.ends_in_string) {
      Field where = path;
      if (needs.last_string_depth > 0) where = path + fmt::format("[{}]", needs.last_string_index);
      note_cut(needs.last_string_offset, needs.last_string_bytes, needs.last_string_length,
               std::move(where));
    }
    return true;
  }

  ValueNeeds value_needs(std::size_t i) const {
    const MetadataEntry& entry = index_.metadata[i];
    const ByteRange value = index_.value_range(i);
    ValueNeeds needs;
    needs.need = needs.end = value.end();
    if (entry.type() == ValueType::String) {
      const std::uint64_t length = entry.payload();
      needs.need = value.offset + width();
      if (length > kHfMaxStringLength) {
        needs.limit_offset = value.offset;
        needs.limit_length = width();
        needs.limit_message = fmt::format("a string of {} bytes", length);
      } else if (length != 0) {
        needs.ends_in_string = true;
        needs.last_string_offset = value.offset;
        needs.last_string_bytes = value.offset + width();
        needs.last_string_length = length;
      }
      return needs;
    }
    if (entry.type() != ValueType::Array) return needs;
    const ArrayRecord& array = index_.array(i);
    if (array.count > kHfMaxArrayLength) {
      needs.limit_offset = index_.count_offset(i);
      needs.limit_length = width();
      needs.limit_message = fmt::format("an array of {} elements", array.count);
      return needs;
    }
    const ValueType elements = array.elements();
    if (elements != ValueType::String && elements != ValueType::Array) return needs;
    // Its elements are walked only when they matter: the value runs past the buffer (which
    // string is last, and where its length is), may hold a string over the limit, or nests.
    const bool crosses = value.end() > buffer_end();
    const bool may_hold_long_string = value.length > kHfMaxStringLength;
    if (elements == ValueType::String && !crosses && !may_hold_long_string) return needs;
    NeedsWalker walker(index_, needs);
    (void)walk_value(index_, i, walker);
    return needs;
  }

  bool read_tensor_info(std::size_t i) {
    const std::uint64_t at = index_.tensors[i].name_offset;
    const std::string_view name = index_.name(i);
    const Field path = tensor_path(i, name);
    if (!fetch_if_needed(at, path + " name")) return false;
    if (!read_name(at, name.size(), path + " name")) return false;
    const std::uint64_t n_dims_offset = index_.n_dims_offset(i);
    if (!in_buffer(n_dims_offset + 4, n_dims_offset, path + " n_dims")) return false;
    const std::uint32_t n_dims = index_.tensors[i].n_dims;
    if (n_dims > kHfMaxDims) {
      refuse(n_dims_offset, 4, path + " n_dims",
             fmt::format("n_dims {} (it reads at most {})", n_dims, kHfMaxDims));
      return false;
    }
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const std::uint64_t dim_at = index_.dim_offset(i, d);
      if (!in_buffer(dim_at + width(), dim_at, path + " dims")) return false;
      const std::uint64_t dim = index_.dim(i, d).value_or(0);
      if (dim > kHfMaxDim) {
        refuse(dim_at, width(), path + fmt::format(" dims[{}]", d),
               fmt::format("a dimension of {} (it reads at most 2^32)", dim));
        return false;
      }
    }
    return in_buffer(index_.info_end(i), index_.type_offset_of_tensor(i), path);
  }

  // It pads the data offset with JavaScript's 32-bit `&`: (x + n - 1) & ~(n - 1).
  void check_data_offset() {
    if (index_.tensors.empty()) return;
    const auto alignment_pair = find_key(index_, "general.alignment", Profile::Strict);
    if (!alignment_pair || index_.metadata[*alignment_pair].type() != ValueType::Uint32) return;
    const std::uint64_t n = index_.metadata[*alignment_pair].payload();
    // 0 it refuses; other values that are not powers of two llama.cpp refuses (GGUF5003).
    if (n == 0 || (n & (n - 1)) != 0) return;
    const std::uint64_t x = index_.infos_end;
    const auto to_int32 = [](std::uint64_t v) {
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    };
    const std::int64_t computed = to_int32(x + n - 1) & ~to_int32(n - 1);
    const std::uint64_t padded = (x + n - 1) / n * n;
    if (computed >= 0 && static_cast<std::uint64_t>(computed) == padded) return;
    sink_.report(Code::AlignmentBeyondInt32, index_.value_range(*alignment_pair).offset, 4,
                 kv_path(*alignment_pair, "general.alignment"),
                 "@huggingface/gguf pads the data offset with 32-bit integer operations; use an "
                 "alignment below 2^31 (llama.cpp writes 32)",
                 "general.alignment is {}: {} computes the tensor data offset as {}, not {}", n,
                 kHuggingFace, computed, padded);
  }
};

// --- values and names -------------------------------------------------------------------------

void check_string_values(const FileIndex& index, Sink& sink) {
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    if (index.metadata[i].type() != ValueType::String) continue;
    const std::string_view text = index.string_value(i);
    if (!starts_with(text, kByteOrderMark)) continue;
    const ByteRange value = index.value_range(i);
    sink.report(Code::LeadingByteOrderMark, value.offset, value.length, kv_path(i, index.key(i)),
                "@huggingface/gguf decodes strings with TextDecoder, which drops a leading "
                "U+FEFF; remove it",
                "string value \"{}\" starts with U+FEFF: @huggingface/gguf reads it without",
                escape(text, 40));
  }
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const std::string_view name = index.name(i);
    if (!starts_with(name, kByteOrderMark)) continue;
    sink.report(Code::LeadingByteOrderMark, index.tensors[i].name_offset,
                index.size_width() + name.size(), tensor_path(i, name) + " name",
                "@huggingface/gguf decodes names with TextDecoder, which drops a leading U+FEFF, "
                "so this tensor can take another's name; remove it",
                "tensor name \"{}\" starts with U+FEFF: @huggingface/gguf reads \"{}\"",
                escape(name), escape(name.substr(kByteOrderMark.size())));
  }
}

void check_architecture(const FileIndex& index, Sink& sink) {
  const auto arch = find_key(index, "general.architecture", Profile::Strict);
  if (!arch || index.metadata[*arch].type() != ValueType::String) return;
  const std::string_view text = index.string_value(*arch);
  if (text.find('\0') == std::string_view::npos) return;
  const ByteRange value = index.value_range(*arch);
  sink.report(Code::NulInArchitecture, value.offset, value.length,
              kv_path(*arch, "general.architecture"),
              "llama.cpp reads strings as C strings; gguf-py and the JavaScript parsers keep "
              "every byte, so tools disagree on the model's architecture: remove the NUL",
              "general.architecture is \"{}\": llama.cpp reads \"{}\", gguf-py the whole string",
              escape(text), escape(c_string_prefix(text)));
}

}  // namespace

void check_portability(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink) {
  for (std::size_t i = 0; i < index.metadata.size(); ++i) check_key_names(index, i, sink);
  check_prefix_conflicts(index, sink);
  check_string_values(index, sink);
  check_architecture(index, sink);
  HuggingFaceReading(index, sink).run();
}

}  // namespace ggufcheck::detail

// Checks of metadata keys and values.
#include "index/keys.hpp"

#include "checks/checks.hpp"
#include "index/values.hpp"
#include "util/duplicates.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::detail {

namespace {

bool is_conventional_char(char c, bool allow_dash, bool allow_upper) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (allow_dash && c == '-') ||
         (allow_upper && c >= 'A' && c <= 'Z');
}

// Dotted lower_snake_case. Strict also accepts '-' (real architecture names such as
// "command-r") and any letter case in the name part of tokenizer.chat_template.<name>.
bool is_conventional_key(std::string_view key, Profile profile) {
  const bool strict = profile != Profile::Spec;
  constexpr std::string_view kTemplatePrefix = "tokenizer.chat_template.";
  std::size_t upper_from = key.size();
  if (strict && key.substr(0, kTemplatePrefix.size()) == kTemplatePrefix) {
    upper_from = kTemplatePrefix.size();
  }
  std::size_t segment_length = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.') {
      if (segment_length == 0) return false;
      segment_length = 0;
      continue;
    }
    if (!is_conventional_char(c, strict, i >= upper_from)) return false;
    ++segment_length;
  }
  return segment_length != 0;
}

void check_key(const FileIndex& file_index, std::size_t index, std::string_view key, Sink& sink) {
  const std::uint64_t key_offset = file_index.metadata[index].key_offset();
  const Field path = kv_path(index, key);
  const std::uint64_t width = file_index.size_width();
  if (key.empty()) {
    sink.report(Code::EmptyKey, key_offset, width, path + " key",
                "llama.cpp 2025-02 aborts on an empty key", "empty key");
    return;
  }
  const std::uint64_t key_bytes = key_offset + width;
  if (key.size() > kMaxKeyLength) {
    sink.report(Code::KeyTooLong, key_offset, width + key.size(), path + " key", "",
                "key is {} bytes long, more than {}", key.size(), kMaxKeyLength);
  }
  // ggml reads keys with the same string reader as values: over 1 GiB, the file fails to load.
  if (key.size() > kReferenceStringLimit) {
    sink.report(Code::StringTooLong, key_offset, width + key.size(), path + " key",
                "ggml rejects strings over 1 GiB, keys included",
                "key of {} bytes exceeds the reference limit of 1 GiB", key.size());
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    const auto byte = static_cast<unsigned char>(key[i]);
    if (byte >= 0x20 && byte < 0x7f) continue;
    std::string hint;
    if (byte == 0) {
      hint = fmt::format("ggml compares keys as C strings and reads this key as \"{}\"",
                         escape(c_string_prefix(key)));
    }
    sink.report(Code::InvalidKeyBytes, key_bytes + i, 1, path + " key", std::move(hint),
                "key byte {} is 0x{:02x}: keys must be printable ASCII", i, byte);
    return;
  }
  if (!is_conventional_key(key, sink.profile())) {
    sink.report(Code::UnconventionalKey, key_offset, width + key.size(), path + " key",
                "keys are '.'-separated lower_snake_case segments",
                "key \"{}\" is not dotted lower_snake_case", escape(key));
  }
}

// Findings of one kind inside one array are reported once, with the first element and a count.
struct Tally {
  std::uint64_t count = 0;
  std::uint64_t first_index = 0;
  std::uint64_t first_offset = 0;
  std::uint64_t first_length = 0;
  std::size_t first_position = 0;  // UTF-8 and NUL: index inside the string; too long: its size
  void add(std::uint64_t index, std::uint64_t offset, std::uint64_t length,
           std::size_t position = 0) {
    if (count++ == 0) {
      first_index = index;
      first_offset = offset;
      first_length = length;
      first_position = position;
    }
  }
};

struct StringTallies {
  Tally too_long, utf8, nul;
};

// The fast yes/no checks run on every string; positions are found only for the bad ones.
// check_utf8 is false when the caller has already validated a region holding the string.
void inspect_string(std::string_view text, std::uint64_t index, std::uint64_t offset,
                    std::uint64_t length, StringTallies& tallies, bool check_utf8 = true) {
  if (text.size() > kReferenceStringLimit) tallies.too_long.add(index, offset, length, text.size());
  if (check_utf8 && !is_valid_utf8(text)) {
    tallies.utf8.add(index, offset, length, find_invalid_utf8(text));
  }
  if (has_nul(text)) tallies.nul.add(index, offset, length, text.find('\0'));
}

class ValueChecker {
 public:
  ValueChecker(const FileIndex& index, Sink& sink) : file_index_(index), sink_(sink) {}

  void check(std::size_t index) {
    const MetadataEntry& entry = file_index_.metadata[index];
    // Numbers hold nothing to check: the common pair costs no look at its key or bytes.
    if (entry.type() != ValueType::Bool && entry.type() != ValueType::String &&
        entry.type() != ValueType::Array) {
      return;
    }
    path_ = kv_path(index, file_index_.key(index));
    const ByteRange value = file_index_.value_range(index);
    switch (entry.type()) {
      case ValueType::Bool:
        if (entry.payload() > 1) {
          sink_.report(Code::NonCanonicalBool, value.offset, 1, path_, bool_hint(),
                       "bool byte is 0x{:02x}, not 0 or 1", entry.payload());
        }
        return;
      case ValueType::String: {
        const std::string_view text = file_index_.string_value(index);
        StringTallies tallies;
        inspect_string(text, 0, value.offset, value.length, tallies, false);
        if (!is_valid_utf8_region(text)) {
          tallies.utf8.add(0, value.offset, value.length, find_invalid_utf8(text));
        }
        report_strings(tallies, false);
        return;
      }
      case ValueType::Array: {
        const ArrayRecord& array = file_index_.array(index);
        if (array.count > kReferenceArrayLimit) {
          long_arrays_.add(array.count, file_index_.count_offset(index), file_index_.size_width());
        }
        // What the reader learnt makes the walk needless for a clean vocabulary, and for arrays
        // of numbers (which hold nothing to check).
        const bool walk = array.elements() == ValueType::Bool ||
                          array.elements() == ValueType::Array ||
                          (array.elements() == ValueType::String && !array.strings_clean);
        if (walk) (void)walk_value(file_index_, index, *this);
        report_strings(strings_, true);
        if (bools_.count != 0) {
          sink_.report(Code::NonCanonicalBool, bools_.first_offset, 1,
                       path_ + fmt::format("[{}]", bools_.first_index), bool_hint(),
                       "{} bool byte(s) other than 0 or 1 in the array, the first at index {}",
                       bools_.count, bools_.first_index);
        }
        if (long_arrays_.count != 0) {
          sink_.report(Code::ArrayTooLong, long_arrays_.first_offset, file_index_.size_width(),
                       path_ + " count", "ggml rejects arrays of more than 2^30 elements",
                       "array of {} elements exceeds the reference limit of 2^30",
                       long_arrays_.first_index);
        }
        return;
      }
      default: return;
    }
  }

  // The walker's visitor (index/values.hpp): element indices are per innermost array.
  bool begin_array(ValueType, std::uint64_t count, std::uint64_t count_offset) {
    // The top-level array's count was tallied from its record.
    if (depth_++ > 0 && count > kReferenceArrayLimit) {
      long_arrays_.add(count, count_offset, file_index_.size_width());
    }
    index_.push_back(0);
    return true;
  }
  bool end_array() {
    --depth_;
    index_.pop_back();
    if (!index_.empty()) ++index_.back();
    return true;
  }
  bool scalar(ValueType type, std::uint64_t bits, std::uint64_t offset) {
    if (type == ValueType::Bool && bits > 1) bools_.add(index_.back(), offset, 1);
    ++index_.back();
    return true;
  }
  bool string(std::string_view text, std::uint64_t offset, std::uint64_t length) {
    inspect_string(text, index_.back(), offset, length, strings_);
    ++index_.back();
    return true;
  }

 private:
  const FileIndex& file_index_;
  Sink& sink_;
  Field path_{""};
  StringTallies strings_;
  Tally bools_;
  Tally long_arrays_;  // first_index holds the element count
  std::uint32_t depth_ = 0;
  std::vector<std::uint64_t> index_;  // the element index at each open array

  static std::string bool_hint() {
    return "ggml reads any non-zero byte as true, other readers differ; write 0 or 1";
  }

  void report_strings(const StringTallies& t, bool in_array) {
    const auto where = [&](const Tally& tally) {
      return in_array ? path_ + fmt::format("[{}]", tally.first_index) : path_;
    };
    const auto prefix = [&](const Tally& tally, std::string_view what) {
      return in_array
                 ? fmt::format("{} string(s) {} in the array, the first at index {}: ", tally.count,
                               what, tally.first_index)
                 : std::string();
    };
    if (t.too_long.count != 0) {
      sink_.report(Code::StringTooLong, t.too_long.first_offset, t.too_long.first_length,
                   where(t.too_long), "ggml rejects strings over 1 GiB",
                   "{}string of {} bytes exceeds the reference limit of 1 GiB",
                   prefix(t.too_long, "over 1 GiB"), t.too_long.first_position);
    }
    if (t.utf8.count != 0) {
      sink_.report(Code::InvalidUtf8, t.utf8.first_offset, t.utf8.first_length, where(t.utf8),
                   "GGUF strings are UTF-8; readers disagree on invalid bytes",
                   "{}invalid UTF-8 at byte {} of the string", prefix(t.utf8, "not UTF-8"),
                   t.utf8.first_position);
    }
    if (t.nul.count != 0) {
      sink_.report(Code::NulInString, t.nul.first_offset, t.nul.first_length, where(t.nul),
                   "C readers see the string end at the NUL", "{}NUL byte at byte {} of the string",
                   prefix(t.nul, "with a NUL"), t.nul.first_position);
    }
  }
};

}  // namespace

void check_keys(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink) {
  // Keys are fetched by index (the finder keeps indices, not views, to stay small).
  const auto key_of = [&index](std::size_t i) { return index.key(i); };
  DuplicateFinder seen(index.metadata.size());
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    if (i + kAhead < index.metadata.size()) seen.prefetch(key_of(i + kAhead));
    const std::string_view key = index.key(i);
    check_key(index, i, key, sink);
    // Byte for byte in every profile: ggml too rejects only keys equal as std::string (it looks
    // them up as C strings, which key_identity models for the lookups).
    if (const auto earlier = seen.insert(key, i, key_of)) {
      sink.report(Code::DuplicateKey, index.metadata[i].key_offset(),
                  index.size_width() + key.size(), kv_path(i, key) + " key",
                  "readers disagree on which value wins; write each key once",
                  "key \"{}\" already appears as kv[{}] at 0x{:x}", escape(key), *earlier,
                  index.metadata[*earlier].key_offset());
    }
  }
}

void check_values(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink) {
  for (std::size_t i = 0; i < index.metadata.size(); ++i) ValueChecker(index, sink).check(i);
}

}  // namespace ggufcheck::detail

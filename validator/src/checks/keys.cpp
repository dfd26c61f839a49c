// Checks of metadata keys and values.
#include "checks/checks.hpp"
#include "read/cursor.hpp"
#include "util/duplicates.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::detail {

std::string_view c_string_prefix(std::string_view bytes) {
  return bytes.substr(0, bytes.find('\0'));
}

std::string_view key_identity(std::string_view key, Profile profile) {
  return profile == Profile::LlamaCpp ? c_string_prefix(key) : key;
}

const MetadataEntry* find_key(const Model& model, std::string_view key, Profile profile) {
  for (const auto& entry : model.metadata) {
    if (key_identity(entry.key, profile) == key) return &entry;
  }
  return nullptr;
}

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

void check_key(const Model& model, std::size_t index, Sink& sink) {
  const MetadataEntry& entry = model.metadata[index];
  const Field path = kv_path(index, entry.key);
  const std::uint64_t width = model.narrow() ? 4 : 8;
  if (entry.key.empty()) {
    sink.report(Code::EmptyKey, entry.key_offset, width, path + " key",
                "llama.cpp 2025-02 aborts on an empty key", "empty key");
    return;
  }
  const std::uint64_t key_bytes = entry.key_offset + width;
  if (entry.key.size() > kMaxKeyLength) {
    sink.report(Code::KeyTooLong, entry.key_offset, width + entry.key.size(), path + " key", "",
                "key is {} bytes long, more than {}", entry.key.size(), kMaxKeyLength);
  }
  // ggml reads keys with the same string reader as values: over 1 GiB, the file fails to load.
  if (entry.key.size() > kReferenceStringLimit) {
    sink.report(Code::StringTooLong, entry.key_offset, width + entry.key.size(), path + " key",
                "ggml rejects strings over 1 GiB, keys included",
                "key of {} bytes exceeds the reference limit of 1 GiB", entry.key.size());
  }
  for (std::size_t i = 0; i < entry.key.size(); ++i) {
    const auto byte = static_cast<unsigned char>(entry.key[i]);
    if (byte >= 0x20 && byte < 0x7f) continue;
    std::string hint;
    if (byte == 0) {
      hint = fmt::format("ggml compares keys as C strings and reads this key as \"{}\"",
                         escape(c_string_prefix(entry.key)));
    }
    sink.report(Code::InvalidKeyBytes, key_bytes + i, 1, path + " key", std::move(hint),
                "key byte {} is 0x{:02x}: keys must be printable ASCII", i, byte);
    return;
  }
  if (!is_conventional_key(entry.key, sink.profile())) {
    sink.report(Code::UnconventionalKey, entry.key_offset, width + entry.key.size(), path + " key",
                "keys are '.'-separated lower_snake_case segments",
                "key \"{}\" is not dotted lower_snake_case", escape(entry.key));
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

// An array of strings whose length fields are all ASCII bytes (lengths below 128, byte by byte)
// is valid UTF-8 as one region exactly when every string is: a sequence cut short at the end
// of a string runs into a length byte, which is ASCII, and fails there.
bool all_ascii_bytes(std::uint64_t v) {
  return (v & 0x8080808080808080ULL) == 0;
}

class ValueChecker {
 public:
  ValueChecker(const Model& model, Sink& sink) : model_(model), sink_(sink) {}

  void check(std::size_t index) {
    const MetadataEntry& entry = model_.metadata[index];
    path_ = kv_path(index, entry.key);
    const std::uint64_t width = model_.narrow() ? 4 : 8;
    switch (entry.type) {
      case ValueType::Bool:
        if (entry.scalar > 1) {
          sink_.report(Code::NonCanonicalBool, entry.value.offset, 1, path_, bool_hint(),
                       "bool byte is 0x{:02x}, not 0 or 1", entry.scalar);
        }
        return;
      case ValueType::String: {
        StringTallies tallies;
        inspect_string(entry.string, 0, entry.value.offset, entry.value.length, tallies, false);
        if (!is_valid_utf8_region(entry.string)) {
          tallies.utf8.add(0, entry.value.offset, entry.value.length,
                           find_invalid_utf8(entry.string));
        }
        report_strings(tallies, false);
        return;
      }
      case ValueType::Array: {
        Cursor cursor(model_.bytes, model_.endian, entry.array.elements.offset);
        walk_array(cursor, entry.array.element_type, entry.array.count, entry.array.count_offset,
                   width, &entry.array);
        report_strings(strings_, true);
        if (bools_.count != 0) {
          sink_.report(Code::NonCanonicalBool, bools_.first_offset, 1,
                       path_ + fmt::format("[{}]", bools_.first_index), bool_hint(),
                       "{} bool byte(s) other than 0 or 1 in the array, the first at index {}",
                       bools_.count, bools_.first_index);
        }
        if (long_arrays_.count != 0) {
          sink_.report(Code::ArrayTooLong, long_arrays_.first_offset, width, path_ + " count",
                       "ggml rejects arrays of more than 2^30 elements",
                       "array of {} elements exceeds the reference limit of 2^30",
                       long_arrays_.first_index);
        }
        return;
      }
      default: return;
    }
  }

 private:
  const Model& model_;
  Sink& sink_;
  Field path_{""};
  StringTallies strings_;
  Tally bools_;
  Tally long_arrays_;  // first_index holds the element count

  static std::string bool_hint() {
    return "ggml reads any non-zero byte as true, other readers differ; write 0 or 1";
  }

  // The reader already walked this array, so every read below succeeds. `top` is the reader's
  // record of a top-level array (nested arrays have none).
  void walk_array(Cursor& cursor, ValueType type, std::uint64_t count, std::uint64_t count_offset,
                  std::uint64_t width, const ArrayView* top = nullptr) {
    if (count > kReferenceArrayLimit) long_arrays_.add(count, count_offset, width);
    const bool narrow = model_.narrow();
    if (type == ValueType::Bool) {
      for (std::uint64_t i = 0; i < count; ++i) {
        std::uint8_t byte = 0;
        const std::uint64_t at = cursor.pos();
        (void)cursor.read(byte);
        if (byte > 1) bools_.add(i, at, 1);
      }
    } else if (type == ValueType::String) {
      if (top != nullptr) {
        walk_strings(cursor, count, top->lengths, top->elements.length);
      } else {
        inspect_each_string(cursor, count);
      }
    } else if (type == ValueType::Array) {
      for (std::uint64_t i = 0; i < count; ++i) {
        std::uint32_t inner_type = 0;
        std::uint64_t inner_count = 0;
        (void)cursor.read(inner_type);
        const std::uint64_t inner_count_offset = cursor.pos();
        (void)cursor.read_size(inner_count, narrow);
        walk_array(cursor, static_cast<ValueType>(inner_type), inner_count, inner_count_offset,
                   width);
      }
    } else {
      (void)cursor.skip(count * scalar_size(type));
    }
  }

  // Vocabularies are arrays of hundreds of thousands of short strings. Checking them one by one
  // costs a few unpredictable branches per string, so the common case is checked as one region:
  // a branch-free walk sums what the length fields contribute, one pass over the region checks
  // UTF-8 and counts NUL bytes. Only an array with a problem is walked string by string.
  void walk_strings(Cursor& cursor, std::uint64_t count, const StringLengths& lengths,
                    std::uint64_t region_length) {
    const Cursor first = cursor;
    (void)cursor.skip(region_length);  // the reader walked it: the region is in the file
    if (lengths.longest <= kReferenceStringLimit && all_ascii_bytes(lengths.any_bits) &&
        lengths.region_valid_utf8 && lengths.region_zero_bytes == lengths.zero_bytes) {
      return;
    }
    Cursor again = first;
    inspect_each_string(again, count);
  }

  void inspect_each_string(Cursor& cursor, std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t at = cursor.pos();
      std::uint64_t length = 0;
      std::string_view text;
      (void)cursor.read_size(length, model_.narrow());
      (void)cursor.read_bytes(length, text);
      inspect_string(text, i, at, cursor.pos() - at, strings_);
    }
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

void check_keys(const Model& model, Sink& sink) {
  DuplicateFinder seen(model.metadata.size());
  for (std::size_t i = 0; i < model.metadata.size(); ++i) {
    check_key(model, i, sink);
    const MetadataEntry& entry = model.metadata[i];
    // Byte for byte in every profile: ggml too rejects only keys equal as std::string (it looks
    // them up as C strings, which key_identity models for the lookups).
    if (const auto earlier = seen.insert(entry.key, i)) {
      const MetadataEntry& first = model.metadata[*earlier];
      sink.report(Code::DuplicateKey, entry.key_offset, (model.narrow() ? 4 : 8) + entry.key.size(),
                  kv_path(i, entry.key) + " key",
                  "readers disagree on which value wins; write each key once",
                  "key \"{}\" already appears as kv[{}] at 0x{:x}", escape(entry.key), *earlier,
                  first.key_offset);
    }
  }
}

void check_values(const Model& model, Sink& sink) {
  for (std::size_t i = 0; i < model.metadata.size(); ++i) ValueChecker(model, sink).check(i);
}

}  // namespace ggufcheck::detail

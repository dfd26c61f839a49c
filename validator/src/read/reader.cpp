#include "read/reader.hpp"

#include <algorithm>
#include <bit>

#include "input/cursor.hpp"
#include "read/file_kind.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::detail {
namespace {

constexpr std::string_view kMagic = "GGUF";

// Array records keep the key's length in 48 bits: a longer key (256 TiB) is refused.
constexpr std::uint64_t kMaxRecordedKeyLength = (std::uint64_t{1} << 48) - 1;

// An array's header as read: its element type, its count and where the count is.
struct ArrayHeader {
  ValueType element_type = ValueType::Uint8;
  std::uint64_t count = 0;
  std::uint64_t count_offset = 0;
};

// What the reader learns about a string array while it walks it, so the checks need not walk
// a vocabulary of megabytes a second time: the length fields, and a scan of the element bytes
// (length fields included) made chunk by chunk while they are still in cache.
struct StringLengths {
  std::uint64_t any_bits = 0;  // OR of every length
  std::uint64_t longest = 0;
  std::uint64_t zero_bytes = 0;   // 0x00 bytes inside the length fields
  bool region_valid_utf8 = true;  // the element bytes, as one text
  std::uint64_t region_zero_bytes = 0;
  // Every string is valid UTF-8, NUL-free and within ggml's limit. An array whose length fields
  // are all ASCII bytes (each byte below 0x80) is valid UTF-8 as one region exactly when every
  // string is: a sequence cut short at the end of a string runs into a length byte, which is
  // ASCII, and fails there. The only zero bytes of the region are then those of the lengths.
  [[nodiscard]] bool clean() const {
    return longest <= kReferenceStringLimit && (any_bits & 0x8080808080808080ULL) == 0 &&
           region_valid_utf8 && region_zero_bytes == zero_bytes;
  }
};

class Reader {
 public:
  Reader(FileIndex& index, Sink& sink, StringArrayObserver* observer)
      : file_index_(index), sink_(sink), limits_(sink.options().limits), observer_(observer) {}

  void run() {
    if (!read_header()) return;
    file_index_.metadata_end = cursor_.pos();
    if (!read_metadata()) return;
    file_index_.metadata_complete = true;
    file_index_.infos_end = cursor_.pos();
    if (!read_tensor_infos()) return;
    file_index_.tensors_complete = true;
  }

 private:
  FileIndex& file_index_;
  Sink& sink_;
  const Limits& limits_;
  StringArrayObserver* observer_;
  Cursor cursor_{Bytes{}, Endian::Little};
  bool tensor_count_ok_ = true;
  bool narrow_ = false;

  // Set once the version is known: the walk of a vocabulary asks for the width per string.
  [[nodiscard]] bool narrow() const { return narrow_; }
  [[nodiscard]] std::uint64_t size_width() const { return ggufcheck::size_width(narrow_); }
  [[nodiscard]] std::uint64_t header_extra() const {
    return file_index_.dialect.header_alignment_field ? 8 : 0;
  }
  [[nodiscard]] bool nul_strings() const { return file_index_.dialect.nul_terminated_strings; }

  // Under the NUL-terminated-strings hypothesis (writer diagnosis), the NUL after a string's
  // bytes; a missing one fails the hypothesis.
  bool skip_terminator(const Field& path) {
    if (!nul_strings()) return true;
    std::uint8_t nul = 1;
    if (cursor_.read(nul) && nul == 0) return true;
    sink_.report(Code::TruncatedString, cursor_.pos(), 1, path, "", "no NUL after the string");
    return false;
  }
  [[nodiscard]] std::uint64_t to_end(std::uint64_t offset) const {
    return file_index_.size() - offset;
  }
  // The file's bytes after the cursor: the input's, and on a prefix the tail's too. Whether a
  // count or a length is possible is decided by the file, not by the bytes read so far.
  [[nodiscard]] std::uint64_t file_left() const { return to_end(cursor_.pos()); }
  // On a prefix (the file goes on past the input, file_index.hpp's Shortfall): records that the
  // input must be `needed` bytes long for the reader to go on, and returns true: the caller stops
  // without a finding, since the bytes are the file's, just not read yet. False on a whole input.
  bool short_of(std::uint64_t needed) {
    const std::uint64_t have = file_index_.input.size();
    if (have >= file_index_.size()) return false;
    file_index_.shortfall.needed = std::max(needed, have + 1);
    return true;
  }

  bool read_header() {
    const Input& input = file_index_.input;
    const std::uint64_t size = input.size();
    // The magic is checked on the bytes there are: a file shorter than 4 bytes whose bytes
    // already differ from "GGUF" is bad-magic (a 2-byte "{}" is an API's answer, not a cut
    // GGUF file); the empty file and the prefixes of "GGUF" are truncated. The message says
    // what the file is when its first bytes tell (file_kind.cpp), the hint what to do.
    const std::string_view magic = input.prefix(4);
    if (magic != kMagic.substr(0, magic.size())) {
      const Identification kind =
          sink_.enabled(Code::BadMagic) ? identify_file(input) : Identification{};
      sink_.report(Code::BadMagic, 0, magic.size(), "header.magic", kind.hint,
                   "magic is \"{}\"{}, expected \"GGUF\"{}{}", escape(magic),
                   size < 4 ? fmt::format(" (a {}-byte file)", size) : "",
                   kind.what.empty() ? "" : ": ", kind.what);
      return false;
    }
    if (size < 8) {
      if (short_of(8)) return false;
      sink_.report(Code::TruncatedHeader, 0, size, "header", "",
                   "file is {} bytes long; a GGUF header needs at least 24", size);
      return false;
    }
    if (file_index_.size() >= kOffsetLimit) {  // offsets are kept in 60 bits (file_index.hpp)
      sink_.report(Code::LimitExceeded, 0, 4, "header", "",
                   "the input is {} bytes long, more than 2^60", file_index_.size());
      return false;
    }
    Cursor probe = input.cursor(4, Endian::Little);
    std::uint32_t version = 0;
    (void)probe.read(version);
    // No flag marks a big-endian file: like gguf-py, detect a version whose low half is zero.
    if (version != 0 && (version & 0xFFFFu) == 0) {
      file_index_.endian = Endian::Big;
      version = Cursor::byteswap(version);
      sink_.report(Code::ByteSwappedFile, 4, 4, "header.version",
                   "the C reader refuses big-endian files; write little-endian unless the "
                   "target is a big-endian host",
                   "version reads 0x{:08x} byte-swapped: this is a big-endian file (version {})",
                   Cursor::byteswap(version), version);
    }
    file_index_.version = version;
    narrow_ = file_index_.narrow();
    if (version == 0 || version > 3) {
      sink_.report(Code::UnsupportedVersion, 4, 4, "header.version",
                   "current GGUF files are version 3", "unsupported version {}", version);
      return false;
    }
    if (version == 1) {
      sink_.report(Code::ObsoleteVersion, 4, 4, "header.version",
                   "version 1 used 32-bit counts and lengths; re-convert the model with a "
                   "current converter",
                   "version 1 is obsolete: no current reader loads it");
    } else if (version == 2) {
      sink_.report(Code::OldVersion, 4, 4, "header.version",
                   "v2 and v3 are byte-identical; a writer can simply write 3",
                   "version 2 is valid but the spec asks for version 3");
    }
    const std::uint64_t header_size = ggufcheck::header_size(narrow()) + header_extra();
    if (size < header_size) {
      if (short_of(header_size)) return false;
      sink_.report(Code::TruncatedHeader, 0, size, "header", "",
                   "file is {} bytes long; a version {} header needs {}", size, version,
                   header_size);
      return false;
    }
    cursor_ = input.cursor(8, file_index_.endian);
    (void)cursor_.read_size(file_index_.tensor_count, narrow());
    (void)cursor_.read_size(file_index_.kv_count, narrow());
    if (file_index_.dialect.header_alignment_field) {
      std::uint32_t padding = 0;
      (void)cursor_.read(file_index_.header_alignment);
      (void)cursor_.read(padding);
      if (file_index_.header_alignment == 0 || !std::has_single_bit(file_index_.header_alignment) ||
          padding != 0) {
        // Only ever read under writer diagnosis, whose findings are not shown: the hypothesis
        // fails here.
        sink_.report(Code::TruncatedHeader, 8 + 2 * size_width(), 8, "header.alignment", "",
                     "no alignment field in the header: {} then {}", file_index_.header_alignment,
                     padding);
        return false;
      }
    }
    file_index_.header_complete = true;

    const std::uint64_t remaining = file_left();
    const std::uint64_t min_pair = min_pair_size(narrow());
    const std::uint64_t min_tensor = min_tensor_info_size(narrow());
    // An impossible tensor count does not move the metadata: it is still read and checked.
    tensor_count_ok_ = check_count(file_index_.tensor_count, 8, "header.tensor_count",
                                   "tensor infos", min_tensor, remaining, limits_.max_tensor_count);
    return check_count(file_index_.kv_count, 8 + size_width(), "header.kv_count", "metadata pairs",
                       min_pair, remaining, limits_.max_kv_count);
  }

  bool check_count(std::uint64_t count, std::uint64_t offset, const char* path, const char* what,
                   std::uint64_t min_record, std::uint64_t remaining, std::uint64_t limit) {
    if (count >= kInt64Limit) {
      sink_.report(Code::ImpossibleCount, offset, size_width(), path, "",
                   "{} is 0x{:x} (>= 2^63; negative as the reference reader's int64)", path, count);
      return false;
    }
    if (count > remaining / min_record) {
      sink_.report(Code::ImpossibleCount, offset, size_width(), path, "",
                   "{} is {} but the {} bytes after the header hold at most {} {}", path, count,
                   remaining, remaining / min_record, what);
      return false;
    }
    if (count > limit) {
      sink_.report(Code::LimitExceeded, offset, size_width(), path, "",
                   "{} is {}, above the limit of {}", path, count, limit);
      return false;
    }
    return true;
  }

  // A length the file cannot hold may still be over ggml's limit, which ggml checks first: both
  // are reported, so the llama.cpp profile says why ggml refuses. Lengths the file does hold are
  // checked with the values (checks/keys.cpp).
  void over_string_limit(std::uint64_t length_offset, std::uint64_t length, const Field& path) {
    if (length <= kReferenceStringLimit) return;
    sink_.report(Code::StringTooLong, length_offset, size_width(), path,
                 "ggml rejects strings over 1 GiB before reading them",
                 "string length {} exceeds the reference limit of 1 GiB", length);
  }

  // --- metadata -----------------------------------------------------------------------------

  bool read_metadata() {
    // No reserve(kv_count): memory grows with the pairs actually read, never with a claim.
    for (std::uint64_t i = 0; i < file_index_.kv_count; ++i) {
      if (!read_pair(i)) return false;
    }
    return true;
  }

  bool truncated_metadata(std::uint64_t pair_start, const Field& path, const char* field) {
    if (short_of(0)) return false;
    const std::string hint =
        cursor_.remaining() == 0 && cursor_.pos() == pair_start
            ? fmt::format("the file ends after {} of the {} pairs header.kv_count declares",
                          file_index_.metadata.size(), file_index_.kv_count)
            : std::string();
    sink_.report(Code::TruncatedMetadata, pair_start, to_end(pair_start), path, hint,
                 "file ends inside {} (needs more than the {} left)", field,
                 byte_count(cursor_.remaining()));
    return false;
  }

  bool read_pair(std::uint64_t index) {
    const std::uint64_t start = cursor_.pos();
    const Field index_path = Field::kv(static_cast<std::size_t>(index));
    std::uint64_t key_length = 0;
    if (!cursor_.read_size(key_length, narrow())) {
      return truncated_metadata(start, index_path, "the key length");
    }
    if (key_length > file_left()) {
      over_string_limit(start, key_length, index_path + " key");
      sink_.report(Code::TruncatedString, start, to_end(start), index_path + " key",
                   "string lengths count bytes and are followed by exactly that many bytes",
                   "key length {} runs past the end of the file ({} left)", key_length,
                   byte_count(file_left()));
      return false;
    }
    if (key_length > std::min(limits_.max_string_length, kMaxRecordedKeyLength)) {
      sink_.report(Code::LimitExceeded, start, size_width(), index_path + " key", "",
                   "key length {} is above the limit of {}", key_length,
                   std::min(limits_.max_string_length, kMaxRecordedKeyLength));
      return false;
    }
    if (key_length > cursor_.remaining()) {  // only on a prefix: the file holds it
      (void)short_of(cursor_.pos() + key_length);
      return false;
    }
    std::string_view key;
    (void)cursor_.read_bytes(key_length, key);  // fits: checked above
    const Field path = kv_path(static_cast<std::size_t>(index), key);
    if (!skip_terminator(path + " key")) return false;
    const std::uint64_t type_offset = cursor_.pos();
    std::uint32_t raw_type = 0;
    if (!cursor_.read(raw_type)) return truncated_metadata(start, path, "the value type");
    if (!is_valid_value_type(raw_type, file_index_.version)) {
      sink_.report(Code::UnknownValueType, type_offset, 4, path + " type",
                   raw_type < kValueTypeCount
                       ? "types 10..12 (64-bit numbers) exist since version 2"
                       : "value types are 0..12; there is no dictionary type",
                   "unknown value type {} (0x{:x})", raw_type, raw_type);
      return false;  // the value's size is unknown: nothing after it can be located
    }
    const auto type = static_cast<ValueType>(raw_type);
    std::uint64_t payload = 0;
    if (type == ValueType::Array) {
      ArrayRecord array;
      array.key_length = key_length & kMaxRecordedKeyLength;  // fits: checked above
      if (!read_array(start, key, path, array)) return false;
      payload = file_index_.arrays.size();
      file_index_.arrays.push_back(array);
    } else if (type == ValueType::String) {
      std::string_view ignored;
      if (!read_string(start, path, ignored)) return false;
      payload = ignored.size();
    } else if (!read_scalar(type, payload)) {
      return truncated_metadata(start, path, fmt::format("a {} value", to_string(type)).c_str());
    }
    file_index_.metadata.emplace_back(start, type, payload);
    file_index_.metadata_end = cursor_.pos();
    return true;
  }

  bool read_scalar(ValueType type, std::uint64_t& out) {
    switch (scalar_size(type)) {
      case 1: {
        std::uint8_t v = 0;
        if (!cursor_.read(v)) return false;
        out = v;
        return true;
      }
      case 2: {
        std::uint16_t v = 0;
        if (!cursor_.read(v)) return false;
        out = v;
        return true;
      }
      case 4: {
        std::uint32_t v = 0;
        if (!cursor_.read(v)) return false;
        out = v;
        return true;
      }
      default: return cursor_.read(out);
    }
  }

  // Reads one string (length + bytes) of a value; reports and fails on truncation.
  bool read_string(std::uint64_t pair_start, const Field& path, std::string_view& out) {
    const std::uint64_t length_offset = cursor_.pos();
    std::uint64_t length = 0;
    if (!cursor_.read_size(length, narrow())) {
      return truncated_metadata(pair_start, path, "a string length");
    }
    if (length > file_left()) {
      over_string_limit(length_offset, length, path);
      sink_.report(Code::TruncatedString, length_offset, to_end(length_offset), path,
                   "string lengths count bytes and are followed by exactly that many bytes",
                   "string length {} runs past the end of the file ({} left)", length,
                   byte_count(file_left()));
      return false;
    }
    if (length > limits_.max_string_length) {
      sink_.report(Code::LimitExceeded, length_offset, size_width(), path, "",
                   "string length {} is above the limit of {}", length, limits_.max_string_length);
      return false;
    }
    if (length > cursor_.remaining()) {  // only on a prefix: the file holds it
      (void)short_of(cursor_.pos() + length);
      return false;
    }
    (void)cursor_.read_bytes(length, out);
    return skip_terminator(path);
  }

  // A top-level array value: its header, then its elements (recorded in `array`).
  bool read_array(std::uint64_t pair_start, std::string_view key, const Field& path,
                  ArrayRecord& array) {
    ArrayHeader header;
    if (!read_array_header(pair_start, path, 0, header)) return false;
    if (observer_ != nullptr && header.element_type == ValueType::String && !sink_.has_errors()) {
      observer_->on_string_array(file_index_, key, header.count_offset - 4, cursor_.pos(),
                                 header.count);
    }
    array.count = header.count;
    array.element_type = static_cast<std::uint32_t>(header.element_type) & 0xF;
    StringLengths lengths;
    if (!skip_elements(pair_start, header, path, 0, &lengths)) return false;
    array.strings_clean =
        header.element_type == ValueType::String && !nul_strings() && lengths.clean() ? 1 : 0;
    return true;
  }

  bool read_array_header(std::uint64_t pair_start, const Field& path, std::uint32_t depth,
                         ArrayHeader& array) {
    const std::uint64_t type_offset = cursor_.pos();
    std::uint32_t raw = 0;
    if (!cursor_.read(raw)) return truncated_metadata(pair_start, path, "an array element type");
    if (!is_valid_value_type(raw, file_index_.version)) {
      sink_.report(Code::UnknownArrayType, type_offset, 4, path + " element type",
                   "array element types are 0..12", "unknown array element type {} (0x{:x})", raw,
                   raw);
      return false;
    }
    array.element_type = static_cast<ValueType>(raw);
    array.count_offset = cursor_.pos();
    if (!cursor_.read_size(array.count, narrow())) {
      return truncated_metadata(pair_start, path, "an array count");
    }
    if (array.element_type == ValueType::Array) {
      if (depth == 0) {
        sink_.report(Code::NestedArray, type_offset, 4, path + " element type",
                     "ggml's reader rejects arrays of arrays; flatten the value",
                     "array of arrays");
      }
      if (depth + 1 >= std::min(limits_.max_depth, kMaxDepthLimit)) {
        sink_.report(Code::LimitExceeded, type_offset, 4, path + " element type", "",
                     "arrays nested more than {} deep",
                     std::min(limits_.max_depth, kMaxDepthLimit));
        return false;
      }
    }
    const std::uint64_t min_element = array.element_type == ValueType::String ? size_width()
                                      : array.element_type == ValueType::Array
                                          ? 4 + size_width()
                                          : scalar_size(array.element_type);
    if (array.count > file_left() / min_element) {
      if (array.count > kReferenceArrayLimit) {
        sink_.report(Code::ArrayTooLong, array.count_offset, size_width(), path + " count",
                     "ggml rejects arrays of more than 2^30 elements before reading them",
                     "array of {} elements exceeds the reference limit of 2^30", array.count);
      }
      sink_.report(Code::ImpossibleArrayCount, array.count_offset, size_width(), path + " count",
                   "array counts are element counts, not byte counts",
                   "array of {} {} elements cannot fit in the {} left", array.count,
                   to_string(array.element_type), byte_count(file_left()));
      return false;
    }
    if (array.count > limits_.max_array_length) {
      sink_.report(Code::LimitExceeded, array.count_offset, size_width(), path + " count", "",
                   "array of {} elements is above the limit of {}", array.count,
                   limits_.max_array_length);
      return false;
    }
    // Fixed-size elements are skipped at once, so they must all be in the input: on a prefix,
    // the array's end is what the reader needs. Strings and arrays are walked element by element
    // (each one checked), and on a prefix the walk says how far it got.
    if (scalar_size(array.element_type) != 0 && array.count > cursor_.remaining() / min_element) {
      (void)short_of(cursor_.pos() + array.count * min_element);  // <= file_left(): no overflow
      return false;
    }
    return true;
  }

  // Walks the elements of an array whose header was read; `lengths` (top-level string arrays)
  // gathers what the checks need to know of the strings.
  bool skip_elements(std::uint64_t pair_start, const ArrayHeader& array, const Field& path,
                     std::uint32_t depth, StringLengths* top_lengths = nullptr) {
    const std::uint32_t element_size = scalar_size(array.element_type);
    if (element_size != 0) {
      (void)cursor_.skip(array.count * element_size);  // fits: read_array_header checked it
    } else if (array.element_type == ValueType::String && nul_strings()) {
      // Writer diagnosis only: string by string, each with its NUL, away from the hot loop below.
      for (std::uint64_t i = 0; i < array.count; ++i) {
        std::string_view ignored;
        if (!read_string(pair_start, path, ignored)) return false;
      }
    } else if (array.element_type == ValueType::String) {
      std::uint64_t chunk_start = cursor_.pos();
      const std::uint64_t elements_offset = chunk_start;
      // The hot loop of a vocabulary: inline reads; read_string only to report a bad one.
      // A local cursor keeps the position in a register.
      const bool narrow_sizes = narrow();
      const std::uint64_t max_length = limits_.max_string_length;
      Cursor walk = cursor_;
      StringLengths lengths;
      for (std::uint64_t i = 0; i < array.count; ++i) {
        walk.prefetch(4096);
        const std::uint64_t at = walk.pos();
        std::uint64_t length = 0;
        if (!walk.read_size(length, narrow_sizes) || length > max_length || !walk.skip(length)) {
          cursor_ = walk;
          cursor_.rewind(at);
          std::string_view ignored;
          (void)read_string(pair_start, path, ignored);
          if (file_index_.shortfall.needed != 0) {  // a prefix: how far the walk got
            file_index_.shortfall.elements_offset = elements_offset;
            file_index_.shortfall.walked = i;
            file_index_.shortfall.count = array.count;
            file_index_.shortfall.at = at;
          }
          return false;
        }
        note_length(lengths, length);
        if (walk.pos() - chunk_start >= kScanChunk) {
          scan_chunk(lengths, chunk_start, walk.pos());
          chunk_start = walk.pos();
        }
      }
      cursor_ = walk;
      scan_chunk(lengths, chunk_start, cursor_.pos());
      if (top_lengths != nullptr) *top_lengths = lengths;
    } else {
      for (std::uint64_t i = 0; i < array.count; ++i) {
        ArrayHeader inner;
        if (!read_array_header(pair_start, path, depth + 1, inner)) return false;
        if (!skip_elements(pair_start, inner, path, depth + 1)) return false;
      }
    }
    return true;
  }

  // Branch-free, as it runs once per string of a vocabulary.
  void note_length(StringLengths& lengths, std::uint64_t length) const {
    lengths.any_bits |= length;
    lengths.longest = std::max(lengths.longest, length);
    // The zero bytes of the length field, all at once: a byte's high bit is set in `marks`
    // exactly when the byte is 0 (the classic SWAR test), counted over the field's width.
    constexpr std::uint64_t kLow7 = 0x7F7F7F7F7F7F7F7FULL;
    const std::uint64_t marks = ~(((length & kLow7) + kLow7) | length | kLow7);
    const std::uint64_t field = narrow() ? 0x80808080ULL : 0x8080808080808080ULL;
    // Counted with a multiply (each byte holds 0 or 1, their sum lands in the top byte), not
    // std::popcount: without -mpopcnt that is a libgcc call, a sixth of a vocabulary's check.
    const std::uint64_t ones = (marks & field) >> 7;
    lengths.zero_bytes += (ones * 0x0101010101010101ULL) >> 56;
  }

  // Chunks start at a length field, so a multi-byte sequence never spans two of them.
  static constexpr std::uint64_t kScanChunk = 32 * 1024;

  void scan_chunk(StringLengths& lengths, std::uint64_t begin, std::uint64_t end) const {
    std::string_view region;
    (void)file_index_.input.view(begin, end - begin, region);  // the walk just passed these bytes
    const RegionScan scan = scan_region(region);
    lengths.region_valid_utf8 = lengths.region_valid_utf8 && scan.valid_utf8;
    lengths.region_zero_bytes += scan.zero_bytes;
  }

  // --- tensor infos -------------------------------------------------------------------------

  bool read_tensor_infos() {
    if (!tensor_count_ok_) return false;  // reported with the header
    const std::uint64_t remaining = file_left();
    const std::uint64_t min_tensor = min_tensor_info_size(narrow());
    if (file_index_.tensor_count > remaining / min_tensor) {
      sink_.report(Code::ImpossibleCount, 8, size_width(), "header.tensor_count", "",
                   "header.tensor_count is {} but the {} bytes after the metadata hold at most "
                   "{} tensor infos",
                   file_index_.tensor_count, remaining, remaining / min_tensor);
      return false;
    }
    for (std::uint64_t i = 0; i < file_index_.tensor_count; ++i) {
      if (!read_tensor_info(i)) return false;
    }
    return true;
  }

  bool truncated_tensor(std::uint64_t start, const Field& path, const char* field) {
    if (short_of(0)) return false;
    const std::string hint =
        cursor_.remaining() == 0 && cursor_.pos() == start
            ? fmt::format(
                  "the file ends after {} of the {} tensor infos header.tensor_count "
                  "declares",
                  file_index_.tensors.size(), file_index_.tensor_count)
            : std::string();
    sink_.report(Code::TruncatedTensorInfo, start, to_end(start), path, hint,
                 "file ends inside {} ({} left)", field, byte_count(cursor_.remaining()));
    return false;
  }

  bool read_tensor_info(std::uint64_t index) {
    const std::uint64_t start = cursor_.pos();
    const Field index_path = Field::tensor(static_cast<std::size_t>(index));
    std::uint64_t name_length = 0;
    if (!cursor_.read_size(name_length, narrow())) {
      return truncated_tensor(start, index_path, "the name length");
    }
    if (name_length > file_left()) {
      over_string_limit(start, name_length, index_path + " name");
      sink_.report(Code::TruncatedString, start, to_end(start), index_path + " name",
                   "string lengths count bytes and are followed by exactly that many bytes",
                   "tensor name length {} runs past the end of the file ({} left)", name_length,
                   byte_count(file_left()));
      return false;
    }
    if (name_length > limits_.max_string_length) {
      sink_.report(Code::LimitExceeded, start, size_width(), index_path + " name", "",
                   "tensor name length {} is above the limit of {}", name_length,
                   limits_.max_string_length);
      return false;
    }
    if (name_length > cursor_.remaining()) {  // only on a prefix: the file holds it
      (void)short_of(cursor_.pos() + name_length);
      return false;
    }
    std::string_view name;
    (void)cursor_.read_bytes(name_length, name);  // fits: checked above
    const Field path = tensor_path(static_cast<std::size_t>(index), name);
    if (!skip_terminator(path + " name")) return false;
    TensorInfo info;
    info.name_offset = start;
    const std::uint64_t n_dims_offset = cursor_.pos();
    if (!cursor_.read(info.n_dims)) return truncated_tensor(start, path, "n_dims");
    if (info.n_dims > kMaxDims) {
      sink_.report(Code::TooManyDims, n_dims_offset, 4, path + " n_dims",
                   "ggml tensors have at most 4 dimensions", "n_dims is {}, at most 4 allowed",
                   info.n_dims);
    }
    // The dims are read back from the file when needed (FileIndex::dims): here only their room.
    if (info.n_dims > cursor_.remaining() / size_width() ||
        !cursor_.skip(std::uint64_t{info.n_dims} * size_width())) {
      return truncated_tensor(start, path, fmt::format("the {} dims", info.n_dims).c_str());
    }
    std::uint64_t data_offset = 0;
    if (file_index_.dialect.offset_before_type) {
      if (!cursor_.read(data_offset)) return truncated_tensor(start, path, "the offset");
      if (!cursor_.read(info.type)) return truncated_tensor(start, path, "the type");
    } else {
      if (!cursor_.read(info.type)) return truncated_tensor(start, path, "the type");
      if (!cursor_.read(data_offset)) return truncated_tensor(start, path, "the offset");
    }
    file_index_.tensors.push_back(info);
    file_index_.infos_end = cursor_.pos();
    return true;
  }
};

}  // namespace

void read_model(FileIndex& index, Sink& sink, StringArrayObserver* observer) {
  Reader(index, sink, observer).run();
}

}  // namespace ggufcheck::detail

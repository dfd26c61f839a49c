// The edits of the targeted faults (faults.hpp). A fault's entry in the code table
// (code_table.cpp) names the edit it makes as a call on an Applier; faults.cpp defines the edits
// and runs them. Declared here, and not inside faults.cpp, only so that the table can call them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "expected.hpp"
#include "faults.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"

namespace ggufcheck::testing {

class Applier {
 public:
  explicit Applier(const Corruption& c);

  Corrupted run();

  // The dim edits of dim_fault and the general.alignment edits of alignment_fault.
  enum class DimEdit : std::uint8_t { Negative, Zero, ElementCount, RowNotBlockMultiple, ByteSize };
  enum class AlignmentEdit : std::uint8_t { Type, Zero, NotPowerOfTwo, Below8, Above65536 };

  // --- the edits, one per kind of fault ------------------------------------------------------
  void truncated_header();
  void bad_magic();
  void unsupported_version();
  void obsolete_version();
  void old_version();
  void byte_swapped_version();
  void count_impossible(bool kv);
  void truncated_metadata();
  void string_length();
  void truncated_in_string();
  void empty_key();
  void duplicate_key();
  void key_byte(bool unconventional);
  void long_key();
  void value_type();
  void array_type();
  void nested_array();
  void array_count();
  void bool_byte();
  void string_byte(bool nul);
  void truncated_tensor_info();
  void long_tensor_name();
  void empty_tensor_name();
  void duplicate_tensor_name();
  void tensor_name_byte();
  void extra_dims();
  void n_dims_huge();
  void dim_fault(DimEdit edit);
  void tensor_type_fault(bool unknown);
  void offset_wraps();
  void new_tensor_type();
  void scalar_tensor();
  void misaligned_offset();
  void overlapping_offset();
  void offset_out_of_bounds();
  void truncated_data();
  void gap();
  void padding_byte();
  void truncated_before_data();
  void truncated_final_padding();
  void trailing_bytes();
  void alignment_fault(AlignmentEdit edit);
  void key_letter(std::string_view key);
  void standard_key_type();
  void tokenizer_array_length();
  void token_id();

 private:
  const Corruption& c_;
  ValidModel m_;
  Corrupted out_;
  Written w_;
  ByteVector bytes_;
  Reach reach_;
  std::vector<Expect> extra_;

  [[nodiscard]] Document& doc() { return m_.doc; }
  [[nodiscard]] const Document& doc_c() const { return m_.doc; }
  [[nodiscard]] std::uint64_t ch(std::size_t i) const { return c_.choices[i]; }
  [[nodiscard]] Endian endian() const { return m_.doc.endian; }
  [[nodiscard]] const WrittenLayout& layout() const { return w_.layout; }
  [[nodiscard]] std::uint64_t size() const { return bytes_.size(); }
  [[nodiscard]] std::uint64_t tensor_count() const { return m_.doc.tensors.size(); }
  [[nodiscard]] std::uint64_t kv_count() const { return m_.doc.metadata.size(); }
  [[nodiscard]] std::uint64_t alignment() const { return w_.layout.alignment; }
  [[nodiscard]] std::uint64_t data_start() const { return w_.layout.data_start; }
  [[nodiscard]] std::uint64_t infos_start() const;
  // Offset of tensor i's data relative to the data section.
  [[nodiscard]] std::uint64_t rel(std::size_t i) const;
  [[nodiscard]] std::uint64_t nbytes(std::size_t i) const;
  [[nodiscard]] std::uint64_t padded(std::size_t i) const;

  void write();
  void patch(std::uint64_t offset, std::uint64_t value, std::uint32_t width);
  void patch_byte(std::uint64_t offset, std::uint8_t value);
  void cut(std::uint64_t at);
  void expect(Code code, std::uint64_t offset, std::uint64_t length,
              std::array<bool, 3> profiles = {true, true, true});
  void target_at(std::uint64_t offset) { out_.finding_offset = offset; }
  void say(const std::string& text) { out_.edit = text; }

  std::size_t insert_pair(KeyValue kv, std::uint64_t choice);
  std::size_t insert_tensor(Tensor t, std::uint64_t choice);
  // An existing tensor matching `ok`, or `fallback` inserted at a chosen position.
  template <typename Predicate>
  std::size_t tensor_where(Predicate ok, Tensor fallback, std::uint64_t choice);
  static Tensor target_tensor(std::string name, std::vector<std::uint64_t> dims,
                              std::uint32_t type = 0);
  [[nodiscard]] std::string tensor_label(std::size_t i) const;
  [[nodiscard]] std::string pair_label(std::size_t i) const;

  // Whether a cut at or after `at` in the metadata passes the header's count checks, and one at
  // or after `at` in the tensor infos passes the tensor_count check: the truncation faults prefer
  // such places (3 times in 4), so that they mostly reach the code they target.
  [[nodiscard]] bool header_counts_pass(std::uint64_t at) const;
  [[nodiscard]] bool tensor_count_passes(std::uint64_t at) const;
  template <typename T, typename Predicate>
  const T& prefer(std::uint64_t choice, const std::vector<T>& all, Predicate ok) const;

  // The header's impossible-count checks for a file cut at `at` (bytes after the header);
  // returns false when kv_count fails them (nothing after the header is read).
  bool header_counts_after_cut(std::uint64_t at);
  // A cut inside pair k: GGUF2001 or GGUF2002 at `offset` unless the header checks fail first.
  void cut_in_pair(std::size_t k, std::uint64_t at, Code code, std::uint64_t offset);
  // A cut inside tensor info t: GGUF3001 or GGUF2002 unless tensor_count fails first.
  void cut_in_tensor(std::size_t t, std::uint64_t at, Code code, std::uint64_t offset);

  void tensor_name_duplicates(const std::vector<std::string>& names);
  void ensure_vocab(std::size_t at_least);
  void set_alignment_32();
  std::pair<std::size_t, std::string> target_string_pair(bool array);
};

}  // namespace ggufcheck::testing

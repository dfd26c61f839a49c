// Hostile-file builders: a document written by the writer, then the one field the writer always
// writes right (a length, a count, a type, the magic) overwritten at the offset its WrittenLayout
// reports, in the document's byte order and field width. They return the Written, so that a
// test can point at the field it broke.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "documents.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// The length field of kv[pair]'s key := length.
[[nodiscard]] Written with_key_length(const Document& doc, std::size_t pair, std::uint64_t length);
// The length field of kv[pair]'s string value := length.
[[nodiscard]] Written with_string_length(const Document& doc, std::size_t pair,
                                         std::uint64_t length);
// The length field of element `element` of kv[pair]'s string array := length.
[[nodiscard]] Written with_element_length(const Document& doc, std::size_t pair,
                                          std::size_t element, std::uint64_t length);
// The element type of kv[pair]'s array := type.
[[nodiscard]] Written with_array_type(const Document& doc, std::size_t pair, std::uint32_t type);
// The count of kv[pair]'s array := count.
[[nodiscard]] Written with_array_count(const Document& doc, std::size_t pair, std::uint64_t count);
// The length field of tensor[index]'s name := length.
[[nodiscard]] Written with_tensor_name_length(const Document& doc, std::size_t index,
                                              std::uint64_t length);
// n_dims of tensor[index] := n_dims (its dims stay as written).
[[nodiscard]] Written with_n_dims(const Document& doc, std::size_t index, std::uint32_t n_dims);

// The header's counts := these (nullopt: the document's own), nothing else changed.
[[nodiscard]] ByteVector with_counts(const Document& doc, std::optional<std::uint64_t> tensor_count,
                                     std::optional<std::uint64_t> kv_count);

// The first four bytes := magic.
[[nodiscard]] ByteVector with_magic(ByteVector bytes, std::string_view magic);

// general.alignment = value (kv[1]) over two F32 tensors "a" [3] and "b" [8] (12 and 32 bytes).
[[nodiscard]] Document with_alignment(Value value);

// Two F32 [8] tensors "a" and "b" (32 bytes each) at the offsets given, `data_bytes` of data
// behind them.
[[nodiscard]] ByteVector two_tensors_at(std::uint64_t first, std::uint64_t second,
                                        std::size_t data_bytes);

// A file whose last pair, kv[1] "my.deep", is `depth` array headers nested in each other (each:
// element type array, count 1), ending in an empty uint8 array.
[[nodiscard]] ByteVector deeply_nested(std::uint64_t depth);

}  // namespace ggufcheck::testing

// Blind edits of a written file: byte flips and boundary overwrites (Mutation), and claimed
// counts or sizes far beyond the file (HugeClaim).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/writer.hpp"
#include "models.hpp"

namespace ggufcheck::testing {

struct Mutation {
  enum class Kind : std::uint8_t { Flip, Overwrite4, Overwrite8 };
  enum class Relative : std::uint8_t { Absolute, FileSize, BytesLeft };
  Kind kind = Kind::Flip;
  std::uint64_t where = 0;  // odd: the n-th field start of the layout; even: any byte
  std::uint8_t mask = 1;    // Flip: the xor mask, never 0
  Relative relative = Relative::Absolute;
  std::uint64_t value = 0;  // Overwrite: the value (plus the file size or the bytes left)
  Endian order = Endian::Little;
};

// Where fields start: the places an edit hurts most.
[[nodiscard]] std::vector<std::uint64_t> field_starts(const WrittenLayout& layout);

struct Mutated {
  ByteVector bytes;
  std::string edit;
};

[[nodiscard]] Mutated mutate(const ByteVector& original, const WrittenLayout& layout,
                             const Mutation& m);

// A claimed count or size far beyond the file, for the allocation bound.
struct HugeClaim {
  enum class Field : std::uint8_t {
    KvCount,
    TensorCount,
    KeyLength,
    StringLength,
    ArrayCount,
    NameLength,
    NDims,
    Dim,
    Offset
  };
  Field field = Field::KvCount;
  std::uint64_t which = 0;  // which pair or tensor
  std::uint64_t value = 0;
};

[[nodiscard]] std::string_view to_string(HugeClaim::Field field);

// Writes the claim into a written model; falls back to kv_count when the file has no such field.
[[nodiscard]] Mutated claim(const ValidModel& model, const HugeClaim& c);

}  // namespace ggufcheck::testing

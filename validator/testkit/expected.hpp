// What validating a generated or corrupted file must report, finding by finding, and how to
// compare that with a report.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// A finding a file must produce: code, byte offset and length, in the profiles marked (and then
// only where the catalogue does not silence the code).
struct Expect {
  Code code{};
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::array<bool, 3> profiles{true, true, true};
};

using FindingKey = std::tuple<std::uint16_t, std::uint64_t, std::uint64_t>;  // code, offset, length

[[nodiscard]] std::vector<FindingKey> expected_in(const std::vector<Expect>& expected,
                                                  Profile profile);
[[nodiscard]] std::vector<FindingKey> actual_findings(const Report& report);

[[nodiscard]] std::string describe(const std::vector<FindingKey>& findings);
[[nodiscard]] std::string describe(const Report& report);

// How far the validator reads a broken file: the header, pairs [0, pairs), tensor infos
// [0, tensors). type_changed: tensors whose type id was overwritten (their GGUF3014 goes).
struct Reach {
  bool header = true;
  std::size_t pairs = std::numeric_limits<std::size_t>::max();
  std::size_t tensors = std::numeric_limits<std::size_t>::max();
  std::set<std::size_t> type_changed;
};

// What a written document's content implies, finding by finding (docs/format.md): version 2 ->
// GGUF1005; big-endian -> GGUF1006 (an error in strict); a printable key that is not
// conventional -> GGUF2006 per profile (spec: '-' and upper case are unconventional too); a
// tensor of type 39..42 -> GGUF3014; n_dims 0 -> GGUF3015.
[[nodiscard]] std::vector<Expect> implied_findings(const Document& doc, const WrittenLayout& layout,
                                                   const Reach& reach = {});

}  // namespace ggufcheck::testing

// Multimodal projectors of every projector type ggufcheck follows (the generated table
// validator/src/artifacts/generated/projector_rules.inc, read from the pinned tools/mtmd/clip.cpp),
// and one change each to them, for the mmproj differential test: the judge (mmproj_reference.hpp)
// must load every base (the proof that the table holds everything the loader asks of the type)
// and agree with ggufcheck on every mutant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// The projector types ggufcheck follows, in the table's order.
[[nodiscard]] std::vector<std::string> followed_projector_types();
// The projector types it does not follow (GGUF7016), with the reason the table gives and whether
// mtmd takes the type as a vision encoder (else it refuses it as one, whatever the rest).
struct UnfollowedType {
  std::string name;
  std::string why_not;
  bool vision;
};
[[nodiscard]] std::vector<UnfollowedType> unfollowed_projector_types();

// A projector of this type that mtmd loads: a vision encoder (an audio one for the audio types),
// the keys every type reads, the type's required keys, two layers and the type's required tensors.
[[nodiscard]] Document projector_of_type(std::string_view type);

struct ProjectorMutant {
  std::string description;
  Document document;
};

// One change each to `base`: every key removed, retyped, set to 0, 1 and huge values; every
// tensor removed, renamed, reshaped; an extra tensor; a layer too many; an audio encoder beside;
// both activations.
[[nodiscard]] std::vector<ProjectorMutant> projector_mutants(const Document& base);
// Those of projector_of_type(type), and the type's optional keys added (0, 1, huge values, as an
// i32) and its optional tensors added, one at a time.
[[nodiscard]] std::vector<ProjectorMutant> projector_mutants_of_type(std::string_view type);

}  // namespace ggufcheck::testing

// Options for tests and tools about the container: the model checks (GGUF7xxx, GGUF8xxx: does
// llama.cpp's model loader accept the model) off, as `--no-model-checks` turns them off. Test
// fixtures are containers, not models: a file with one tensor "w" and general.architecture
// "llama" is a fine container and no model llama.cpp loads.
#pragma once

#include "ggufcheck/validate.hpp"

namespace ggufcheck::testing {

[[nodiscard]] inline Options container_options(Profile profile = Profile::Strict) {
  Options options;
  options.profile = profile;
  options.model_checks = false;
  return options;
}

}  // namespace ggufcheck::testing

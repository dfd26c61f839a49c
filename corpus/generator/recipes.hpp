// The corpus as data: one Recipe per file, with the codes its bytes are declared to contain.
// generate.cpp writes the files and manifest.json from this list; nothing here runs the
// validator. See corpus/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ggufcheck/diagnostic.hpp"

namespace ggufcheck::corpus {

using ByteVector = std::vector<std::uint8_t>;

struct Recipe {
  std::string id;           // <group>/<name>, stable: other parts of the project use it
  std::string description;  // one sentence: what the file contains or breaks
  std::function<ByteVector()> build;
  // The codes the bytes contain, as the format docs say the fault causes ("GGUF4001"); a code
  // may appear more than once (two bad names), the manifest lists each once.
  std::vector<std::string> codes;
  // Where detection itself differs by profile (C-string keys and names in llama.cpp, the tensor
  // name limit of the spec): the declared codes of that profile, replacing `codes`.
  std::map<Profile, std::vector<std::string>> per_profile;
  std::string pending;  // for rows with no code yet: what later check will flag the file
  // The codes are those of the data check (check --data): the file is a valid container whose
  // tensor bytes hold the fault (the tensor-data codes, 6xxx).
  bool data = false;
  // The codes are the model checks' (GGUF7xxx, GGUF8xxx): the file is validated with them. Every
  // other file is a container fixture, validated without them (--no-model-checks).
  bool model = false;
  // A LoRA adapter's base model (--base), a corpus file ("valid/test-model.gguf"); empty: none.
  std::string base;

  [[nodiscard]] std::string group() const { return id.substr(0, id.find('/')); }
  [[nodiscard]] std::string name() const { return id.substr(id.find('/') + 1); }
  // The threats.md row of a threats/ file: the name up to its first '-'.
  [[nodiscard]] std::string threat() const;
};

// Every recipe, sorted by id; ids are unique.
[[nodiscard]] std::vector<Recipe> recipes();

struct Expectation {
  bool pass = true;
  std::vector<std::string> codes;  // sorted, unique, only codes not silent in the profile
};

// Derived from the declared codes through the catalogue's severities: a code silent in the
// profile is dropped; the verdict is "fail" iff one is an error there.
[[nodiscard]] Expectation expectation(const Recipe& recipe, Profile profile);

// The catalogue severity of a code given as "GGUFnnnn" (nullopt: not in the catalogue).
[[nodiscard]] std::optional<Severity> severity_of(const std::string& code, Profile profile);

}  // namespace ggufcheck::corpus

// Diagnostic codes, severities and profiles, all derived from catalogue.def.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ggufcheck {

enum class Severity : std::uint8_t { Silent, Note, Warning, Error };

enum class Profile : std::uint8_t { Strict, Spec, LlamaCpp };
inline constexpr std::array<Profile, 3> kAllProfiles = {Profile::Strict, Profile::Spec,
                                                        Profile::LlamaCpp};

// What part of the file (or of the run) a code is about; its number range says the same.
enum class Area : std::uint8_t {
  Input,            // 0xxx: the input could not be read, or a limit stopped the read
  Header,           // 1001-1899: magic, version, counts
  WriterDiagnosis,  // 19xx: the mistake a failing file's writer made
  Metadata,         // 2xxx: keys, value types, values
  TensorInfo,       // 3xxx: names, dims, types
  DataLayout,       // 4xxx: offsets, alignment padding, the data section
  StandardKeys,     // 5xxx: general.alignment, general.architecture, tokenizer.ggml.*
  TensorData,       // 6xxx: the tensors' bytes (check --data)
  Model,  // 7xxx: the model as llama.cpp's loader sees it: architecture, keys, vocabulary, tensor
          // set
  SplitSet,      // 8xxx: a model split over several files, checked as one set
  ChatTemplate,  // 9001-9499: the Jinja programs in tokenizer.chat_template*
  Portability,   // 9501-9999: what other widely used parsers read differently
};

enum class Code : std::uint16_t {
#define GGUFCHECK_DIAGNOSTIC(number, id, name, area, s, sp, l, bs, eg, meaning) id = number,
#include "ggufcheck/catalogue.def"
#undef GGUFCHECK_DIAGNOSTIC
};

struct CatalogueEntry {
  Code code;
  std::string_view name;  // kebab-case, usable wherever a code is
  Area area;
  std::array<Severity, 3> severities;  // indexed by Profile
  // The bytes do not lay out as a GGUF file: the file fails structurally (writer diagnosis).
  bool breaks_structure;
  // A writer-diagnosis hypothesis must leave no trace of it (every breaks_structure code too).
  bool explains_garbage;
  std::string_view meaning;
  // The finding ends the reading of the file: no reader can load it past this point, so no option
  // (--disable, --severity, the Python and C interfaces) may silence or downgrade it. Every code
  // that breaks the structure and is an error in every profile, the input codes, and the header
  // codes that stop the reader (bad magic, unsupported or obsolete version). ends_reading(code).
  bool ends_reading;

  [[nodiscard]] Severity severity(Profile profile) const {
    return severities[static_cast<std::size_t>(profile)];
  }
  // A code no longer reported (kept, never reused): its meaning starts with "retired:".
  [[nodiscard]] bool retired() const { return meaning.starts_with("retired:"); }
};

// Every entry of the catalogue, in catalogue order.
[[nodiscard]] std::span<const CatalogueEntry> catalogue();
[[nodiscard]] const CatalogueEntry& catalogue_entry(Code code);
// "GGUF4001", "4001", "misaligned-offset" (case-insensitive code prefix) -> the code.
[[nodiscard]] std::optional<Code> find_code(std::string_view code_or_name);
// "GGUF4001"
[[nodiscard]] std::string code_string(Code code);

// Why `severity` cannot be given to `code` by an option (CatalogueEntry::ends_reading), or
// nothing when it can. Raising such a code to error is allowed (it is one already). Every
// interface (the command's --disable/--severity, Python, C) refuses what this refuses.
[[nodiscard]] std::optional<std::string> refuse_override(Code code, Severity severity);

// "data-layout"
[[nodiscard]] std::string_view to_string(Area area);
[[nodiscard]] std::string_view to_string(Severity severity);
[[nodiscard]] std::optional<Severity> parse_severity(std::string_view text);
[[nodiscard]] std::string_view to_string(Profile profile);
[[nodiscard]] std::optional<Profile> parse_profile(std::string_view text);

}  // namespace ggufcheck

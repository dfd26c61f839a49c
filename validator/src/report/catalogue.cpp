#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

#include "ggufcheck/diagnostic.hpp"

namespace ggufcheck {
namespace {

constexpr Severity E = Severity::Error;
constexpr Severity W = Severity::Warning;
constexpr Severity N = Severity::Note;
constexpr Severity S = Severity::Silent;

// A flag column of catalogue.def, as written: its letter for yes, "-" for no; anything else
// does not compile.
consteval bool flag(std::string_view column, std::string_view letter) {
  if (column == letter) return true;
  if (column == "-") return false;
  throw "a flag column of catalogue.def holds its letter or -";
}

// Whether a code ends the reading (CatalogueEntry::ends_reading): the input codes, the header
// codes after which the reader stops or no reader loads the file, and every code that breaks the
// structure in every profile (a code some profile keeps silent, such as non-zero padding in the
// llama.cpp profile, is a profile's considered verdict that the file still loads).
consteval bool ends_reading(unsigned number, Area area, Severity s, Severity sp, Severity l,
                            bool breaks_structure) {
  if (area == Area::Input) return true;
  if (number == 1002 || number == 1003 || number == 1004) return true;  // magic, versions
  return breaks_structure && s == E && sp == E && l == E;
}

constexpr CatalogueEntry kCatalogue[] = {
#define GGUFCHECK_DIAGNOSTIC(number, id, name, area, s, sp, l, bs, eg, meaning) \
  {Code::id,       name,                                                        \
   Area::area,     {s, sp, l},                                                  \
   flag(#bs, "S"), flag(#eg, "G"),                                              \
   meaning,        ends_reading(number, Area::area, s, sp, l, flag(#bs, "S"))},
#include "ggufcheck/catalogue.def"
#undef GGUFCHECK_DIAGNOSTIC
};

// The position in kCatalogue of each code, indexed by code number: catalogue_entry runs for
// every finding reported (breaks_structure), so it is a table look-up, not a search.
constexpr unsigned kLargestCode = [] {
  unsigned largest = 0;
  for (const CatalogueEntry& entry : kCatalogue) {
    largest = std::max(largest, static_cast<unsigned>(entry.code));
  }
  return largest;
}();
static_assert(std::size(kCatalogue) <= 256, "kEntryIndex holds positions in a byte");
constexpr auto kEntryIndex = [] {
  std::array<std::uint8_t, kLargestCode + 1> index{};
  for (std::size_t i = 0; i < std::size(kCatalogue); ++i) {
    index[static_cast<unsigned>(kCatalogue[i].code)] = static_cast<std::uint8_t>(i);
  }
  return index;
}();

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const CatalogueEntry> catalogue() {
  return kCatalogue;
}

const CatalogueEntry& catalogue_entry(Code code) {
  const auto number = static_cast<unsigned>(code);
  // A number beyond the table is no Code produced from the catalogue: the first entry, as for
  // a number inside it that names no code.
  return kCatalogue[number <= kLargestCode ? kEntryIndex[number] : 0];
}

std::optional<Code> find_code(std::string_view text) {
  for (const auto& entry : kCatalogue) {
    if (iequals(text, entry.name) || iequals(text, code_string(entry.code)) ||
        text == fmt::format("{:04}", static_cast<unsigned>(entry.code))) {
      return entry.code;
    }
  }
  return std::nullopt;
}

std::string code_string(Code code) {
  return fmt::format("GGUF{:04}", static_cast<unsigned>(code));
}

std::optional<std::string> refuse_override(Code code, Severity severity) {
  const CatalogueEntry& entry = catalogue_entry(code);
  if (!entry.ends_reading || severity == Severity::Error) return std::nullopt;
  return fmt::format(
      "{} {} cannot be {}: it means the file cannot be read as GGUF, so no option may turn it "
      "into a pass (ggufcheck explain {})",
      code_string(code), entry.name,
      severity == Severity::Silent ? "disabled" : fmt::format("set to {}", to_string(severity)),
      code_string(code));
}

std::string_view to_string(Area area) {
  switch (area) {
    case Area::Input: return "input";
    case Area::Header: return "header";
    case Area::WriterDiagnosis: return "writer-diagnosis";
    case Area::Metadata: return "metadata";
    case Area::TensorInfo: return "tensor-info";
    case Area::DataLayout: return "data-layout";
    case Area::StandardKeys: return "standard-keys";
    case Area::TensorData: return "tensor-data";
    case Area::Model: return "model";
    case Area::SplitSet: return "split-set";
    case Area::ChatTemplate: return "chat-template";
    case Area::Portability: break;
  }
  return "portability";
}

std::string_view to_string(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    case Severity::Silent: break;
  }
  return "silent";
}

std::optional<Severity> parse_severity(std::string_view text) {
  for (Severity s : {Severity::Error, Severity::Warning, Severity::Note, Severity::Silent}) {
    if (iequals(text, to_string(s))) return s;
  }
  if (iequals(text, "off") || iequals(text, "none")) return Severity::Silent;
  return std::nullopt;
}

std::string_view to_string(Profile profile) {
  switch (profile) {
    case Profile::Strict: return "strict";
    case Profile::Spec: return "spec";
    case Profile::LlamaCpp: break;
  }
  return "llama.cpp";
}

std::optional<Profile> parse_profile(std::string_view text) {
  for (Profile p : kAllProfiles) {
    if (iequals(text, to_string(p))) return p;
  }
  return std::nullopt;
}

}  // namespace ggufcheck

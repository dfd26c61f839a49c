#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "ggufcheck/diagnostic.hpp"

namespace ggufcheck {
namespace {

constexpr Severity E = Severity::Error;
constexpr Severity W = Severity::Warning;
constexpr Severity N = Severity::Note;
constexpr Severity S = Severity::Silent;

constexpr CatalogueEntry kCatalogue[] = {
#define GGUFCHECK_DIAGNOSTIC(number, id, name, s, sp, l, meaning) \
  {Code::id, name, {s, sp, l}, meaning},
#include "ggufcheck/catalogue.def"
#undef GGUFCHECK_DIAGNOSTIC
};

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
  for (const auto& entry : kCatalogue) {
    if (entry.code == code) return entry;
  }
  return kCatalogue[0];  // unreachable for a Code produced from the catalogue
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

// Collects findings, applying the profile's severity; silent codes are dropped unformatted.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/validate.hpp"

namespace ggufcheck::detail {

// Escapes untrusted bytes for messages: printable ASCII stays, the rest becomes \xNN,
// and long text is shortened so a 1 GiB key cannot flood a report.
std::string escape(std::string_view bytes, std::size_t max_length = 80);
// "1 byte", "24 bytes"
inline std::string byte_count(std::uint64_t n) {
  return fmt::format("{} byte{}", n, n == 1 ? "" : "s");
}

// The field path of a finding, built only when a finding is reported: formatting a path for
// every pair of a million-pair file up front would dominate the run time.
class Field {
 public:
  Field(const char* plain) : plain_(plain) {}             // NOLINT: a literal path is a Field
  Field(std::string plain) : plain_(std::move(plain)) {}  // NOLINT
  // kv[3] "general.alignment", or kv[3] before the key is known
  static Field kv(std::size_t index, std::optional<std::string_view> key = std::nullopt) {
    return Field("kv", index, key);
  }
  // tensor[7] "blk.0.attn_q.weight"
  static Field tensor(std::size_t index, std::optional<std::string_view> name = std::nullopt) {
    return Field("tensor", index, name);
  }
  [[nodiscard]] Field operator+(std::string_view suffix) const {
    Field f = *this;
    f.suffix_ += suffix;
    return f;
  }
  [[nodiscard]] std::string text() const;

 private:
  Field(const char* kind, std::size_t index, std::optional<std::string_view> name)
      : plain_(kind), index_(index), indexed_(true), name_(name) {}
  std::string plain_;
  std::size_t index_ = 0;
  bool indexed_ = false;
  std::optional<std::string_view> name_;
  std::string suffix_;
};

inline Field kv_path(std::size_t index, std::string_view key) {
  return Field::kv(index, key);
}
inline Field tensor_path(std::size_t index, std::string_view name) {
  return Field::tensor(index, name);
}

// Findings that mean the bytes do not lay out as a GGUF file (what a misparse produces). A file
// with one of these fails structurally, which starts writer diagnosis (diagnose_writer.cpp).
// The catalogue's breaks_structure column says which.
inline bool breaks_structure(Code code) {
  return catalogue_entry(code).breaks_structure;
}

class Sink {
 public:
  // Without details, findings keep their code and severity, once per pair, and no place, path
  // or message: writer diagnosis reads a file up to 15 more times and only needs to know which
  // codes were found. Once per pair keeps a trial's memory bounded by the catalogue, where a
  // misreading dialect can find something in every entry of the file.
  enum class Details : std::uint8_t { Kept, Dropped };
  explicit Sink(const Options& options, Details details = Details::Kept)
      : options_(options), details_(details) {}

  [[nodiscard]] bool enabled(Code code) const {
    return options_.severity(code) != Severity::Silent;
  }
  [[nodiscard]] const Options& options() const { return options_; }
  [[nodiscard]] Profile profile() const { return options_.profile; }

  template <typename... Args>
  void report(Code code, std::uint64_t offset, std::uint64_t length, const Field& field,
              std::string_view hint, fmt::format_string<Args...> format, Args&&... args) {
    if (breaks_structure(code)) {
      structure_broken_ = true;
      broken_areas_ |= 1U << static_cast<unsigned>(catalogue_entry(code).area);
    }
    profile_errors_ =
        profile_errors_ || catalogue_entry(code).severity(profile()) == Severity::Error;
    const Severity severity = options_.severity(code);
    if (severity == Severity::Silent) return;
    if (findings_.size() >= options_.limits.max_findings) {
      // Not kept, but still counted: a limit on the report never changes the verdict.
      ++dropped_[static_cast<std::size_t>(severity)];
      return;
    }
    if (details_ == Details::Dropped) {
      const bool seen = std::any_of(findings_.begin(), findings_.end(), [&](const Finding& f) {
        return f.code == code && f.severity == severity;
      });
      if (!seen) findings_.push_back(Finding{code, severity, 0, 0, {}, {}, {}});
      return;
    }
    findings_.push_back(Finding{code, severity, offset, length, field.text(),
                                fmt::format(format, std::forward<Args>(args)...),
                                std::string(hint)});
  }

  [[nodiscard]] std::vector<Finding> take() { return std::move(findings_); }
  // Whether a finding that breaks the structure was found, at any severity (silenced too).
  [[nodiscard]] bool structure_broken() const { return structure_broken_; }
  // Whether a finding of `area` that breaks the structure was found (silenced too): what a stage
  // that needs that part of the file asks before it runs.
  [[nodiscard]] bool structure_broken(Area area) const {
    return (broken_areas_ & (1U << static_cast<unsigned>(area))) != 0;
  }
  // Whether a finding the profile makes an error was reported so far, whatever the options'
  // overrides make of it (so an override never changes which findings exist).
  [[nodiscard]] bool has_profile_errors() const { return profile_errors_; }
  // Findings beyond Limits::max_findings, per severity.
  [[nodiscard]] const std::array<std::uint64_t, 4>& dropped() const { return dropped_; }
  // Whether an error was reported so far (kept or beyond the limit).
  [[nodiscard]] bool has_errors() const {
    return dropped_[static_cast<std::size_t>(Severity::Error)] != 0 ||
           std::any_of(findings_.begin(), findings_.end(),
                       [](const Finding& f) { return f.severity == Severity::Error; });
  }

 private:
  const Options& options_;
  Details details_;
  std::vector<Finding> findings_;
  std::array<std::uint64_t, 4> dropped_{};
  bool structure_broken_ = false;
  std::uint32_t broken_areas_ = 0;  // bit per Area
  bool profile_errors_ = false;
};

}  // namespace ggufcheck::detail

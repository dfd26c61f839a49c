// No option turns a file that cannot be read into a pass: every code that ends the reading
// (CatalogueEntry::ends_reading, "fixed" in `ggufcheck list`) against every override form of
// every interface, on a file that has that fault. The command refuses the override (exit 3), the
// C interface refuses it (GGUFCHECK_ERROR_INVALID_ARGUMENT), and the library ignores it when a
// caller writes it into Options directly. The Python interface's refusal is tested by pytest
// (python/tests/test_overrides.py).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "code_table.hpp"
#ifdef GGUFCHECK_TEST_C_INTERFACE
#include "ggufcheck.h"
#endif
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;

std::vector<const CatalogueEntry*> fixed_codes() {
  std::vector<const CatalogueEntry*> fixed;
  for (const CatalogueEntry& e : catalogue()) {
    if (e.ends_reading) fixed.push_back(&e);
  }
  return fixed;
}

// The rule, written out: a change to the catalogue that adds or drops a fixed code is seen here.
TEST(FixedCodes, AreTheCodesThatEndTheReading) {
  std::set<unsigned> numbers;
  for (const CatalogueEntry* e : fixed_codes()) numbers.insert(static_cast<unsigned>(e->code));
  const std::set<unsigned> expected = {1,    2,    3,    1001, 1002, 1003, 1004, 1007, 2001,
                                       2002, 2008, 2009, 2011, 3001, 3006, 3007, 3009, 3010,
                                       3011, 3012, 3013, 4001, 4002, 4003, 4006};
  EXPECT_EQ(numbers, expected);
  for (const CatalogueEntry* e : fixed_codes()) {
    for (const Profile p : kAllProfiles) {
      EXPECT_EQ(e->severity(p), Severity::Error)
          << code_string(e->code) << " is fixed but not an error in " << to_string(p);
    }
  }
}

TEST(FixedCodes, RefuseOverrideRefusesEveryLevelButError) {
  for (const CatalogueEntry& e : catalogue()) {
    for (const Severity s : {Severity::Silent, Severity::Note, Severity::Warning}) {
      EXPECT_EQ(refuse_override(e.code, s).has_value(), e.ends_reading) << code_string(e.code);
    }
    EXPECT_FALSE(refuse_override(e.code, Severity::Error).has_value()) << code_string(e.code);
  }
}

class OverrideMatrix : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ggufcheck-overrides-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The file that shows `code`: its code example, or for GGUF0001 a path that does not exist.
  std::string file_with(Code code) {
    const fs::path path = dir_ / (code_string(code) + ".gguf");
    if (code == Code::UnreadableFile) return (dir_ / "no-such-model.gguf").string();
    const Written written = example(code);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(written.bytes.data()),
               static_cast<std::streamsize>(written.bytes.size()));
    return path.string();
  }

  fs::path dir_;
};

// Every form a user can write on the command line (or in an Action's args), per fixed code and
// profile: refused, exit 3, with the reason; never exit 0.
TEST_F(OverrideMatrix, TheCommandRefusesEveryOverrideOfAFixedCode) {
  std::size_t runs = 0;
  std::size_t item = 0;
  constexpr std::size_t kForms = 9;
  std::array<bool, kForms> form_run{};
  for (const CatalogueEntry* e : fixed_codes()) {
    const std::string file = file_with(e->code);
    const std::string code = code_string(e->code);
    const std::string name(e->name);
    const std::vector<std::vector<std::string>> forms = {
        {"--disable", code},
        {"--disable", name},
        {"--disable", code.substr(4)},
        {"--severity", code + "=off"},
        {"--severity", name + "=off"},
        {"--severity", code + "=note"},
        {"--severity", code + "=warning"},
        {"--severity", name + "=warning"},
        {"--enable", code, "--disable", code},
    };
    ASSERT_EQ(forms.size(), kForms);
    // The example of a code that needs the data check (GGUF0003's) is run with --data.
    const bool data = e->code != Code::UnreadableFile && code_example(e->code).data;
    const std::size_t code_index = item++;
    for (std::size_t p = 0; p < std::size(kAllProfiles); ++p) {
      const Profile profile = kAllProfiles[p];
      // Every code and every form in every build; each code in every profile and every form in
      // the dev run, in one profile (each in turn) under ASan (kCommandRunStride).
      if (kCommandRunStride > 1 && p != code_index % std::size(kAllProfiles)) continue;
      // Without an override the file fails in this profile, and shows the code.
      std::vector<std::string> plain_args = {"--profile", std::string(to_string(profile)),
                                             "--format", "json", file};
      if (data) plain_args.insert(plain_args.begin(), "--data");
      const CapturedRun plain = run_cli_captured(plain_args);
      EXPECT_NE(plain.status, 0) << code << " " << to_string(profile) << "\n" << plain;
      EXPECT_NE(plain.out.find("\"" + code + "\""), std::string::npos) << plain;
      for (std::size_t f = 0; f < forms.size(); ++f) {
        // Under ASan every kCommandRunStride-th form, starting from each code's own (every form
        // is still run, for other codes).
        if (f % kCommandRunStride != code_index % kCommandRunStride) continue;
        const std::vector<std::string>& form = forms[f];
        form_run.at(f) = true;
        std::vector<std::string> args = {"--profile", std::string(to_string(profile))};
        if (data) args.push_back("--data");
        args.insert(args.end(), form.begin(), form.end());
        args.push_back(file);
        const CapturedRun run = run_cli_captured(args);
        ++runs;
        EXPECT_EQ(run.status, 3) << code << " " << form[0] << " " << form[1] << "\n" << run;
        EXPECT_NE(run.err.find("cannot be"), std::string::npos) << run;
        EXPECT_NE(run.err.find("cannot be read as GGUF"), std::string::npos) << run;
      }
    }
  }
  EXPECT_TRUE(std::all_of(form_run.begin(), form_run.end(), [](bool run) { return run; }));
  if (kCommandRunStride == 1) {
    EXPECT_EQ(runs, fixed_codes().size() * 3 * kForms);
  }
}

// A fixed code raised to error stays accepted (it is one already), and other codes still take
// every override.
TEST_F(OverrideMatrix, ErrorLevelAndOtherCodesStayAccepted) {
  const std::string truncated = file_with(Code::TruncatedTensorInfo);
  EXPECT_EQ(run_cli_captured({"--severity", "GGUF3001=error", truncated}).status, 1);
  const std::string duplicate = file_with(Code::DuplicateKey);
  EXPECT_EQ(run_cli_captured({"--no-model-checks", "--disable", "duplicate-key", duplicate}).status,
            0);
}

// A caller of the C++ library that writes the override into Options directly gets the
// catalogue's severity: the finding stays an error and the file fails.
TEST_F(OverrideMatrix, TheLibraryIgnoresAnOverrideOfAFixedCode) {
  for (const CatalogueEntry* e : fixed_codes()) {
    if (e->code == Code::UnreadableFile) continue;
    const Written written = example(e->code);
    for (const Profile profile : kAllProfiles) {
      for (const Severity s : {Severity::Silent, Severity::Note, Severity::Warning}) {
        Options options;
        options.profile = profile;
        options.data.enabled = code_example(e->code).data;
        options.severity_overrides[e->code] = s;
        EXPECT_EQ(options.severity(e->code), Severity::Error);
        const Report report = validate(written.bytes, options);
        EXPECT_NE(report.exit_status(), 0) << code_string(e->code);
        EXPECT_TRUE(std::any_of(
            report.findings.begin(), report.findings.end(),
            [&](const Finding& f) { return f.code == e->code && f.severity == Severity::Error; }))
            << code_string(e->code) << " " << to_string(profile);
      }
    }
  }
  Options options;
  options.severity_overrides[Code::UnreadableFile] = Severity::Silent;
  const Report missing = validate_file((dir_ / "no-such-model.gguf").string(), options);
  EXPECT_EQ(missing.exit_status(), 2);
}

#ifdef GGUFCHECK_TEST_C_INTERFACE
// The C interface refuses the override and leaves the options as they were: the file still
// fails.
TEST_F(OverrideMatrix, TheCInterfaceRefusesEveryOverrideOfAFixedCode) {
  for (const CatalogueEntry* e : fixed_codes()) {
    const std::string file = file_with(e->code);
    const std::string code = code_string(e->code);
    for (const char* level : {"off", "note", "warning"}) {
      for (const std::string& what : {code, std::string(e->name)}) {
        ggufcheck_options* options = ggufcheck_options_new();
        ASSERT_NE(options, nullptr);
        EXPECT_EQ(ggufcheck_options_set_severity(options, what.c_str(), level),
                  GGUFCHECK_ERROR_INVALID_ARGUMENT)
            << code << "=" << level;
        EXPECT_NE(std::string(ggufcheck_last_error()).find("cannot be read as GGUF"),
                  std::string::npos);
        ggufcheck_report* report = nullptr;
        ggufcheck_validate_path(file.c_str(), options, &report);
        ASSERT_NE(report, nullptr) << code;
        EXPECT_NE(ggufcheck_report_exit_status(report), 0) << code << "=" << level;
        ggufcheck_report_free(report);
        ggufcheck_options_free(options);
      }
    }
    ggufcheck_options* options = ggufcheck_options_new();
    EXPECT_EQ(ggufcheck_options_set_severity(options, code.c_str(), "error"), GGUFCHECK_OK);
    ggufcheck_options_free(options);
  }
}

#endif

}  // namespace
}  // namespace ggufcheck::testing

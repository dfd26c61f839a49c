// The C interface (ggufcheck.h) over the C++ library: opaque handles, no exception crosses it,
// and every failure leaves a message for ggufcheck_last_error().
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck.h"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/version.hpp"

struct ggufcheck_options {
  ggufcheck::Options options;
};

struct ggufcheck_report {
  ggufcheck::Report report;
  ggufcheck::Options options;      // for the JSON, which records them
  std::vector<std::string> codes;  // NUL-terminated copies the findings point at
  std::vector<std::string> names;
  mutable std::string json;  // rendered on first request
};

namespace {

// The last error of this thread: storage of the thread's own, never reallocated, so the pointer
// ggufcheck_last_error() returns stays valid for the thread's life (ggufcheck.h). A message
// longer than the buffer is cut at a character boundary and ends with "...".
constexpr std::size_t kLastErrorCapacity = 1024;
thread_local char t_last_error[kLastErrorCapacity] = "";

void set_last_error(std::string_view message) noexcept {
  std::size_t n = message.size();
  std::string_view ellipsis;
  if (n >= kLastErrorCapacity) {
    ellipsis = "...";
    n = kLastErrorCapacity - 1 - ellipsis.size();
    // Not inside a UTF-8 sequence: back to the start of the character at n.
    while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80) --n;
  }
  if (n > 0) std::memcpy(t_last_error, message.data(), n);
  if (!ellipsis.empty()) std::memcpy(t_last_error + n, ellipsis.data(), ellipsis.size());
  t_last_error[n + ellipsis.size()] = '\0';
}

int fail(int status, const std::string& message) {
  set_last_error(message);
  return status;
}

// The largest thread count accepted: the CLI's --jobs and Python's threads= take 0..1024.
constexpr unsigned kMaxThreads = 1024;

// Runs body, turning exceptions into statuses: nothing may unwind into C.
template <typename Body>
int guarded(Body&& body) noexcept {
  try {
    set_last_error("");
    return body();
  } catch (const std::bad_alloc&) {
    return fail(GGUFCHECK_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(GGUFCHECK_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(GGUFCHECK_ERROR_INTERNAL, "internal error");
  }
}

const ggufcheck::Options& options_or_default(const ggufcheck_options* options) {
  static const ggufcheck::Options kDefaults;
  return options != nullptr ? options->options : kDefaults;
}

int make_report(ggufcheck::Report report, const ggufcheck_options* options,
                ggufcheck_report** out) {
  auto* made = new ggufcheck_report{std::move(report), options_or_default(options), {}, {}, {}};
  made->codes.reserve(made->report.findings.size());
  made->names.reserve(made->report.findings.size());
  for (const ggufcheck::Finding& f : made->report.findings) {
    made->codes.emplace_back(ggufcheck::code_string(f.code));
    made->names.emplace_back(ggufcheck::catalogue_entry(f.code).name);
  }
  *out = made;
  return GGUFCHECK_OK;
}

ggufcheck_severity c_severity(ggufcheck::Severity severity) {
  switch (severity) {
    case ggufcheck::Severity::Error: return GGUFCHECK_SEVERITY_ERROR;
    case ggufcheck::Severity::Warning: return GGUFCHECK_SEVERITY_WARNING;
    default: return GGUFCHECK_SEVERITY_NOTE;
  }
}

}  // namespace

extern "C" {

const char* ggufcheck_version(void) {
  static const std::string text = ggufcheck::version_text();
  return text.c_str();
}

int ggufcheck_abi_version(void) {
  return GGUFCHECK_C_ABI_VERSION;
}

const char* ggufcheck_last_error(void) {
  return t_last_error;
}

ggufcheck_options* ggufcheck_options_new(void) {
  ggufcheck_options* made = nullptr;
  guarded([&] {
    made = new ggufcheck_options{};
    return GGUFCHECK_OK;
  });
  return made;
}

void ggufcheck_options_free(ggufcheck_options* options) {
  delete options;
}

int ggufcheck_options_set_profile(ggufcheck_options* options, ggufcheck_profile profile) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    // A C caller may pass any int: read it as one, since an enumerator outside the enum's range
    // is undefined behaviour in C++ once loaded as the enum type.
    static_assert(sizeof(profile) == sizeof(int));
    int value = 0;
    std::memcpy(&value, &profile, sizeof value);
    switch (value) {
      case GGUFCHECK_PROFILE_STRICT: options->options.profile = ggufcheck::Profile::Strict; break;
      case GGUFCHECK_PROFILE_SPEC: options->options.profile = ggufcheck::Profile::Spec; break;
      case GGUFCHECK_PROFILE_LLAMA_CPP:
        options->options.profile = ggufcheck::Profile::LlamaCpp;
        break;
      default:
        return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "unknown profile " + std::to_string(value));
    }
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_data(ggufcheck_options* options, int enabled, unsigned threads) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    if (threads > kMaxThreads) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT,
                  "threads " + std::to_string(threads) + " is not a number of threads (0..1024)");
    }
    options->options.data.enabled = enabled != 0;
    options->options.data.threads = threads;
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_werror(ggufcheck_options* options, int enabled) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    options->options.werror = enabled != 0;
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_model_checks(ggufcheck_options* options, int enabled) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    options->options.model_checks = enabled != 0;
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_template_checks(ggufcheck_options* options, int enabled) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    options->options.template_checks = enabled != 0;
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_base(ggufcheck_options* options, const char* path) {
  return guarded([&] {
    if (options == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options is NULL");
    options->options.base_model = path != nullptr ? path : "";
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_severity(ggufcheck_options* options, const char* code_or_name,
                                   const char* level) {
  return guarded([&] {
    if (options == nullptr || code_or_name == nullptr || level == nullptr) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options, code_or_name or level is NULL");
    }
    const auto code = ggufcheck::find_code(code_or_name);
    if (!code) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT,
                  std::string("unknown diagnostic '") + code_or_name + "'");
    }
    const auto severity = ggufcheck::parse_severity(level);
    if (!severity) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT,
                  std::string("level '") + level + "' is not error, warning, note or off");
    }
    if (const auto why = ggufcheck::refuse_override(*code, *severity)) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, *why);
    }
    options->options.severity_overrides[*code] = *severity;
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_options_set_limit(ggufcheck_options* options, const char* name, uint64_t value) {
  return guarded([&] {
    if (options == nullptr || name == nullptr) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "options or name is NULL");
    }
    if (const auto problem = ggufcheck::set_limit(options->options.limits, name, value)) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, *problem);
    }
    return static_cast<int>(GGUFCHECK_OK);
  });
}

int ggufcheck_validate_path(const char* path, const ggufcheck_options* options,
                            ggufcheck_report** report) {
  if (report != nullptr) *report = nullptr;
  return guarded([&] {
    if (path == nullptr || report == nullptr) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "path or report is NULL");
    }
    return make_report(ggufcheck::validate_file(path, options_or_default(options)), options,
                       report);
  });
}

int ggufcheck_validate_buffer(const void* data, size_t size, const char* name,
                              const ggufcheck_options* options, ggufcheck_report** report) {
  if (report != nullptr) *report = nullptr;
  return guarded([&] {
    if (report == nullptr || (data == nullptr && size != 0)) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "report is NULL, or data is NULL with a size");
    }
    static const std::uint8_t kNothing = 0;
    const auto* bytes = data != nullptr ? static_cast<const std::uint8_t*>(data) : &kNothing;
    return make_report(
        ggufcheck::validate(ggufcheck::Bytes(bytes, size), options_or_default(options),
                            name != nullptr ? name : "<buffer>"),
        options, report);
  });
}

void ggufcheck_report_free(ggufcheck_report* report) {
  delete report;
}

int ggufcheck_report_exit_status(const ggufcheck_report* report) {
  if (report == nullptr) return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "report is NULL");
  return report->report.exit_status();
}

size_t ggufcheck_report_error_count(const ggufcheck_report* report) {
  return report != nullptr ? report->report.errors : 0;
}

size_t ggufcheck_report_warning_count(const ggufcheck_report* report) {
  return report != nullptr ? report->report.warnings : 0;
}

size_t ggufcheck_report_note_count(const ggufcheck_report* report) {
  return report != nullptr ? report->report.notes : 0;
}

size_t ggufcheck_report_finding_count(const ggufcheck_report* report) {
  return report != nullptr ? report->report.findings.size() : 0;
}

int ggufcheck_report_finding(const ggufcheck_report* report, size_t index,
                             ggufcheck_finding* finding) {
  return guarded([&] {
    if (report == nullptr || finding == nullptr) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "report or finding is NULL");
    }
    if (index >= report->report.findings.size()) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT,
                  "index " + std::to_string(index) + " is past the " +
                      std::to_string(report->report.findings.size()) + " findings");
    }
    const std::size_t known = finding->struct_size;
    if (known < offsetof(ggufcheck_finding, code) + sizeof(finding->code)) {
      return fail(GGUFCHECK_ERROR_INVALID_ARGUMENT,
                  "finding->struct_size must be sizeof(ggufcheck_finding)");
    }
    const ggufcheck::Finding& f = report->report.findings[index];
    ggufcheck_finding full{};
    full.struct_size = std::min(known, sizeof(ggufcheck_finding));
    full.code = report->codes[index].c_str();
    full.name = report->names[index].c_str();
    full.severity = c_severity(f.severity);
    full.offset = f.offset;
    full.length = f.length;
    full.path = f.path.c_str();
    full.message = f.message.c_str();
    full.hint = f.hint.c_str();
    // Only what the caller's struct has room for.
    std::memcpy(finding, &full, full.struct_size);
    return static_cast<int>(GGUFCHECK_OK);
  });
}

const char* ggufcheck_report_json(const ggufcheck_report* report) {
  if (report == nullptr) {
    fail(GGUFCHECK_ERROR_INVALID_ARGUMENT, "report is NULL");
    return nullptr;
  }
  const int status = guarded([&] {
    if (report->json.empty()) {
      report->json = ggufcheck::render_json(std::span(&report->report, 1), report->options,
                                            report->report.exit_status());
    }
    return static_cast<int>(GGUFCHECK_OK);
  });
  return status == GGUFCHECK_OK ? report->json.c_str() : nullptr;
}

}  // extern "C"

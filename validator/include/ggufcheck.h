/* ggufcheck's C interface: validate a GGUF file or buffer and read the findings, from C or any
 * language with a C foreign-function interface (Python's ctypes, Rust, Go, ...).
 *
 * libggufcheck.so exports these functions and nothing else (docs/c-api.md). The ABI is stable
 * within a major version of GGUFCHECK_C_ABI_VERSION: functions are only added, struct
 * ggufcheck_finding only grows at its end (a caller says how much of it it knows in
 * struct_size), and the enumerators keep their values.
 *
 * Memory: every object a function returns is owned by the caller and freed with the matching
 * _free function (NULL is accepted by each). Strings a report hands out live as long as the
 * report. Thread safety: distinct objects may be used from distinct threads at once; one object
 * from several threads needs the caller's lock. No function keeps a pointer it was given. */
#ifndef GGUFCHECK_H
#define GGUFCHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define GGUFCHECK_API __attribute__((visibility("default")))
#else
#define GGUFCHECK_API
#endif

/* Raised when a function is added (minor) or the ABI breaks (major * 1000). */
#define GGUFCHECK_C_ABI_VERSION 1

/* What a function returns: 0 on success, a negative status otherwise; ggufcheck_last_error()
 * then says why. A file that cannot be read is not a failure of the call: its report says so
 * (exit status 2, one GGUF0001 finding). */
typedef enum ggufcheck_status {
  GGUFCHECK_OK = 0,
  GGUFCHECK_ERROR_INVALID_ARGUMENT = -1, /* a NULL where an object is needed, an unknown name */
  GGUFCHECK_ERROR_OUT_OF_MEMORY = -2,
  GGUFCHECK_ERROR_INTERNAL = -3 /* a bug: please report it with the input */
} ggufcheck_status;

typedef enum ggufcheck_profile {
  GGUFCHECK_PROFILE_STRICT = 0,   /* the CI gate (the default) */
  GGUFCHECK_PROFILE_SPEC = 1,     /* what the GGUF specification requires */
  GGUFCHECK_PROFILE_LLAMA_CPP = 2 /* errors exactly where llama.cpp fails to load */
} ggufcheck_profile;

typedef enum ggufcheck_severity {
  GGUFCHECK_SEVERITY_NOTE = 1,
  GGUFCHECK_SEVERITY_WARNING = 2,
  GGUFCHECK_SEVERITY_ERROR = 3
} ggufcheck_severity;

typedef struct ggufcheck_options ggufcheck_options; /* opaque */
typedef struct ggufcheck_report ggufcheck_report;   /* opaque */

/* One finding. Set struct_size to sizeof(ggufcheck_finding) before ggufcheck_report_finding:
 * the library fills only the fields that fit, so a caller built against an older header keeps
 * working. The strings are NUL-terminated, valid UTF-8 with untrusted bytes escaped, and live
 * as long as the report. */
typedef struct ggufcheck_finding {
  size_t struct_size;
  const char* code; /* "GGUF2012" */
  const char* name; /* "non-canonical-bool" */
  ggufcheck_severity severity;
  uint64_t offset;     /* byte offset in the file */
  uint64_t length;     /* bytes the finding covers */
  const char* path;    /* field path: kv[15] "tokenizer.ggml.add_bos_token" */
  const char* message; /* lower case, no final period */
  const char* hint;    /* how to fix the writer; "" when there is none */
} ggufcheck_finding;

/* The version, the git commit and the pinned llama.cpp: the two lines of `ggufcheck --version`
 * (static storage). */
GGUFCHECK_API const char* ggufcheck_version(void);
/* GGUFCHECK_C_ABI_VERSION of the library (compare with the header's at run time). */
GGUFCHECK_API int ggufcheck_abi_version(void);
/* Why the last call on this thread failed ("" after a success): NUL-terminated, at most 1023
 * bytes (a longer message is cut and ends with "...").
 * Lifetime: the pointer is the same on every call from one thread and stays valid until that
 * thread ends, but its text is replaced by the next call on the same thread of any other
 * ggufcheck_ function (ggufcheck_version, ggufcheck_abi_version and the _free functions
 * excepted): copy the text to keep it. Another thread's calls never change it. */
GGUFCHECK_API const char* ggufcheck_last_error(void);

/* Options: NULL everywhere means the defaults (strict profile, no data check, model and
 * template checks on, the CLI's default limits). */
GGUFCHECK_API ggufcheck_options* ggufcheck_options_new(void);
GGUFCHECK_API void ggufcheck_options_free(ggufcheck_options* options);
GGUFCHECK_API int ggufcheck_options_set_profile(ggufcheck_options* options,
                                                ggufcheck_profile profile);
/* Also read every tensor's bytes (check --data). threads: 0 one per core, at most 1024 (as the
 * CLI's --jobs): a larger count fails with GGUFCHECK_ERROR_INVALID_ARGUMENT and leaves the
 * options as they were. */
GGUFCHECK_API int ggufcheck_options_set_data(ggufcheck_options* options, int enabled,
                                             unsigned threads);
GGUFCHECK_API int ggufcheck_options_set_werror(ggufcheck_options* options, int enabled);
GGUFCHECK_API int ggufcheck_options_set_model_checks(ggufcheck_options* options, int enabled);
GGUFCHECK_API int ggufcheck_options_set_template_checks(ggufcheck_options* options, int enabled);
/* A LoRA adapter's base model, as --base MODEL: the path of a local GGUF file (NULL or "" for
 * none). Adapters are then checked against it as llama_adapter_lora_init loads them. */
GGUFCHECK_API int ggufcheck_options_set_base(ggufcheck_options* options, const char* path);
/* A diagnostic's severity, as --severity CODE=LEVEL: code_or_name "GGUF2012" or
 * "non-canonical-bool", level "error", "warning", "note" or "off". A code that means the file
 * cannot be read as GGUF ("fixed" in `ggufcheck list`: GGUF0001, GGUF1002, truncations...)
 * cannot be made anything but an error: GGUFCHECK_ERROR_INVALID_ARGUMENT, options unchanged. */
GGUFCHECK_API int ggufcheck_options_set_severity(ggufcheck_options* options,
                                                 const char* code_or_name, const char* level);
/* A resource limit, as --limit NAME=VALUE: depth, kv-count, tensor-count, string-length,
 * array-length, findings, template-bytes. */
GGUFCHECK_API int ggufcheck_options_set_limit(ggufcheck_options* options, const char* name,
                                              uint64_t value);

/* Validates the file at path (a local file; with a build that reads URLs, https:// and hf://
 * too). On success *report is a new report, which the caller frees. */
GGUFCHECK_API int ggufcheck_validate_path(const char* path, const ggufcheck_options* options,
                                          ggufcheck_report** report);
/* Validates size bytes at data (not copied; not kept after the call). name is what the report
 * calls the input (NULL: "<buffer>"). data may be NULL only when size is 0. */
GGUFCHECK_API int ggufcheck_validate_buffer(const void* data, size_t size, const char* name,
                                            const ggufcheck_options* options,
                                            ggufcheck_report** report);
GGUFCHECK_API void ggufcheck_report_free(ggufcheck_report* report);

/* 0 no error, 1 errors found, 2 the input could not be read: as the CLI's exit status. */
GGUFCHECK_API int ggufcheck_report_exit_status(const ggufcheck_report* report);
GGUFCHECK_API size_t ggufcheck_report_error_count(const ggufcheck_report* report);
GGUFCHECK_API size_t ggufcheck_report_warning_count(const ggufcheck_report* report);
GGUFCHECK_API size_t ggufcheck_report_note_count(const ggufcheck_report* report);
/* The findings kept (at most the findings limit; the others are counted in the totals). */
GGUFCHECK_API size_t ggufcheck_report_finding_count(const ggufcheck_report* report);
GGUFCHECK_API int ggufcheck_report_finding(const ggufcheck_report* report, size_t index,
                                           ggufcheck_finding* finding);
/* The report as `ggufcheck --format json` writes it (docs/json-output.md), NUL-terminated,
 * owned by the report. */
GGUFCHECK_API const char* ggufcheck_report_json(const ggufcheck_report* report);

#ifdef __cplusplus
}
#endif

#endif /* GGUFCHECK_H */

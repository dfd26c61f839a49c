/* The C interface (ggufcheck.h) from C, linked against libggufcheck.so: validate a path and a
 * buffer with options, read every finding, the JSON, the errors of bad arguments, and an older
 * caller's smaller struct. Usage: test_capi EXAMPLES_DIR (the repository's examples/). Prints
 * each failed check and exits 1 if any failed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggufcheck.h"

static int failures = 0;

#define CHECK(condition)                                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                   \
    }                                                                               \
  } while (0)

static char* read_file(const char* path, size_t* size) {
  FILE* file = fopen(path, "rb");
  if (file == NULL) return NULL;
  char* bytes = NULL;
  if (fseek(file, 0, SEEK_END) == 0) {
    const long end = ftell(file);
    if (end >= 0 && fseek(file, 0, SEEK_SET) == 0) {
      bytes = malloc((size_t)end + 1);
      if (bytes != NULL && fread(bytes, 1, (size_t)end, file) != (size_t)end) {
        free(bytes);
        bytes = NULL;
      }
      *size = (size_t)end;
    }
  }
  fclose(file);
  return bytes;
}

/* Whether a report's findings include code, each finding read whole. */
static int has_code(const ggufcheck_report* report, const char* code) {
  int found = 0;
  for (size_t i = 0; i < ggufcheck_report_finding_count(report); ++i) {
    ggufcheck_finding f;
    memset(&f, 0xAB, sizeof f); /* garbage: the library must fill every field */
    f.struct_size = sizeof f;
    CHECK(ggufcheck_report_finding(report, i, &f) == GGUFCHECK_OK);
    CHECK(f.struct_size == sizeof f);
    CHECK(strncmp(f.code, "GGUF", 4) == 0 && strlen(f.code) == 8);
    CHECK(f.name != NULL && strlen(f.name) > 0);
    CHECK(f.severity >= GGUFCHECK_SEVERITY_NOTE && f.severity <= GGUFCHECK_SEVERITY_ERROR);
    CHECK(f.path != NULL && f.message != NULL && f.hint != NULL);
    if (strcmp(f.code, code) == 0) found = 1;
  }
  return found;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_capi EXAMPLES_DIR\n");
    return 2;
  }
  char valid[4096], broken[4096];
  snprintf(valid, sizeof valid, "%s/valid/tiny-llama.gguf", argv[1]);
  snprintf(broken, sizeof broken, "%s/broken/three-problems.gguf", argv[1]);

  CHECK(ggufcheck_abi_version() == GGUFCHECK_C_ABI_VERSION);
  CHECK(strncmp(ggufcheck_version(), "ggufcheck ", 10) == 0);
  CHECK(strstr(ggufcheck_version(), "llama.cpp") != NULL);

  /* A valid file with the defaults (NULL options): no finding, exit status 0. */
  ggufcheck_report* report = NULL;
  CHECK(ggufcheck_validate_path(valid, NULL, &report) == GGUFCHECK_OK);
  CHECK(report != NULL);
  CHECK(ggufcheck_report_exit_status(report) == 0);
  CHECK(ggufcheck_report_error_count(report) == 0);
  CHECK(ggufcheck_report_finding_count(report) == 0);
  const char* json = ggufcheck_report_json(report);
  CHECK(json != NULL && strstr(json, "\"status\": \"pass\"") != NULL);
  ggufcheck_report_free(report);

  /* A broken file: its three errors, by code. */
  CHECK(ggufcheck_validate_path(broken, NULL, &report) == GGUFCHECK_OK);
  CHECK(ggufcheck_report_exit_status(report) == 1);
  CHECK(ggufcheck_report_error_count(report) >= 3);
  CHECK(has_code(report, "GGUF2012"));
  CHECK(has_code(report, "GGUF2004"));
  CHECK(!has_code(report, "GGUF1001"));
  /* Past the end: an error with a message, the struct untouched. */
  ggufcheck_finding beyond;
  memset(&beyond, 0, sizeof beyond);
  beyond.struct_size = sizeof beyond;
  CHECK(ggufcheck_report_finding(report, 1000000, &beyond) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(ggufcheck_last_error(), "past the") != NULL);
  CHECK(beyond.code == NULL);
  /* A caller built against a header whose struct ended after `name`: nothing written beyond. */
  struct {
    ggufcheck_finding head;
    unsigned char guard[64];
  } old_caller;
  memset(&old_caller, 0x5A, sizeof old_caller);
  const size_t old_size = offsetof(ggufcheck_finding, name) + sizeof(const char*);
  old_caller.head.struct_size = old_size;
  CHECK(ggufcheck_report_finding(report, 0, &old_caller.head) == GGUFCHECK_OK);
  CHECK(old_caller.head.struct_size == old_size);
  CHECK(((unsigned char*)&old_caller)[old_size] == 0x5A);
  CHECK(old_caller.guard[0] == 0x5A && old_caller.guard[63] == 0x5A);
  ggufcheck_report_free(report);

  /* Options: silencing one code and demoting another changes the findings. */
  ggufcheck_options* options = ggufcheck_options_new();
  CHECK(options != NULL);
  CHECK(ggufcheck_options_set_severity(options, "non-canonical-bool", "off") == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_severity(options, "GGUF2004", "note") == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_profile(options, GGUFCHECK_PROFILE_SPEC) == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_limit(options, "findings", 100) == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_data(options, 1, 1) == GGUFCHECK_OK);
  CHECK(ggufcheck_validate_path(broken, options, &report) == GGUFCHECK_OK);
  CHECK(!has_code(report, "GGUF2012"));
  CHECK(has_code(report, "GGUF2004"));
  CHECK(ggufcheck_report_note_count(report) >= 1);
  json = ggufcheck_report_json(report);
  CHECK(json != NULL && strstr(json, "\"profile\": \"spec\"") != NULL);
  CHECK(strstr(json, "\"GGUF2012\": \"off\"") != NULL);
  ggufcheck_report_free(report);

  /* Bad arguments: a status and a reason, never a crash. */
  CHECK(ggufcheck_options_set_severity(options, "GGUF0000x", "off") ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(ggufcheck_last_error(), "unknown diagnostic") != NULL);
  CHECK(ggufcheck_options_set_severity(options, "GGUF2012", "loud") ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_options_set_limit(options, "depth", 0) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_options_set_limit(options, "speed", 1) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_options_set_profile(options, (ggufcheck_profile)7) ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_options_set_profile(NULL, GGUFCHECK_PROFILE_SPEC) ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_validate_path(NULL, NULL, &report) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(report == NULL);
  CHECK(ggufcheck_validate_path(valid, NULL, NULL) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_validate_buffer(NULL, 5, NULL, NULL, &report) ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_report_exit_status(NULL) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_report_json(NULL) == NULL);
  /* A success clears the last error. */
  CHECK(ggufcheck_options_set_werror(options, 0) == GGUFCHECK_OK);
  CHECK(strcmp(ggufcheck_last_error(), "") == 0);
  ggufcheck_options_free(options);
  ggufcheck_options_free(NULL);
  ggufcheck_report_free(NULL);

  /* An unreadable path is a report (exit 2, GGUF0001), not a failed call. */
  CHECK(ggufcheck_validate_path("/nonexistent/model.gguf", NULL, &report) == GGUFCHECK_OK);
  CHECK(ggufcheck_report_exit_status(report) == 2);
  CHECK(has_code(report, "GGUF0001"));
  ggufcheck_report_free(report);

  /* A buffer: the same verdict as the file, under the name given; an empty one fails. */
  size_t size = 0;
  char* bytes = read_file(broken, &size);
  CHECK(bytes != NULL);
  if (bytes != NULL) {
    CHECK(ggufcheck_validate_buffer(bytes, size, "in-memory.gguf", NULL, &report) == GGUFCHECK_OK);
    CHECK(ggufcheck_report_exit_status(report) == 1);
    CHECK(has_code(report, "GGUF2012"));
    json = ggufcheck_report_json(report);
    CHECK(json != NULL && strstr(json, "\"path\": \"in-memory.gguf\"") != NULL);
    ggufcheck_report_free(report);
    free(bytes);
  }
  CHECK(ggufcheck_validate_buffer(NULL, 0, NULL, NULL, &report) == GGUFCHECK_OK);
  CHECK(ggufcheck_report_exit_status(report) == 1);
  CHECK(has_code(report, "GGUF1001"));
  ggufcheck_report_free(report);

  /* Thread counts: the CLI's range (0..1024); outside it the call fails and the options stay
   * as they were (no data check, as before the call). */
  options = ggufcheck_options_new();
  CHECK(ggufcheck_options_set_data(options, 1, 1024) == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_data(options, 0, 0) == GGUFCHECK_OK);
  CHECK(ggufcheck_options_set_data(options, 1, 1025) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(ggufcheck_last_error(), "1025") != NULL);
  CHECK(strstr(ggufcheck_last_error(), "0..1024") != NULL);
  CHECK(ggufcheck_options_set_data(options, 1, 100000) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_options_set_data(options, 1, 4294967295u) == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_validate_path(valid, options, &report) == GGUFCHECK_OK);
  CHECK(ggufcheck_report_exit_status(report) == 0);
  json = ggufcheck_report_json(report);
  CHECK(json != NULL && strstr(json, "\"data\": false") != NULL);
  ggufcheck_report_free(report);

  /* ggufcheck_last_error's lifetime (ggufcheck.h): one pointer per thread, valid for the
   * thread's life; the text is the last call's. A longer message than the one before it must
   * not move it (a reallocated string would), and one past the buffer is cut, still valid. */
  char long_name[600], longer_name[900], huge_name[5000];
  memset(long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  memset(longer_name, 'b', sizeof longer_name - 1);
  longer_name[sizeof longer_name - 1] = '\0';
  memset(huge_name, 'c', sizeof huge_name - 1);
  huge_name[sizeof huge_name - 1] = '\0';
  CHECK(ggufcheck_options_set_severity(options, long_name, "off") ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  const char* first_error = ggufcheck_last_error();
  CHECK(strstr(first_error, long_name) != NULL);
  CHECK(ggufcheck_last_error() == first_error); /* asking again changes nothing */
  CHECK(strstr(ggufcheck_version(), "ggufcheck") != NULL);
  CHECK(strstr(first_error, long_name) != NULL); /* nor does the version */
  CHECK(ggufcheck_options_set_severity(options, longer_name, "off") ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_last_error() == first_error);
  CHECK(strstr(first_error, longer_name) != NULL); /* the same place, the new text */
  CHECK(ggufcheck_options_set_severity(options, huge_name, "off") ==
        GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(ggufcheck_last_error() == first_error);
  CHECK(strlen(first_error) == 1023);
  CHECK(strncmp(first_error, "unknown diagnostic 'ccc", 23) == 0);
  CHECK(strcmp(first_error + 1020, "...") == 0);
  /* Cut at a character boundary: 3-byte characters after the 20 bytes of
   * "unknown diagnostic '" would be cut inside one at byte 1020. */
  static char euros[3 * 1000 + 1];
  for (size_t i = 0; i < 1000; ++i) memcpy(euros + 3 * i, "\xE2\x82\xAC", 3);
  euros[sizeof euros - 1] = '\0';
  CHECK(ggufcheck_options_set_severity(options, euros, "off") == GGUFCHECK_ERROR_INVALID_ARGUMENT);
  CHECK(strlen(first_error) == 1022);
  CHECK(strcmp(first_error + 1019, "...") == 0);
  CHECK(memcmp(first_error + 1016, "\xE2\x82\xAC", 3) == 0);
  CHECK(ggufcheck_options_set_werror(options, 1) == GGUFCHECK_OK);
  CHECK(ggufcheck_last_error() == first_error && first_error[0] == '\0');
  ggufcheck_options_free(options);

  if (failures != 0) {
    fprintf(stderr, "test_capi: %d checks failed\n", failures);
    return 1;
  }
  printf("test_capi: every check passed\n");
  return 0;
}

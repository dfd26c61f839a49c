// What the fuzz targets check, as plain functions that a test can call too: each returns the
// broken invariant, or an empty string, and never touches anything outside the bytes given.
#pragma once

#include <cstdint>
#include <string>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck::fuzz {

// Set by the replaying main (replay_main.cpp: ctest, fuzz/coverage): check_pipeline checks each
// input under every option set. Under a fuzzing engine it is false: each input gets one option
// set, and one input in four is rendered and dumped, chosen by its bytes.
extern bool every_run;

// The whole pipeline, as the CLI runs it, under every profile (and once more with --werror and
// tiny limits), rendered as text, JSON and SARIF. The invariants of every report: findings
// sorted by offset and inside the file, each at the severity its options give it, counts and
// exit status consistent with the findings, messages free of raw untrusted bytes, JSON and
// SARIF that parse and say the same as the report, `dump` at every level consistent with it.
[[nodiscard]] std::string check_pipeline(Bytes bytes);

// The invariants of one report of a file of `size` bytes (check_pipeline checks them on every
// report): findings sorted by offset and inside the file, at the severity the options give them,
// never silent or "unreadable", with printable messages; no more than the limit, the dropped
// ones counted; counts, exit status and facts consistent. Also for a report of validate_file or
// validate_set, whose file was readable.
[[nodiscard]] std::string check_report(const Report& report, const Options& options,
                                       std::uint64_t size);

// Whatever read_document accepts, the writer writes back, the reader reads to an equal
// document, and writing that again gives the same bytes.
[[nodiscard]] std::string check_roundtrip(Bytes bytes);

// Prints the broken invariant and aborts (so that the fuzzing engine records the input).
void fail_if(const std::string& problem, Bytes bytes);

}  // namespace ggufcheck::fuzz

#!/usr/bin/env bash
# Quick start, part two: install what is missing, build, and run the whole test suite.
# Usage: scripts/test.sh [dev|asan|release|fuzz|cflite|builds|differential]   (default dev)
#   differential: the full model differential (every mutant of every architecture's base model
#   against llama.cpp's model loader; ctest runs a sample of it), then the full mmproj
#   differential (every mutant of every followed projector type against mtmd), in the dev build,
#   with their times.
#   builds: the release preset (g++ -O3) with warnings as errors, without the test programs (the
#   dev and asan stages run every test); the samples through the -O3 command; then the Debian
#   package (scripts/package.sh checks what it holds). clang 14's
#   warnings are errors in the asan preset (the whole tree but the benchmark) and the fuzz preset.
#   fuzz: the fuzz preset's targets for GGUFCHECK_FUZZ_SECONDS (default 60) each, then the
#   ClusterFuzzLite build (each target fuzzed 10 s more).
#   cflite: the ClusterFuzzLite build as OSS-Fuzz makes it, every target replayed on its seed
#   corpus and fuzzed GGUFCHECK_FUZZ_SECONDS (default 60), two at a time (CI's fuzz stage: one
#   build of the targets instead of two).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
# The property tests (RapidCheck) hold for any seed: each run draws a fresh one unless RC_PARAMS
# says otherwise, and prints it, so that a failure can be reproduced with RC_PARAMS="seed=N".
if [[ -z ${RC_PARAMS:-} ]]; then
  RC_PARAMS="seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"
fi
export RC_PARAMS
echo "test.sh: property tests with RC_PARAMS=\"$RC_PARAMS\" (rerun with the same to reproduce)"
bash scripts/setup.sh
if [[ $preset == differential ]]; then
  # validator/tests/test_model_differential.cpp with GGUFCHECK_MODEL_DIFF_FULL=1; the dev build
  # is made (or brought up to date) first.
  cmake --preset dev >/dev/null
  cmake --build --preset dev --target ggufcheck ggufcheck_model_differential_tests \
    ggufcheck_mmproj_differential_tests
  started=$SECONDS
  GGUFCHECK_MODEL_DIFF_FULL=1 build/dev/validator/tests/ggufcheck_model_differential_tests
  echo "test.sh: the full model differential took $((SECONDS - started)) s"
  started=$SECONDS
  GGUFCHECK_MMPROJ_DIFF_FULL=1 build/dev/validator/tests/ggufcheck_mmproj_differential_tests
  echo "test.sh: the full mmproj differential took $((SECONDS - started)) s"
  exit 0
fi
# The other GGUF parsers the conformance suite measures, Chromium for its results page, and the
# real vocabulary files (conformance/README.md). Required in CI; elsewhere the suite runs without
# them when the npm registry cannot be reached.
if ! bash conformance/setup; then
  [[ ${CI:-} == true ]] && { echo "test.sh: conformance/setup failed" >&2; exit 1; }
  echo "test.sh: warning: conformance/setup failed; the other parsers' conformance runs are skipped" >&2
fi
if [[ $preset == builds ]]; then
  # What users build and install, at -O3 with warnings as errors (the release preset leaves
  # them warnings for users; here CI sees what a user's g++ -O3 build would print): the command,
  # the library, the C interface and the Python module, installed under /usr so that the same
  # build is the Debian package below. The test programs, the fuzz targets, the corpus generator
  # and the benchmark are left out: the dev and asan stages build and run every test already (running them a third
  # time here added minutes and found nothing the other two do not), and bench/run.sh builds the
  # benchmark for users (the dev preset compiles it with warnings as errors).
  cmake --preset release -DGGUFCHECK_WERROR=ON -DGGUFCHECK_BUILD_TESTS=OFF \
    -DGGUFCHECK_BUILD_CORPUS=OFF -DGGUFCHECK_BUILD_BENCH=OFF -DGGUFCHECK_BUILD_FUZZ=OFF \
    -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
  cmake --build --preset release
  # The -O3 command on the shipped samples: valid passes, broken fails.
  build/release/validator/ggufcheck --quiet examples/valid
  if build/release/validator/ggufcheck --quiet examples/broken; then
    echo "test.sh: the release build passes examples/broken" >&2
    exit 1
  fi
  # The Debian package of this build, and what it holds (users run scripts/package.sh alone,
  # which builds the package preset: the same install rules).
  bash scripts/package.sh build/release >/dev/null
  exit 0
fi
if [[ $preset == cflite ]]; then
  # The fuzz preset is configured (its flags and options are valid); the targets themselves are
  # built once, the ClusterFuzzLite way, and fuzzed there.
  cmake --preset fuzz >/dev/null
  TEST_BUILD_FUZZ_SECONDS="${GGUFCHECK_FUZZ_SECONDS:-60}" bash .clusterfuzzlite/test-build.sh
  exit 0
fi
if [[ $preset == fuzz ]]; then
  # The fuzz preset as docs/development.md documents it (every target and generator it builds).
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz
  # Every fuzz target for GGUFCHECK_FUZZ_SECONDS (default 60) from the corpus, libFuzzer with
  # ASan + UBSan; any crash, leak, timeout or out-of-memory fails. Then the ClusterFuzzLite
  # build as OSS-Fuzz runs it (fuzz/README.md).
  # Two targets at a time (each libFuzzer process is one thread; the machine has two cores),
  # each with its own log, printed when it ends; the stage fails if any target failed.
  targets=()
  for source in fuzz/fuzz_*.cpp; do
    target="${source##*/}"
    targets+=("${target%.cpp}")
  done
  mkdir -p build/fuzz-logs
  export GGUFCHECK_FUZZ_NO_BUILD=1  # built above; two concurrent no-op builds would share ninja's log
  printf '%s\n' "${targets[@]}" |
    xargs -P "${GGUFCHECK_FUZZ_JOBS:-2}" -I{} bash -c \
      'bash fuzz/run "$1" "$2" >"build/fuzz-logs/$1.run" 2>&1; status=$?; cat "build/fuzz-logs/$1.run"; exit $((status ? 1 : 0))' \
      _ {} "${GGUFCHECK_FUZZ_SECONDS:-60}"
  bash .clusterfuzzlite/test-build.sh
  exit 0
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
ctest --preset "$preset"

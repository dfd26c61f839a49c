#!/usr/bin/env bash
# Quick start, part two: install what is missing, build, and run the whole test suite.
# Usage: scripts/test.sh [dev|asan|release|fuzz|cflite|builds]   (default dev)
#   builds: the release preset (g++ -O3) with warnings as errors, and its unit tests; then the
#   Debian package (scripts/package.sh checks what it holds). clang 14's
#   warnings are errors in the asan preset (the whole tree but the benchmark) and the fuzz preset.
#   fuzz: the fuzz preset's targets for GGUFCHECK_FUZZ_SECONDS (default 60) each, then the
#   ClusterFuzzLite build (each target fuzzed 10 s more).
#   cflite: the ClusterFuzzLite build as OSS-Fuzz makes it, every target replayed on its seed
#   corpus and fuzzed GGUFCHECK_FUZZ_SECONDS (default 60), two at a time (CI's fuzz stage: one
#   build of the targets instead of two).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
bash scripts/setup.sh
# The other GGUF parsers the conformance suite measures, Chromium for its results page, and the
# real vocabulary files (conformance/README.md). Required in CI; elsewhere the suite runs without
# them when the npm registry cannot be reached.
if ! bash conformance/setup; then
  [[ ${CI:-} == true ]] && { echo "test.sh: conformance/setup failed" >&2; exit 1; }
  echo "test.sh: warning: conformance/setup failed; the other parsers' conformance runs are skipped" >&2
fi
if [[ $preset == builds ]]; then
  # The release preset leaves warnings as warnings for users; here they are errors, so that
  # CI sees what a user's g++ -O3 build would print.
  # The benchmark is left out: its -O3 build adds minutes, and bench/run.sh builds it for users
  # (without -Werror); the dev preset compiles it with warnings as errors.
  # Installed under /usr, so that the same build is the Debian package below.
  cmake --preset release -DGGUFCHECK_WERROR=ON -DGGUFCHECK_BUILD_BENCH=OFF \
    -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
  cmake --build --preset release
  export RC_PARAMS="${RC_PARAMS:-seed=20261129}"
  # The suite's own programs at -O3 (the conformance and differential runs are the dev build's).
  ctest --preset release -E 'conformance|dump_agrees|Differential'
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
  # The fuzz preset exactly as the README documents it (every target and generator it builds).
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
# Properties run with a fixed seed unless RC_PARAMS says otherwise (README: property tests).
export RC_PARAMS="${RC_PARAMS:-seed=20261129}"
ctest --preset "$preset"

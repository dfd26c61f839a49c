#!/usr/bin/env bash
# The benchmark in one command, from anywhere: installs what is missing (scripts/setup.sh, which
# also fetches ggml's reader), builds the release preset, runs ggufcheck_bench. The summary at
# the end gives the times, the ratios and the peak-RSS figures, each with PASS or MISS.
# Arguments go to ggufcheck_bench, e.g. --benchmark_repetitions=9 or --smoke.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
cmake --preset release
# Only the benchmark and the CLI it runs: the tests are not needed here and take long to build.
cmake --build --preset release --target ggufcheck_bench
exec build/release/bench/ggufcheck_bench "$@"

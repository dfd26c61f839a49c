#!/usr/bin/env bash
# The benchmark in one command, from anywhere: installs what is missing (scripts/setup.sh, which
# also fetches ggml's reader), builds the release preset, runs ggufcheck_bench. The summary at
# the end gives the times, the ratios and the peak-RSS figures, each with PASS or MISS.
#   --with-baseline[=COMMIT]  also build the CLI of COMMIT (default 86a14d5, the last commit
#                             before issue 13's restructuring) and run it beside the new one
# Other arguments go to ggufcheck_bench, e.g. --benchmark_repetitions=9 or --smoke.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

baseline=""
bench_args=()
for arg in "$@"; do
  case "$arg" in
    --with-baseline) baseline=86a14d5 ;;
    --with-baseline=*) baseline="${arg#--with-baseline=}" ;;
    *) bench_args+=("$arg") ;;
  esac
done

bash scripts/setup.sh
cmake --preset release
# Only the benchmark and the CLI it runs: the tests are not needed here and take long to build.
cmake --build --preset release --target ggufcheck_bench

if [[ -n $baseline ]]; then
  bench_args+=(--baseline-cli "$(bash bench/baseline.sh "$baseline")")
fi

exec build/release/bench/ggufcheck_bench "${bench_args[@]}"

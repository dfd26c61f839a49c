#!/usr/bin/env bash
# The long differential campaign: ggufcheck's llama.cpp profile against llama.cpp's own GGUF
# reader over many seeded mutants (CI runs the same test with 5000 mutants and a fixed seed),
# then the fixed cases once, with the 1 GiB fields at ggml's limits (GGUFCHECK_DIFF_LARGE=1).
# See docs/llama-cpp-divergences.md.
#
# Usage: scripts/differential.sh [MUTANTS [SEED [JOBS]]]
#   MUTANTS  number of mutants (default 200000)
#   SEED     campaign seed (default: derived from the clock, printed)
#   JOBS     parallel shards (default 1)
# Environment: GGUFCHECK_DIFF_BUILD (build directory, default build/differential),
#   GGUFCHECK_DIFF_OUT (where offending files and logs go), GGUFCHECK_REFERENCE_GGML_LIB.
set -euo pipefail
cd "$(dirname "$0")/.."

mutants="${1:-200000}"
seed="${2:-$(date +%s)}"
jobs="${3:-1}"
build="${GGUFCHECK_DIFF_BUILD:-build/differential}"

bash scripts/setup.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGGUFCHECK_WERROR=ON \
  -DGGUFCHECK_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target ggufcheck_differential_tests
binary="$build/validator/tests/ggufcheck_differential_tests"

out="${GGUFCHECK_DIFF_OUT:-$build/differential-$seed}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
echo "differential: $mutants mutants, seed $seed, $jobs job(s); logs and offending files in $out"

per=$(((mutants + jobs - 1) / jobs))
pids=()
for ((job = 0; job < jobs; ++job)); do
  first=$((job * per))
  count=$((mutants - first < per ? mutants - first : per))
  ((count > 0)) || break
  GGUFCHECK_DIFF_SEED="$seed" GGUFCHECK_DIFF_FIRST="$first" GGUFCHECK_DIFF_MUTANTS="$count" \
    GGUFCHECK_DIFF_OUT="$out" "$binary" --gtest_filter='Differential.Mutants' \
    >"$out/mutants-$job.log" 2>&1 &
  pids+=("$!")
done

status=0
for pid in "${pids[@]}"; do
  wait "$pid" || status=1
done
GGUFCHECK_DIFF_LARGE=1 GGUFCHECK_DIFF_OUT="$out" "$binary" \
  --gtest_filter='Differential.*:-Differential.Mutants' >"$out/fixed.log" 2>&1 || status=1

for log in "$out"/mutants-*.log "$out/fixed.log"; do
  echo "== $(basename "$log")"
  grep -E '^(differential:|  ggufcheck/llama.cpp|  documented)|Failure|^mutant [0-9]+:|saved as|\[  (PASSED|FAILED)' \
    "$log" | grep -v 'mutants done$' || true
done
if ((status == 0)); then
  echo "differential: no undocumented disagreement (seed $seed)"
else
  echo "differential: FAILED (seed $seed); see $out" >&2
fi
exit "$status"

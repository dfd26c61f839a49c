#!/usr/bin/env bash
# .clusterfuzzlite/test-build.sh [--keep]
#
# Runs .clusterfuzzlite/build.sh the way OSS-Fuzz's `compile` runs it, without Docker, then
# checks and runs what it built:
#   1. fresh temporary $SRC, $WORK and $OUT, $SRC/ggufcheck a link to this checkout and
#      $SRC/build.sh a copy of the script, run as `bash -eu $SRC/build.sh` in $SRC/ggufcheck;
#      CC=clang-14 CXX=clang++-14, $CFLAGS/$CXXFLAGS those of an OSS-Fuzz libFuzzer build with
#      ASan and UBSan together (base flags, SANITIZER_FLAGS_address, SANITIZER_FLAGS_undefined,
#      -fsanitize=fuzzer-no-link; -stdlib=libc++ in $CXXFLAGS), LIB_FUZZING_ENGINE=-fsanitize=fuzzer;
#   2. asserts that $OUT has every expected target (every fuzz/fuzz_*.cpp but fuzz_differential)
#      as an executable instrumented with ASan, UBSan and libFuzzer and built against libc++,
#      its .options, gguf.dict, and a seed corpus zip holding exactly the corpus groups' .gguf
#      files (plus the target's fuzz/corpus/ and fuzz/regressions/ files), and no
#      fuzz_differential;
#   3. runs each target on its unzipped seed corpus and the folders its fuzz/TARGET.seeds names
#      (-runs=0: every seed once, uncut), with every check of a replay
#      (GGUFCHECK_FUZZ_EVERY_RUN=1: each input under every option set, as the replaying main
#      does), so this is the sanitizer replay of the seeds, the corpus and the crashers (the
#      asan preset does not build the targets); then fuzzes it from an empty corpus for
#      $TEST_BUILD_FUZZ_SECONDS (default 10) seconds with the flags of its .options, under the
#      sanitizer options ClusterFuzzLite's runner uses; any crash fails. Targets run
#      $TEST_BUILD_JOBS (default 2) at a time.
# Prints PASS or FAIL per check and a summary line; exits 0 only when every check passed.
# The temporary tree is removed on success (kept with --keep, and always on failure).
# Needs clang-14, libc++-14-dev, cmake, ninja, zip, unzip (scripts/setup.sh installs them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
me="test-build"
groups=(valid threats codes hostile writers)
fuzz_seconds="${TEST_BUILD_FUZZ_SECONDS:-10}"
jobs="${TEST_BUILD_JOBS:-2}"

usage() {
  cat <<EOF
usage: .clusterfuzzlite/test-build.sh [--keep]

Builds the ClusterFuzzLite fuzzers with .clusterfuzzlite/build.sh as OSS-Fuzz would (clang 14,
libc++, ASan + UBSan + libFuzzer flags, fresh \$SRC/\$WORK/\$OUT), checks \$OUT and runs every
target on its seed corpus (-runs=0), then fuzzes it ${fuzz_seconds} s from an empty corpus with
its .options.

  --keep   keep the temporary \$SRC/\$WORK/\$OUT (kept anyway when a check fails)

Environment: TEST_BUILD_FUZZ_SECONDS  seconds of fuzzing per target (default 10)
             TEST_BUILD_JOBS          targets run at a time (default 2; each is one process)
EOF
}

keep=0
for arg in "$@"; do
  case "$arg" in
    -h|--help) usage; exit 0 ;;
    --keep) keep=1 ;;
    *) echo "$me: error: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done
[[ $fuzz_seconds =~ ^[0-9]+$ && $fuzz_seconds -gt 0 ]] ||
  { echo "$me: error: TEST_BUILD_FUZZ_SECONDS must be a positive whole number" >&2; exit 2; }
[[ $jobs =~ ^[0-9]+$ && $jobs -gt 0 ]] ||
  { echo "$me: error: TEST_BUILD_JOBS must be a positive whole number" >&2; exit 2; }

missing=()
for tool in clang-14 clang++-14 cmake ninja zip unzip llvm-nm-14; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[[ -f /usr/lib/llvm-14/include/c++/v1/vector ]] || missing+=("libc++-14-dev")
if ((${#missing[@]})); then
  echo "$me: error: missing ${missing[*]}; run scripts/setup.sh" >&2
  exit 2
fi

targets=()
for source in "$root"/fuzz/fuzz_*.cpp; do
  name="${source##*/}"
  name="${name%.cpp}"
  [[ $name == fuzz_differential ]] || targets+=("$name")
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/ggufcheck-cflite.XXXXXX")"
export SRC="$tmp/src" WORK="$tmp/work" OUT="$tmp/out"
mkdir -p "$SRC" "$WORK" "$OUT"
ln -s "$root" "$SRC/ggufcheck"
cp "$root/.clusterfuzzlite/build.sh" "$SRC/build.sh"

passed=0
failed=0
failures=()
pass() { echo "$me: PASS  $*"; passed=$((passed + 1)); }
fail() { echo "$me: FAIL  $*"; failed=$((failed + 1)); failures+=("$*"); }
finish() {
  local total=$((passed + failed))
  if ((failed)); then
    echo "$me: the temporary tree is kept for inspection: $tmp"
    echo "$me: FAIL: $failed of $total checks failed:"
    printf '  - %s\n' "${failures[@]}"
    exit 1
  fi
  if ((keep)); then echo "$me: kept $tmp"; else rm -rf "$tmp"; fi
  echo "$me: PASS: all $total checks passed (${targets[*]}; build ${build_seconds:-?} s, runs ${run_seconds:-?} s)"
  exit 0
}

# 1. The build, with OSS-Fuzz's environment (infra/base-images/base-builder/Dockerfile and
# base-clang: the flags of SANITIZER=address and SANITIZER=undefined together).
ubsan_checks="array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
sanitizer_flags="-fsanitize=address -fsanitize-address-use-after-scope"
sanitizer_flags+=" -fsanitize=$ubsan_checks,unsigned-integer-overflow -fno-sanitize-recover=$ubsan_checks"
base_flags="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
coverage_flags="-fsanitize=fuzzer-no-link"
# OSS-Fuzz's libFuzzer is built against its libc++; Debian's against libstdc++, which a libc++
# link then lacks: link libstdc++ for the engine's own use (the targets still use libc++ alone).
lib_fuzzing_engine="-fsanitize=fuzzer"
engine_symbols="$(llvm-nm-14 "$(clang++-14 -print-file-name=libclang_rt.fuzzer-x86_64.a)" 2>/dev/null || true)"
if ! grep -q '_ZNSt3__1' <<<"$engine_symbols"; then
  lib_fuzzing_engine+=" -l:libstdc++.so.6"  # not -lstdc++: clang turns it into -lc++
fi
build_env=(
  CC=clang-14 CXX=clang++-14 CCC=clang++-14
  "CFLAGS=$base_flags $sanitizer_flags $coverage_flags"
  "CXXFLAGS=$base_flags -stdlib=libc++ $sanitizer_flags $coverage_flags"
  "LIB_FUZZING_ENGINE=$lib_fuzzing_engine"
  SANITIZER=address FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 FUZZING_LANGUAGE=c++
  "SRC=$SRC" "WORK=$WORK" "OUT=$OUT"
  # CI's own settings (build.sh): warnings are errors, and fuzz_differential is compiled too.
  GGUFCHECK_FUZZ_WERROR=ON GGUFCHECK_FUZZ_BUILD_DIFFERENTIAL=1
)
echo "$me: building with .clusterfuzzlite/build.sh in $tmp (log: $tmp/build.log)"
build_start=$SECONDS
if (cd "$SRC/ggufcheck" && env "${build_env[@]}" bash -eu "$SRC/build.sh") >"$tmp/build.log" 2>&1; then
  build_seconds=$((SECONDS - build_start))
  pass "build.sh ran (${build_seconds} s)"
else
  build_seconds=$((SECONDS - build_start))
  tail -n 40 "$tmp/build.log" | sed 's/^/  | /'
  fail "build.sh failed (log: $tmp/build.log)"
  finish
fi

# 2. What $OUT holds.
if [[ -f $OUT/gguf.dict ]] && cmp -s "$OUT/gguf.dict" "$root/fuzz/gguf.dict"; then
  pass "\$OUT/gguf.dict is fuzz/gguf.dict"
else
  fail "\$OUT/gguf.dict missing or not fuzz/gguf.dict"
fi
if [[ ! -e $OUT/fuzz_differential ]]; then
  pass "no fuzz_differential in \$OUT"
else
  fail "fuzz_differential is in \$OUT (it needs .deps/ and forks: not for ClusterFuzzLite)"
fi

expected_seeds=0
for group in "${groups[@]}"; do
  expected_seeds=$((expected_seeds + $(find "$root/corpus/$group" -maxdepth 1 -type f -name '*.gguf' | wc -l)))
done

for t in "${targets[@]}"; do
  binary="$OUT/$t"
  if [[ -f $binary && -x $binary ]]; then
    symbols="$(llvm-nm-14 "$binary" 2>/dev/null || true)"
    lacking=()
    grep -q '__asan_report' <<<"$symbols" || lacking+=("ASan")
    grep -q '__ubsan_handle' <<<"$symbols" || lacking+=("UBSan")
    grep -q '__sanitizer_cov_8bit_counters_init\|__sanitizer_cov_trace_pc_guard' <<<"$symbols" ||
      lacking+=("coverage instrumentation")
    grep -q 'LLVMFuzzerRunDriver\|_ZN6fuzzer' <<<"$symbols" || lacking+=("libFuzzer")
    grep -q '_ZNSt3__1' <<<"$symbols" || lacking+=("libc++")
    if ((${#lacking[@]})); then
      fail "$t: built without ${lacking[*]}"
    else
      pass "$t: executable, with ASan, UBSan, libFuzzer and its coverage instrumentation, libc++"
    fi
  else
    fail "$t: no executable \$OUT/$t"
  fi
  if [[ -f $OUT/$t.options ]] && cmp -s "$OUT/$t.options" "$root/fuzz/$t.options"; then
    dict="$(sed -n 's/^[[:space:]]*dict[[:space:]]*=[[:space:]]*//p' "$OUT/$t.options")"
    if [[ -z $dict || -f $OUT/$dict ]]; then
      pass "$t.options is fuzz/$t.options${dict:+ (its dict $dict is in \$OUT)}"
    else
      fail "$t.options names dict $dict, which is not in \$OUT"
    fi
  else
    fail "$t.options missing or not fuzz/$t.options"
  fi
  zip_file="$OUT/${t}_seed_corpus.zip"
  committed=0
  crashers=0
  if [[ -d $root/fuzz/corpus/$t ]]; then
    committed="$(find "$root/fuzz/corpus/$t" -type f ! -name '.*' | wc -l)"
  fi
  if [[ -d $root/fuzz/regressions/$t ]]; then
    crashers="$(find "$root/fuzz/regressions/$t" -type f ! -name '.*' | wc -l)"
  fi
  want=$((expected_seeds + committed + crashers))
  if [[ -s $zip_file ]]; then
    entries="$(unzip -Z1 "$zip_file" | wc -l)"
    nested="$(unzip -Z1 "$zip_file" | grep -c / || true)"
    if [[ $entries -eq $want && $nested -eq 0 ]]; then
      pass "${t}_seed_corpus.zip: $entries files, flat ($expected_seeds corpus + $committed fuzz/corpus + $crashers crashers)"
    else
      fail "${t}_seed_corpus.zip: $entries files ($nested in folders), expected $want, flat"
    fi
  else
    fail "${t}_seed_corpus.zip missing or empty"
  fi
done

# 3. Run each target as ClusterFuzzLite would. The sanitizer options of ClusterFuzz's runner
# (the ones that matter here); UBSan's unsigned overflow is a coverage signal, not a bug.
export ASAN_OPTIONS="alloc_dealloc_mismatch=0:allocator_may_return_null=1:detect_leaks=1:detect_stack_use_after_return=1:handle_abort=1:handle_segv=1:handle_sigill=1:symbolize=1:dedup_token_length=3"
export UBSAN_OPTIONS="print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:symbolize=1:dedup_token_length=3"
command -v llvm-symbolizer >/dev/null 2>&1 || export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14

# Each target's checks go to its own result file (lines "PASS message" / "FAIL message" /
# "  | context"), read back in target order, so that targets can run $jobs at a time.
run_target() {
  local t="$1" result="$tmp/results/$1"
  local binary="$OUT/$t" seeds="$tmp/seeds/$t" corpus="$tmp/corpus/$t" artifacts="$tmp/artifacts/$t"
  : >"$result"
  if [[ ! -x $binary || ! -s $OUT/${t}_seed_corpus.zip ]]; then
    echo "FAIL $t: not run (not built)" >>"$result"
    return
  fi
  mkdir -p "$seeds" "$corpus" "$artifacts"
  unzip -q "$OUT/${t}_seed_corpus.zip" -d "$seeds"
  # The .options' [libfuzzer] flags, the dict resolved in $OUT (as the runner does).
  local options=() line key value option
  while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*([A-Za-z_]+)[[:space:]]*=[[:space:]]*(.*[^[:space:]])[[:space:]]*$ ]] || continue
    key="${BASH_REMATCH[1]}" value="${BASH_REMATCH[2]}"
    [[ $key == dict ]] && value="$OUT/$value"
    options+=("-$key=$value")
  done < <(sed -n '/^\[libfuzzer\]/,/^\[/p' "$OUT/$t.options")
  # Every seed once, whole: without the .options' -max_len, which would cut the larger seeds to
  # it (the largest seed's size instead, below).
  local replay_options=()
  for option in "${options[@]}"; do
    [[ $option == -max_len=* || $option == -dict=* ]] || replay_options+=("$option")
  done
  # The target's other seeds (fuzz/TARGET.seeds: folders of the checkout, one a line).
  local extra=() folder
  if [[ -f $root/fuzz/$t.seeds ]]; then
    while IFS= read -r folder; do
      [[ -n $folder ]] && extra+=("$root/$folder")
    done <"$root/fuzz/$t.seeds"
  fi
  # -max_len the largest seed's size: libFuzzer would otherwise cut what is over 1 MiB.
  local largest
  largest="$(find "$seeds" ${extra[@]+"${extra[@]}"} -type f -printf '%s\n' | sort -n | tail -n1)"
  local log="$tmp/$t.replay.log" count
  if (cd "$OUT" && GGUFCHECK_FUZZ_EVERY_RUN=1 "$binary" ${replay_options[@]+"${replay_options[@]}"} \
        "-max_len=$((largest > 0 ? largest : 1))" -runs=0 "-artifact_prefix=$artifacts/" "$seeds" \
        ${extra[@]+"${extra[@]}"}) >"$log" 2>&1 &&
     grep -q 'INITED' "$log"; then
    count="$(sed -n 's/^INFO: seed corpus: files: \([0-9]*\).*/\1/p' "$log" | tail -n1)"
    echo "PASS $t: replayed the seed corpus${extra[*]:+ and ${extra[*]//$root\//}} with every check (${count:-?} non-empty files, -runs=0)" >>"$result"
  else
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10 | sed 's/^/  | /' >>"$result" || true
    echo "FAIL $t: failed on its seed corpus (log: $log)" >>"$result"
    return
  fi
  log="$tmp/$t.fuzz.log"
  local execs rate shown
  # From an empty corpus: the seeds were just replayed whole, and libFuzzer would run them all
  # again before the first mutation (twice the seeds' time, for a smoke test of the engine).
  if (cd "$OUT" && "$binary" ${options[@]+"${options[@]}"} "-max_total_time=$fuzz_seconds" -print_final_stats=1 \
        "-artifact_prefix=$artifacts/" "$corpus") >"$log" 2>&1; then
    execs="$(sed -n 's/^stat::number_of_executed_units:[[:space:]]*//p' "$log")"
    rate="$(sed -n 's/^stat::average_exec_per_sec:[[:space:]]*//p' "$log")"
    shown="${options[*]}"
    echo "PASS $t: fuzzed ${fuzz_seconds} s with ${shown//$OUT\//} (${execs:-?} executions, ${rate:-?} exec/s), no crash" >>"$result"
  else
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 10 | sed 's/^/  | /' >>"$result" || true
    echo "FAIL $t: crashed while fuzzing (log: $log; artifacts: $artifacts)" >>"$result"
  fi
}

run_start=$SECONDS
mkdir -p "$tmp/results"
running=0
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait || true
for t in "${targets[@]}"; do
  [[ -s $tmp/results/$t ]] || { fail "$t: not run (its runner left no result)"; continue; }
  while IFS= read -r line; do
    case "$line" in
      "PASS "*) pass "${line#PASS }" ;;
      "FAIL "*) fail "${line#FAIL }" ;;
      *) echo "$line" ;;
    esac
  done <"$tmp/results/$t"
done
run_seconds=$((SECONDS - run_start))
finish

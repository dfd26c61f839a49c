#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of ggufcheck's fuzz targets (see fuzz/CMakeLists.txt).
#
# Run by the base-builder image's `compile` in $SRC/ggufcheck, with the environment it sets:
# $CXX and $CXXFLAGS (clang, libc++, the sanitizer of the build and the coverage flags), and
# $LIB_FUZZING_ENGINE (the engine to link). Those flags choose the sanitizer, so the project's
# own GGUFCHECK_SANITIZE stays off, and nothing here adds sanitizer flags. ggufcheck is C++ only,
# so $CC/$CFLAGS go unused. The build goes in $WORK; $OUT receives, for every fuzz target but
# fuzz_differential:
#   <target>                    the fuzzer
#   <target>.options            its libFuzzer flags (fuzz/<target>.options)
#   <target>_seed_corpus.zip    the corpus groups' .gguf files, flat, plus the target's
#                               committed minimized corpus (fuzz/corpus/<target>/) and crashers
#                               (fuzz/regressions/<target>/)
#   gguf.dict                   the dictionary the .options name
# fuzz_differential is left out: it compares with llama.cpp's prebuilt, uninstrumented
# libggml-base.so (fetched from npm into .deps/ by scripts/setup.sh, absent in the image) and
# forks a server process per run, neither of which a ClusterFuzzLite runner supports.
#
# Locally: .clusterfuzzlite/test-build.sh runs this script the way OSS-Fuzz does, with two
# settings OSS-Fuzz leaves unset: GGUFCHECK_FUZZ_WERROR=ON (warnings are errors: CI's clang is
# the project's clang 14; OSS-Fuzz's newer clang may warn where it does not, and a warning must
# not stop fuzzing there) and GGUFCHECK_FUZZ_BUILD_DIFFERENTIAL=1 (fuzz_differential is built
# too, so that CI compiles every target; it is not copied to $OUT).
set -euo pipefail

project="$SRC/ggufcheck"
build="$WORK/ggufcheck-build"
cd "$project"

groups=(valid threats codes hostile writers)
targets=()
for source in fuzz/fuzz_*.cpp; do
  name="${source##*/}"
  name="${name%.cpp}"
  [[ $name == fuzz_differential ]] || targets+=("$name")
done
((${#targets[@]})) || { echo "build.sh: no fuzz/fuzz_*.cpp targets" >&2; exit 1; }

# The fuzz preset's coverage ignorelist (the libraries' templates give the fuzzer no useful
# signal), for the builds whose flags instrument for libFuzzer; not for the coverage build.
flags="$CXXFLAGS"
ignorelist="$project/fuzz/instrumentation-ignorelist.txt"
if [[ -f $ignorelist && $flags == *-fsanitize=fuzzer-no-link* ]]; then
  flags+=" -fsanitize-coverage-ignorelist=$ignorelist"
fi

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)

# No CMAKE_BUILD_TYPE: the optimisation and debug flags are $CXXFLAGS' alone.
cmake -S "$project" -B "$build" ${generator[@]+"${generator[@]}"} \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_BUILD_TYPE= \
  -DGGUFCHECK_FUZZ=ON \
  -DGGUFCHECK_FUZZ_LDFLAGS="$LIB_FUZZING_ENGINE" \
  -DGGUFCHECK_SANITIZE=OFF \
  -DGGUFCHECK_WERROR="${GGUFCHECK_FUZZ_WERROR:-OFF}" \
  -DGGUFCHECK_BUILD_CLI=OFF \
  -DGGUFCHECK_BUILD_TESTS=OFF \
  -DGGUFCHECK_BUILD_BENCH=OFF \
  -DGGUFCHECK_BUILD_CORPUS=OFF
built=("${targets[@]}")
[[ ${GGUFCHECK_FUZZ_BUILD_DIFFERENTIAL:-0} == 1 ]] && built+=(fuzz_differential)
cmake --build "$build" --target "${built[@]}" -j"$(nproc)"

seeds=()
for group in "${groups[@]}"; do
  seeds+=("corpus/$group"/*.gguf)
done

cp fuzz/gguf.dict "$OUT/gguf.dict"
for target in "${targets[@]}"; do
  cp "$build/fuzz/$target" "$OUT/$target"
  cp "fuzz/$target.options" "$OUT/$target.options"
  committed=()
  for dir in "fuzz/corpus/$target" "fuzz/regressions/$target"; do
    [[ -d $dir ]] || continue
    while IFS= read -r -d '' file; do committed+=("$file"); done \
      < <(find "$dir" -type f ! -name '.*' -print0 | sort -z)
  done
  rm -f "$OUT/${target}_seed_corpus.zip"
  zip -j -q "$OUT/${target}_seed_corpus.zip" "${seeds[@]}" ${committed[@]+"${committed[@]}"}
done
echo "build.sh: built ${targets[*]} into $OUT"

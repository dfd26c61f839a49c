#!/usr/bin/env bash
# The data-scan benchmark in one command (bench/data/README.md): builds the programs (Release),
# generates two models of about 1 GiB (a float-heavy one and a mixed one) unless the same
# generator version already wrote them, warms the page cache with them, then runs
# `ggufcheck check --data` (a), ggml_validate_row_data as llama.cpp's loader drives it (b) and a
# plain read of the same bytes on all cores (c), interleaved, and prints the medians, GB/s, peak
# RSS and the ratios against the targets.
#   --pipe         instead: a 4 GiB float model, `cat M | ggufcheck check --data -` against the
#                  path (same JSON report but for "path", peak RSS of ggufcheck < 256 MiB)
#   --hash         instead: `ggufcheck hash --sha256` (also --no-layer) and `--xxh64` on the two
#                  models against sha256sum and cat, with the peak RSS of ggufcheck (< 256 MiB)
#   --with-baseline[=COMMIT]  also build the command of COMMIT (default 6688898, the code before
#                  the restructuring into layers) as bench/run.sh does and run its check --data beside the
#                  new one, interleaved: the ratio a/a0 (the two models only)
#   --rounds N     runs of every side (default 5)
#   --dir DIR      where the models live (default build/bench-data)
# Environment: BUILD_DIR (default build/release), GGUFCHECK_GGML_LIB (the libggml-base.so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

pipe=0
hash=0
rounds=5
dir=build/bench-data
baseline=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pipe) pipe=1 ;;
    --hash) hash=1 ;;
    --rounds) rounds="$2"; shift ;;
    --rounds=*) rounds="${1#--rounds=}" ;;
    --dir) dir="$2"; shift ;;
    --dir=*) dir="${1#--dir=}" ;;
    --with-baseline) baseline=6688898 ;;
    --with-baseline=*) baseline="${1#--with-baseline=}" ;;
    *) echo "usage: bench/data.sh [--pipe | --hash | --with-baseline[=COMMIT]] [--rounds N] [--dir DIR]" >&2; exit 2 ;;
  esac
  shift
done

build_dir="${BUILD_DIR:-build/release}"
lib="${GGUFCHECK_GGML_LIB:-$PWD/.deps/node-llama-cpp-linux-x64-3.22.1/package/bins/linux-x64/libggml-base.so}"
if [[ ! -f $lib ]] || ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  bash scripts/setup.sh
fi

cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only what this benchmark runs; -j2: the machine is shared.
cmake --build "$build_dir" -j2 --target ggufcheck ggufcheck_data_generate ggufcheck_data_ggml \
  ggufcheck_data_floor ggufcheck_data_bench
build_dir=$(realpath "$build_dir")
bin="$build_dir/bench/data"
cli="$build_dir/validator/ggufcheck"

# Writes $dir/NAME.gguf unless its sidecar says this generator version wrote it at this size.
model() {
  local name=$1 kind=$2 mib=$3
  local path="$dir/$name.gguf" version
  version=$("$bin/ggufcheck_data_generate" --version)
  if [[ -f $path && -f $path.info ]] &&
    grep -qx "version $version" "$path.info" && grep -qx "kind $kind" "$path.info" &&
    grep -qx "target_mib $mib" "$path.info" &&
    grep -qx "file_size $(stat -c %s "$path")" "$path.info"; then
    echo "reusing $path (generator version $version)" >&2
  else
    mkdir -p "$dir"
    rm -f "$path" "$path.info"
    # The model plus 10% for the padding and the header.
    local need_kib=$((mib * 1024 * 11 / 10)) free_kib
    free_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
    if ((free_kib < need_kib)); then
      echo "not enough space in $dir for $name: $((need_kib / 1024)) MiB needed, $((free_kib / 1024)) MiB free" >&2
      exit 1
    fi
    "$bin/ggufcheck_data_generate" --model "$kind" --mib "$mib" "$path" >&2
  fi
  cat "$path" >/dev/null  # into the page cache: the benchmark measures scans, not the disk
  echo "$path"
}

help=$("$cli" check --help 2>/dev/null || true)
have_data=0
if grep -q -- --data <<<"$help"; then have_data=1; fi

if ((pipe)); then
  big=$(model float-4g float 4096)
  if ((!have_data)); then
    echo "(a) ggufcheck check --data: not available in this build; nothing to measure with --pipe"
    exit 0
  fi
  exec "$bin/ggufcheck_data_bench" --pipe --cli "$cli" --rounds "$rounds" "$big"
fi

float=$(model float float 1024)
mixed=$(model mixed mixed 1024)
if ((hash)); then
  exec "$bin/ggufcheck_data_bench" --hash --cli "$cli" --rounds "$rounds" "$float" "$mixed"
fi
args=(--floor "$bin/ggufcheck_data_floor" --ggml "$bin/ggufcheck_data_ggml" --lib "$lib"
  --rounds "$rounds")
if [[ -n $baseline ]]; then
  # The commit's command, built as bench/run.sh builds it.
  args+=(--baseline-cli "$(bash bench/baseline.sh "$baseline")")
fi
if ((have_data)); then
  args+=(--cli "$cli")
  # The other way of reading, when the CLI offers one, shown beside the default.
  if grep -q -- --data-read <<<"$help"; then args+=(--cli-variant --data-read=map); fi
else
  echo "(a) ggufcheck check --data: not available in this build (ggufcheck check --help has no --data)"
fi
exec "$bin/ggufcheck_data_bench" "${args[@]}" "$float" "$mixed"

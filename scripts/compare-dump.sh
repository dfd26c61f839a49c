#!/usr/bin/env bash
# `ggufcheck dump` of two binaries, byte for byte: for every GGUF file of the repository (corpus/,
# conformance/cases/, examples/, validator/tests/data/), at every level and under every profile,
# the standard output and the exit status of OLD and NEW must be the same. The examples are also
# given on standard input. Use it when dump's code changes: build the binary of the commit before
# the change (e.g. in a git worktree) and the new one, and compare.
#
# Usage: scripts/compare-dump.sh OLD_BINARY NEW_BINARY [FILE...]
#   FILE...  the files to compare (default: every *.gguf of the directories above)
# Prints one line per difference and a summary; exits 1 if anything differs.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_BINARY NEW_BINARY [FILE...]" >&2
  exit 3
fi
old="$1"
new="$2"
shift 2
cd "$(dirname "$0")/.."

if [[ $# -gt 0 ]]; then
  files=("$@")
else
  mapfile -t files < <(find corpus conformance/cases examples validator/tests/data -type f \
    -name '*.gguf' 2>/dev/null | LC_ALL=C sort)
fi
mapfile -t stdin_files < <(printf '%s\n' "${files[@]}" | grep '^examples/' || true)

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

compared=0
differences=0
# run BINARY OUT FILE [stdin] ARGS...: stdout to OUT, the exit status printed
run() {
  local binary="$1" out="$2" file="$3" mode="$4"
  shift 4
  local status=0
  if [[ "$mode" == stdin ]]; then
    "$binary" dump - "$@" <"$file" >"$out" 2>/dev/null || status=$?
  else
    "$binary" dump "$file" "$@" >"$out" 2>/dev/null || status=$?
  fi
  echo "$status"
}
compare() {
  local file="$1" mode="$2" level="$3" profile="$4"
  local old_status new_status
  old_status="$(run "$old" "$scratch/old" "$file" "$mode" --level "$level" --profile "$profile")"
  new_status="$(run "$new" "$scratch/new" "$file" "$mode" --level "$level" --profile "$profile")"
  compared=$((compared + 1))
  if [[ "$old_status" != "$new_status" ]] || ! cmp -s "$scratch/old" "$scratch/new"; then
    differences=$((differences + 1))
    echo "DIFF $file ($mode) --level $level --profile $profile: exit $old_status -> $new_status," \
      "$(stat -c %s "$scratch/old") -> $(stat -c %s "$scratch/new") bytes," \
      "first difference: $(cmp "$scratch/old" "$scratch/new" 2>&1 | head -1 || true)"
  fi
}

for file in "${files[@]}"; do
  for level in 0 1 2 3; do
    for profile in strict spec llama.cpp; do
      compare "$file" file "$level" "$profile"
    done
  done
done
for file in "${stdin_files[@]}"; do
  for level in 0 1 2 3; do
    for profile in strict spec llama.cpp; do
      compare "$file" stdin "$level" "$profile"
    done
  done
done

echo "compare-dump: ${#files[@]} files (${#stdin_files[@]} also on standard input) x 4 levels" \
  "x 3 profiles: $compared runs compared, $differences different"
[[ "$differences" -eq 0 ]]

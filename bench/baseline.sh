#!/usr/bin/env bash
# bench/baseline.sh COMMIT: builds the command of COMMIT (its own cli preset, as a user builds
# it) into build/baseline-<commit>/ and prints the path of that ggufcheck, for the benchmarks'
# --with-baseline (bench/run.sh, bench/data.sh). The tree is exported once (no worktree to
# register or remove); a later call reuses it and lets ninja do nothing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -eq 1 ]] || { echo "usage: bench/baseline.sh COMMIT" >&2; exit 2; }
commit=$(git rev-parse --verify "$1^{commit}")
source_dir="build/baseline-${commit:0:12}"
if [[ ! -d $source_dir ]]; then
  rm -rf "$source_dir.partial"
  mkdir -p "$source_dir.partial"
  git archive "$commit" | tar -x -C "$source_dir.partial"
  mv "$source_dir.partial" "$source_dir"
fi
(cd "$source_dir" && cmake --preset cli >/dev/null &&
  cmake --build --preset cli --target ggufcheck >&2)
echo "$PWD/$source_dir/build/cli/validator/ggufcheck"

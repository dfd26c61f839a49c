#!/usr/bin/env bash
# The pre-commit hook `ggufcheck` (.pre-commit-hooks.yaml). pre-commit runs
#   scripts/pre-commit-hook.sh [ARGS...] FILE...
# with the hook's args and then the staged files whose names end in .gguf, perhaps in several
# batches. The files are those of the working tree (pre-commit stashes what is not staged), so
# with Git LFS installed they are the models themselves, while git stores their pointers. A Git
# LFS pointer in the working tree (Git LFS not installed, or smudging skipped) is reported as
# what it is; the other files are validated by ggufcheck (on PATH, or $GGUFCHECK).
# Exit status: ggufcheck's (0 pass, 1 errors, 2 unreadable), 1 for a pointer, 3 without ggufcheck.
# Written for bash 3.2 too (macOS): no ${x,,}, and empty arrays expanded with ${a[@]+...}.
set -euo pipefail

ggufcheck=${GGUFCHECK:-ggufcheck}
if ! command -v "$ggufcheck" >/dev/null 2>&1; then
  echo "ggufcheck hook: cannot find '$ggufcheck': install ggufcheck on PATH (or set GGUFCHECK to" \
    "the command); see the README's Quick start" >&2
  exit 3
fi

# The oid and size a Git LFS pointer names, printed as "OID SIZE"; fails for any other file.
# A pointer is a small text file whose first line names the LFS spec (git-lfs reads files of
# under 1024 bytes as candidates).
lfs_pointer() {
  local file=$1 line oid="" size=""
  (($(wc -c <"$file") < 1024)) || return 1
  IFS= read -r line <"$file" || return 1
  case "$line" in
    "version https://git-lfs.github.com/spec/v1" | "version https://hawser.github.com/spec/v1") ;;
    *) return 1 ;;
  esac
  while IFS= read -r line; do
    case "$line" in
      "oid "*) oid=${line#oid } ;;
      "size "*) size=${line#size } ;;
    esac
  done <"$file"
  printf '%s %s\n' "${oid:-unknown}" "${size:-unknown}"
}

# pre-commit puts the file names after the hook's args: a file is an argument naming an existing
# regular file (whatever `files:` selects), the rest are ggufcheck's options.
options=()
files=()
for arg in "$@"; do
  if [[ -f $arg ]]; then files+=("$arg"); else options+=("$arg"); fi
done
((${#files[@]})) || exit 0

status=0
models=()
for file in "${files[@]}"; do
  if pointer=$(lfs_pointer "$file"); then
    oid=${pointer% *}
    echo "$file: error: a Git LFS pointer (oid ${oid:0:19}..., ${pointer#* } bytes), not the model"
    echo "  = the hook checks the file in the working tree, where Git LFS did not put the model"
    echo "    (Git LFS is not installed, or smudging was skipped)"
    echo "  = fix: git lfs install && git lfs pull --include=\"$file\", then commit again;"
    echo "    or skip the hook once: SKIP=ggufcheck git commit"
    status=1
  else
    # A relative name that starts with ':' would start ggufcheck's lines for it, and a line
    # that starts with '::' is a workflow command when the hook runs in GitHub Actions.
    case "$file" in :*) file="./$file" ;; esac
    models+=("$file")
  fi
done

# A model tracked by Git LFS in .gitattributes, but without LFS's filter `git add` stores the
# whole model in git. Worth a note, not a failure: the hook checks models, not their storage.
if ((${#models[@]})) && [[ -z $(git config --get filter.lfs.clean 2>/dev/null || true) ]]; then
  while IFS= read -r -d '' path && IFS= read -r -d '' _attribute && IFS= read -r -d '' value; do
    [[ $value != lfs ]] ||
      echo "$path: note: tracked by Git LFS (.gitattributes), but Git LFS is not set up here" \
        "(no filter.lfs.clean), so git stores the whole model: run 'git lfs install', then" \
        "'git add' the file again"
  done < <(git check-attr -z filter -- "${models[@]}" 2>/dev/null || true)
fi
if ((${#models[@]})); then
  checked=0
  "$ggufcheck" check ${options[@]+"${options[@]}"} -- "${models[@]}" || checked=$?
  ((checked <= status)) || status=$checked
fi
exit "$status"

#!/usr/bin/env bash
# The action's check step: runs `ggufcheck check --format github` on the input paths (an
# annotation per finding in the log), with sarif true a second time with --format sarif into
# sarif-file, writes a step summary, and exits with ggufcheck's status: non-zero fails the step
# when a file has errors (1) or an input could not be read (2).
# Environment: GGUFCHECK (the command), the inputs as INPUT_* (action.yml), GITHUB_WORKSPACE,
# GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP.
# Outputs: exit-code, and sarif-file (its absolute path) when SARIF was written.
set -euo pipefail
# shellcheck source=scripts/action/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ggufcheck=${GGUFCHECK:?the locate or build step names the ggufcheck to run}
# Paths are relative to the repository's root, so annotations and SARIF name them as GitHub does.
[[ -z ${GITHUB_WORKSPACE:-} ]] || cd "$GITHUB_WORKSPACE"

options=(--profile "$(input PROFILE)")
[[ -n ${options[1]} ]] || options=(--profile strict)
if is_true DATA false; then
  options+=(--data --no-progress)
fi
fail_on=$(input FAIL-ON)
case "${fail_on:-error}" in
  error) ;;
  warning) options+=(--werror) ;;
  *) fail_usage "input fail-on is \"$fail_on\": give error or warning" ;;
esac
split_words "$(input ARGS)" args
options+=("${words[@]}")

split_words "$(input PATHS)" paths
((${#words[@]})) || words=(.)
paths=()
shopt -s globstar
for i in "${!words[@]}"; do
  word=${words[i]}
  matches=()
  if [[ ${words_quoted[i]} == 0 && $word == *[*?[]* ]]; then
    # Pathname expansion alone: with IFS empty an unquoted expansion is not split, and its
    # result is never evaluated. A pattern that matches nothing stays as written, and ggufcheck
    # reports that it cannot open it.
    saved_ifs=$IFS
    IFS=
    # shellcheck disable=SC2206
    matches=($word)
    IFS=$saved_ifs
  fi
  ((${#matches[@]})) || matches=("$word")
  for path in "${matches[@]}"; do
    # A relative path that starts with ':' would start ggufcheck's summary line for it, and a
    # line that starts with '::' is a workflow command: keep such a name from issuing one.
    [[ $path != :* ]] || path="./$path"
    paths+=("$path")
  done
done

sarif_file=""
if is_true SARIF false; then
  sarif_file=$(input SARIF-FILE)
  sarif_file=${sarif_file:-ggufcheck.sarif}
  [[ $sarif_file == /* ]] || sarif_file="$PWD/$sarif_file"
  mkdir -p "$(dirname "$sarif_file")"
fi

report=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ggufcheck-report.XXXXXX")
trap 'rm -f "$report" "$report.stderr"' EXIT
printf 'Running: ggufcheck check --format github'
printf ' %q' "${options[@]}" -- "${paths[@]}"
printf '\n'
status=0
"$ggufcheck" check --format github "${options[@]}" -- "${paths[@]}" | tee "$report" ||
  status=${PIPESTATUS[0]}
if [[ -n $sarif_file ]]; then
  # A second run for the SARIF (one format per run): with data true the data is read again.
  # Its messages about unreadable inputs repeat the first run's annotations: shown only when
  # no SARIF could be written.
  sarif_errors="$report.stderr"
  sarif_status=0
  "$ggufcheck" check --format sarif --sarif-root . "${options[@]}" -- "${paths[@]}" \
    >"$sarif_file" 2>"$sarif_errors" || sarif_status=$?
  if ((sarif_status >= 3)); then
    cat "$sarif_errors" >&2
    echo "::warning title=ggufcheck action::no SARIF written (ggufcheck exited $sarif_status)"
    rm -f "$sarif_file"
    sarif_file=""
  fi
  ((sarif_status <= status)) || status=$sarif_status
fi

set_output exit-code "$status"
[[ -z $sarif_file ]] || set_output sarif-file "$sarif_file"

if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
  case $status in
    0) verdict="passed" ;;
    1) verdict="errors found" ;;
    2) verdict="an input could not be read" ;;
    3) verdict="usage error" ;;
    *) verdict="internal error" ;;
  esac
  # ggufcheck's summary lines: every line that is not a workflow command.
  summary=$(grep -v '^::' "$report" || true)
  # A fence longer than any run of backticks in the text, so a file name cannot close it.
  fence='```'
  while [[ $summary == *"$fence"* ]]; do fence+='`'; done
  {
    printf '### ggufcheck: %s (exit status %s)\n\n' "$verdict" "$status"
    printf '%stext\n%s\n%s\n' "$fence" "$summary" "$fence"
    [[ -z $sarif_file ]] || printf '\nSARIF: %s\n' "${sarif_file#"$PWD/"}"
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"

# shellcheck shell=bash
# Shared by the action's steps (sourced, not run). See action.yml and docs/github-actions.md.

# An input of the action. action.yml maps input `name` to the environment variable INPUT_NAME
# (upper-cased, hyphens kept: INPUT_SARIF-FILE), as the runner names a JavaScript action's
# inputs; bash cannot expand such a name, so it is read from the environment. Unset is "".
input() {
  printenv "INPUT_$1" || true
}

# A step output, in the runner's file GITHUB_OUTPUT (name=value, or the delimited form for a
# value with a newline).
set_output() {
  [[ -n ${GITHUB_OUTPUT:-} ]] || return 0
  if [[ $2 == *$'\n'* ]]; then
    local delimiter="ggufcheck_${RANDOM}${RANDOM}${RANDOM}"
    printf '%s<<%s\n%s\n%s\n' "$1" "$delimiter" "$2" "$delimiter" >>"$GITHUB_OUTPUT"
  else
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}

# An error annotation and exit status 3 (a usage error, as ggufcheck's own). The message is
# escaped as workflow-command data, so an input's text cannot start a command of its own.
fail_usage() {
  local message=$1
  message=${message//'%'/'%25'}
  message=${message//$'\r'/'%0D'}
  message=${message//$'\n'/'%0A'}
  printf '::error title=ggufcheck action::%s\n' "$message"
  exit 3
}

# Whether a boolean input is true: true or false in any case (as GitHub's own `==` compares),
# empty for the default given as $3.
is_true() {
  local name=$1 value
  value=$(input "$name")
  value=${value:-$2}
  case "${value,,}" in
    true) return 0 ;;
    false) return 1 ;;
    *) fail_usage "input ${name,,} is \"$value\": give true or false" ;;
  esac
}

# Splits $1 into words on blanks and newlines. '...' and "..." quote (a path with blanks), and
# nothing else is special: no $, `, \, ~ or ; is interpreted, so an input is never run as code.
# Fills words[] and, in parallel, words_quoted[] (1 when any part of the word was quoted: such a
# word is not a glob). An unterminated quote is a usage error naming $2, the input.
split_words() {
  local text=$1 name=$2 word="" quote="" char
  local -i i has_word=0 quoted=0
  words=()
  words_quoted=()
  for ((i = 0; i < ${#text}; i++)); do
    char=${text:i:1}
    if [[ -n $quote ]]; then
      if [[ $char == "$quote" ]]; then quote=""; else word+=$char; fi
    elif [[ $char == "'" || $char == '"' ]]; then
      quote=$char
      has_word=1
      quoted=1
    elif [[ $char == [[:space:]] ]]; then
      if ((has_word)); then
        words+=("$word")
        words_quoted+=("$quoted")
      fi
      word=""
      has_word=0
      quoted=0
    else
      word+=$char
      has_word=1
    fi
  done
  [[ -z $quote ]] || fail_usage "input $name has an unterminated $quote quote: $text"
  if ((has_word)); then
    words+=("$word")
    words_quoted+=("$quoted")
  fi
}

#!/usr/bin/env bash
# The action's first step: which ggufcheck to run. The input ggufcheck-path, else a ggufcheck on
# PATH, else a build from the action's own checkout (build.sh), cached under a key that changes
# with every file the build reads.
# Outputs: ggufcheck (the command, when one was found), build (true when it must be built),
# cache-dir and cache-key (for the build and actions/cache).
set -euo pipefail
# shellcheck source=scripts/action/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

found=""
requested=$(input GGUFCHECK-PATH)
if [[ -n $requested ]]; then
  # Relative to the workspace, like the paths checked.
  [[ $requested == /* || -z ${GITHUB_WORKSPACE:-} ]] || requested="$GITHUB_WORKSPACE/$requested"
  [[ -f $requested && -x $requested ]] ||
    fail_usage "input ggufcheck-path: $requested is not an executable file"
  found=$requested
elif found=$(command -v ggufcheck); then
  :
fi

if [[ -n $found ]]; then
  version=$("$found" --version 2>&1) || fail_usage "$found does not run: $version"
  echo "Using $found: ${version%%$'\n'*}"
  set_output ggufcheck "$found"
  set_output build false
  exit 0
fi

source_dir=${GITHUB_ACTION_PATH:?the runner sets GITHUB_ACTION_PATH for an action\'s steps}
# What the cli build reads: every CMake file (the configure step reads them all), the presets,
# the setup script, and the sources of the library and the command with the diagnostic pages
# they embed. Build output, fetched dependencies and git's files are left out.
source_hash=$(
  cd "$source_dir"
  {
    find . \( -name .git -o -name .deps -o -name build \) -prune -o \
      -type f \( -name CMakeLists.txt -o -name '*.cmake' \) -print0
    for input in CMakePresets.json scripts/setup.sh validator/include validator/src \
      validator/cli docs/diagnostics; do
      [[ ! -e $input ]] || find "$input" -type f -print0
    done
  } | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32
)
# The binary links the system's libraries: one cache per system and architecture.
# shellcheck source=/dev/null
system=$(. /etc/os-release && echo "${ID:-linux}-${VERSION_ID:-unknown}")
echo "ggufcheck is not on PATH: it will be built from $source_dir"
set_output build true
set_output cache-dir "${RUNNER_TEMP:?the runner sets RUNNER_TEMP}/ggufcheck-cli"
set_output cache-key "ggufcheck-cli-$system-$(uname -m)-$source_hash"

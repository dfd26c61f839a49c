#!/usr/bin/env bash
# Builds ggufcheck from the action's own checkout, unless actions/cache restored it: the
# Debian/Ubuntu packages of `scripts/setup.sh demo` (apt, with sudo when not root), then the cli
# preset's ggufcheck target, built outside the checkout (it may be the workspace).
# Environment: GITHUB_ACTION_PATH, RUNNER_TEMP, GGUFCHECK_CACHE_DIR (locate.sh's cache-dir).
# Outputs: ggufcheck (the built command), built (true when compiled here: the cache to save).
set -euo pipefail
# shellcheck source=scripts/action/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

source_dir=${GITHUB_ACTION_PATH:?}
cache_dir=${GGUFCHECK_CACHE_DIR:?locate.sh names the cache directory}
binary="$cache_dir/ggufcheck"

runs() { [[ -x $binary ]] && "$binary" --version >/dev/null 2>&1; }

if [[ -x $binary ]] && ! runs; then
  # Restored from the cache, but a library it links is missing from this runner.
  echo "The cached ggufcheck does not run here; installing its libraries"
  bash "$source_dir/scripts/setup.sh" demo
fi
if runs; then
  echo "Using the cached build: $("$binary" --version | head -n 1)"
  set_output ggufcheck "$binary"
  set_output built false
  exit 0
fi

command -v apt-get >/dev/null 2>&1 ||
  fail_usage "building ggufcheck needs Debian or Ubuntu (apt); on another runner give the input ggufcheck-path"
bash "$source_dir/scripts/setup.sh" demo
build_dir="${RUNNER_TEMP:?}/ggufcheck-build"
(cd "$source_dir" && cmake --preset cli -B "$build_dir")
cmake --build "$build_dir" --target ggufcheck
mkdir -p "$cache_dir"
install -m 755 "$build_dir/validator/ggufcheck" "$binary"
echo "Built $("$binary" --version | head -n 1)"
set_output ggufcheck "$binary"
set_output built true

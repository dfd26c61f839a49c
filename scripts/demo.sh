#!/usr/bin/env bash
# Quick start, part one: install what is missing, build, and validate the shipped samples.
# The valid samples pass and the broken ones fail, so ggufcheck itself exits 1 here; this
# script exits 0 when every sample got the verdict it should.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
# Only the command: the tests, benchmarks and generators are the test command's business.
cmake --preset cli >/dev/null
cmake --build --preset cli --target ggufcheck
ggufcheck=build/cli/validator/ggufcheck

echo "== ggufcheck examples/valid examples/broken"
status=0
"$ggufcheck" examples/valid examples/broken || status=$?

echo
"$ggufcheck" --quiet examples/valid >/dev/null && valid_ok=1 || valid_ok=0
broken_fail=1
for f in examples/broken/*.gguf; do
  "$ggufcheck" --quiet "$f" >/dev/null && broken_fail=0 || true
done
if [[ $status -eq 1 && $valid_ok -eq 1 && $broken_fail -eq 1 ]]; then
  echo "demo: as expected, examples/valid passes and every file in examples/broken fails (exit status $status)"
else
  echo "demo: unexpected verdicts (exit status $status)" >&2
  exit 1
fi

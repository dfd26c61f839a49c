#!/usr/bin/env bash
# The conformance adapter of ggufcheck itself, in one profile:
#   ggufcheck.sh GGUFCHECK PROFILE FILE            ggufcheck dump --level 3 --profile PROFILE FILE
#   ggufcheck.sh GGUFCHECK PROFILE --data FILE     ggufcheck check --data --no-model-checks --profile llama.cpp
#   ggufcheck.sh GGUFCHECK PROFILE --model FILE    ggufcheck check --profile llama.cpp (model checks on)
#   ggufcheck.sh GGUFCHECK PROFILE --capabilities
# GGUFCHECK is the binary (the registry passes {build}/validator/ggufcheck). dump's exit status
# passes through: 0 accepted, 1 rejected, 2 unreadable (a crash to the runner), 3 usage.
# --data is llama.cpp's tensor data check, so it always runs in the llama.cpp profile, and only
# the llama.cpp profile's adapter declares it ("data": true), so that ggufcheck is scored once:
# {"ok": true} when check finds no error (exit 0), else {"ok": false, "error": the first error's
# message, "tensor": the tensor its path names} (exit 1); check's 2 (unreadable) passes through.
# --model is llama.cpp's model loader's verdict, so it too runs in the llama.cpp profile and only
# that adapter declares it ("model": true): check with its model checks (the default), which
# checks a split set whole from its first shard; {"ok": true} when no file of the report has an
# error (exit 0), else {"ok": false, "error": the first error's code and message} (exit 1).
set -u
usage() {
  echo "usage: ggufcheck.sh GGUFCHECK PROFILE [--data|--model] FILE|--capabilities" >&2
  exit 3
}
[[ $# -eq 3 || ($# -eq 4 && ($3 == --data || $3 == --model)) ]] || usage
ggufcheck=$1 profile=$2 arg=$3
if [[ $arg == --capabilities ]]; then
  # "ggufcheck 0.1.0 (git ...)" then the llama.cpp line: the version is the first line's 2nd word.
  version=$("$ggufcheck" --version 2>/dev/null | awk 'NR == 1 { print $2 }') || exit 3
  data=false
  [[ $profile == llama.cpp ]] && data=true
  printf '{"name": "ggufcheck-%s", "version": "%s", "levels": ["L0", "L1", "L2", "L3"], ' \
    "$profile" "${version:-?}"
  printf '"gguf_versions": ["2", "3"], "endianness": ["little", "big"], "batch": false, '
  printf '"data": %s, "model": %s}\n' "$data" "$data"
  exit 0
fi
if [[ $arg == --data ]]; then
  [[ $# -eq 4 ]] || usage
  # The data cases are containers with tensor data, not models: the model checks stay out.
  report=$("$ggufcheck" check --data --no-model-checks -j 1 --no-progress --profile llama.cpp --format json \
    -- "$4")
  status=$?
  [[ $status -eq 0 || $status -eq 1 ]] || exit "$status"
  # The verdict is check's exit status; the message and tensor come from its first error.
  REPORT=$report STATUS=$status exec /usr/bin/python3 -c '
import json, os, re, sys
status = int(os.environ["STATUS"])
if status == 0:
    print(json.dumps({"ok": True}))
    sys.exit(0)
findings = json.loads(os.environ["REPORT"])["files"][0]["findings"]
error = next(f for f in findings if f["severity"] == "error")
named = re.match(r"tensor\[\d+\] (\".*\") data$", error.get("path") or "")
answer = {"ok": False, "error": error["code"] + " " + error["message"]}
if named:
    try:
        answer["tensor"] = json.loads(named.group(1))
    except ValueError:
        answer["tensor"] = named.group(1)[1:-1]
print(json.dumps(answer))
sys.exit(1)'
fi
if [[ $arg == --model ]]; then
  report=$("$ggufcheck" check --profile llama.cpp --format json -j 1 --no-progress -- "$4")
  status=$?
  [[ $status -eq 0 || $status -eq 1 ]] || exit "$status"
  REPORT=$report STATUS=$status exec /usr/bin/python3 -c '
import json, os, sys
if int(os.environ["STATUS"]) == 0:
    print(json.dumps({"ok": True}))
    sys.exit(0)
errors = [f for report in json.loads(os.environ["REPORT"])["files"]
          for f in report["findings"] if f["severity"] == "error"]
print(json.dumps({"ok": False, "error": errors[0]["code"] + " " + errors[0]["message"]
                  if errors else "check found an error"}))
sys.exit(1)'
fi
[[ $# -eq 3 ]] || usage
exec "$ggufcheck" dump --level 3 --profile "$profile" -- "$arg"

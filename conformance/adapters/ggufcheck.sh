#!/usr/bin/env bash
# The conformance adapter of ggufcheck itself, in one profile:
#   ggufcheck.sh GGUFCHECK PROFILE FILE            ggufcheck dump --level 3 --profile PROFILE FILE
#   ggufcheck.sh GGUFCHECK PROFILE --capabilities
# GGUFCHECK is the binary (the registry passes {build}/validator/ggufcheck). dump's exit status
# passes through: 0 accepted, 1 rejected, 2 unreadable (a crash to the runner), 3 usage.
set -u
if [[ $# -ne 3 ]]; then
  echo "usage: ggufcheck.sh GGUFCHECK PROFILE FILE|--capabilities" >&2
  exit 3
fi
ggufcheck=$1 profile=$2 arg=$3
if [[ $arg == --capabilities ]]; then
  version=$("$ggufcheck" --version 2>/dev/null | awk '{ print $2 }') || exit 3
  printf '{"name": "ggufcheck-%s", "version": "%s", "levels": ["L0", "L1", "L2", "L3"], ' \
    "$profile" "${version:-?}"
  printf '"gguf_versions": ["2", "3"], "endianness": ["little", "big"], "batch": false}\n'
  exit 0
fi
exec "$ggufcheck" dump --level 3 --profile "$profile" -- "$arg"

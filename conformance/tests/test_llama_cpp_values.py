#!/usr/bin/env python3
"""`ggufcheck dump --profile llama.cpp` against llama.cpp's own reader (conformance/adapters/
llama_cpp_reader): on every file both accept, the canonical outputs are equal, up to what the
reader's C API cannot express. Those limits are applied to ggufcheck's side before comparing:

  - a bool byte other than 0/1 reads back as true, without the byte ("raw");
  - strings, keys and tensor names are C strings: cut at the first NUL;
  - a tensor's dims are ggml_n_dims of them: trailing dims of 0 or 1 dropped, at least one.

Files: examples/valid, every corpus group, the conformance cases, and the 19 real vocabulary files when
conformance/setup has installed them. Verdicts are the differential test's business
(docs/llama-cpp-divergences.md); here a file only one side accepts is skipped and counted.
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def reader_limits(value):
    """ggufcheck's canonical output as llama.cpp's C API can express it."""
    def element(item):
        if isinstance(item, dict) and "raw" in item:
            return item["value"]
        if isinstance(item, str):
            return item.split("\0")[0]
        return item

    for entry in value.get("metadata", []):
        entry.pop("raw", None)
        if "key" in entry:
            entry["key"] = entry["key"].split("\0")[0]
        if entry.get("type") == "string" and "value" in entry:
            entry["value"] = entry["value"].split("\0")[0]
        if entry.get("type") == "array":
            entry["value"] = [element(item) for item in entry["value"]]
    for tensor in value.get("tensors", []):
        if "name" in tensor:
            tensor["name"] = tensor["name"].split("\0")[0]
        dims = tensor["dims"]
        kept = len(dims)
        while kept > 1 and dims[kept - 1] in ("0", "1"):
            kept -= 1
        tensor["dims"] = dims[:kept] if dims else ["1"]
    return value


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ggufcheck", required=True)
    parser.add_argument("--reader", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()

    files = sorted(glob.glob(os.path.join(args.source, "examples/valid/*.gguf")))
    for group in ("valid", "threats", "codes", "hostile", "writers"):
        files += sorted(glob.glob(os.path.join(args.source, "corpus", group, "*.gguf")))
    files += sorted(glob.glob(os.path.join(args.source, "conformance/cases/*.gguf")))
    real = sorted(glob.glob(os.path.join(
        args.source, ".deps/conformance/llama.cpp/models/ggml-vocab-*.gguf")))
    files += real

    # Without llama.cpp's library every comparison would fail with a bare exit status: say what
    # is missing and how to get it, once.
    probe = subprocess.run([args.reader, files[0]], capture_output=True, text=True, timeout=60)
    if "cannot load" in probe.stderr:
        print(probe.stderr.strip())
        print("llama.cpp's reader (libggml-base.so from the npm package "
              "@node-llama-cpp/linux-x64@3.22.1) is missing: run scripts/setup.sh, which fetches "
              "it into .deps/, or set GGUFCHECK_REFERENCE_GGML_LIB to its path")
        return 1

    compared = skipped = 0
    failures = []
    for path in files:
        ours, our_text = run([args.ggufcheck, "dump", "--profile", "llama.cpp", path])
        theirs, their_text = run([args.reader, path])
        if theirs not in (0, 1):
            failures.append(f"{path}: the reader crashed or failed (exit {theirs})")
            continue
        if ours != 0 or theirs != 0:
            skipped += ours != theirs
            continue
        expected = reader_limits(json.loads(our_text))
        actual = json.loads(their_text)
        compared += 1
        if expected != actual:
            for key in expected:
                if expected[key] != actual.get(key):
                    failures.append(f"{path}: '{key}' differs:\n  ggufcheck {expected[key]!r:.300}"
                                    f"\n  llama.cpp {actual.get(key)!r:.300}")
                    break
    for failure in failures:
        print("FAIL", failure)
    print(f"{compared} files compared value by value ({len(real)} real vocabulary files), "
          f"{skipped} accepted by one side only (the differential test's divergences), "
          f"{len(failures)} failed")
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())

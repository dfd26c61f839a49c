#!/usr/bin/env python3
"""Fails when the committed table of chat templates differs from what generate.py writes from
the pinned llama.cpp.

    check_current.py SOURCE_DIR COMMITTED_DIR

Exit 0: current; 1: they differ (the diff is printed; run generate.py and commit); 77: no
llama.cpp source tree (run conformance/setup), which ctest reports as skipped.
"""

from __future__ import annotations

import difflib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, committed = Path(argv[1]), Path(argv[2])
    if not (source / generate.TEMPLATES).is_dir():
        print(f"check_current.py: no llama.cpp source in {source} (run conformance/setup)")
        return 77
    with tempfile.TemporaryDirectory() as scratch:
        if generate.main(["generate.py", str(source), scratch]) != 0:
            return 1
        old = committed / generate.OUTPUT
        old_bytes = old.read_bytes() if old.exists() else b""
        new_bytes = (Path(scratch) / generate.OUTPUT).read_bytes()
        if old_bytes != new_bytes:
            old_lines = old_bytes.decode("utf-8", "replace").splitlines(True)
            new_lines = new_bytes.decode("utf-8", "replace").splitlines(True)
            sys.stdout.writelines(difflib.unified_diff(
                old_lines, new_lines, str(old), f"regenerated {generate.OUTPUT}", n=1))
            print("\ncheck_current.py: the chat-template table is not current: run "
                  "validator/tools/known_templates/generate.py .deps/conformance/llama.cpp "
                  "validator/src/templates/generated and commit the result")
            return 1
    print("check_current.py: the chat-template table is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

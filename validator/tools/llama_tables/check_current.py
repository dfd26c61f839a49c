#!/usr/bin/env python3
"""Fails when the committed tables differ from what generate.py writes from the pinned llama.cpp.

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
    if not (source / "src/llama-arch.cpp").exists():
        print(f"check_current.py: no llama.cpp source in {source} (run conformance/setup)")
        return 77
    with tempfile.TemporaryDirectory() as scratch:
        if generate.main(["generate.py", str(source), scratch]) != 0:
            return 1
        differ = False
        for fresh in sorted(Path(scratch).glob("*.inc")):
            old = committed / fresh.name
            old_text = old.read_text() if old.exists() else ""
            new_text = fresh.read_text()
            if old_text != new_text:
                differ = True
                sys.stdout.writelines(difflib.unified_diff(
                    old_text.splitlines(True), new_text.splitlines(True),
                    str(old), f"regenerated {fresh.name}", n=1))
        if differ:
            print("check_current.py: the tables are not current: run "
                  "validator/tools/llama_tables/generate.py .deps/conformance/llama.cpp "
                  "validator/src/loader/generated and commit the result")
            return 1
    print("check_current.py: the tables are current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

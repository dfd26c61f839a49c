#!/usr/bin/env python3
"""Fails when committed generated tables differ from what their generator writes from the pinned
llama.cpp.

    check_generated.py GENERATOR_DIR SOURCE_DIR COMMITTED_DIR

GENERATOR_DIR holds a generate.py with main(argv) (argv: generate.py SOURCE_DIR OUTPUT_DIR) and
REQUIRED, a path inside SOURCE_DIR it reads. Every *.inc it writes is compared byte for byte with
the one of the same name in COMMITTED_DIR. A generator with DOCS (file names) also writes those
documents (generate.py SOURCE_DIR OUTPUT_DIR --docs DIR), compared with the project's docs/. Exit 0: current; 1: they differ (the diff is printed;
run the generator and commit); 77: no llama.cpp source tree (run conformance/setup), which ctest
reports as skipped.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
import tempfile
from pathlib import Path


def load_generator(directory: Path):
    spec = importlib.util.spec_from_file_location(f"generate_{directory.name}",
                                                  directory / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(directory))
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    generator_dir, source, committed = Path(argv[1]), Path(argv[2]), Path(argv[3])
    generate = load_generator(generator_dir)
    if not (source / generate.REQUIRED).exists():
        print(f"check_generated.py: no llama.cpp source in {source} (run conformance/setup)")
        return 77
    docs = getattr(generate, "DOCS", [])
    project_docs = generator_dir.resolve().parents[2] / "docs"
    with tempfile.TemporaryDirectory() as scratch:
        args = ["generate.py", str(source), scratch]
        if docs:
            args += ["--docs", str(Path(scratch) / "docs")]
        if generate.main(args) != 0:
            return 1
        differ = False
        pairs = [(fresh, committed / fresh.name) for fresh in sorted(Path(scratch).glob("*.inc"))]
        pairs += [(Path(scratch) / "docs" / name, project_docs / name) for name in docs]
        for fresh, old in pairs:
            old_bytes = old.read_bytes() if old.exists() else b""
            new_bytes = fresh.read_bytes()
            if old_bytes != new_bytes:
                differ = True
                sys.stdout.writelines(difflib.unified_diff(
                    old_bytes.decode("utf-8", "replace").splitlines(True),
                    new_bytes.decode("utf-8", "replace").splitlines(True),
                    str(old), f"regenerated {fresh.name}", n=1))
        if differ:
            extra = f" --docs {project_docs}" if docs else ""
            print(f"\ncheck_generated.py: {committed} is not current: run "
                  f"{generator_dir}/generate.py {source} {committed}{extra} and commit the result")
            return 1
    print(f"check_generated.py: {committed} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Writes a llama.cpp-like tree of hostile chat templates and the table the known-templates
generator makes of it, for test_known_templates.cpp to check that every text survives the
compiler byte for byte (the pinned llama.cpp's templates take only the raw-literal path).

    known_templates_fixture.py OUT_DIR

OUT_DIR/tree/models/templates/*.jinja, OUT_DIR/generated/known_templates.inc.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "known_templates"))

import generate  # noqa: E402

TEMPLATES = {
    "control": b"\x1b[0m\x7f\x0b\x0c\t|",
    "crlf": b"{{ x }}\r\n{{ y }}\r\n",
    "empty": b"",
    "escapes": b"\\x41 \\u0041 \\n ??= ??/\nend\\\n\\",
    "latin1": b"caf\xe9 \xff\xfe\n",
    "lone-cr": b"a\rb",
    "nul": b"a\x00b\x00\n\x00",
    "octal-then-digits": b"\x01" b"234\x007",
    "quotes-in-escaped": "\u00e9 )tpl\" \"?\\\x00".encode("utf-8"),
    "raw-delimiters": "{{ \")tpl\\\" }} )tpl\" )tpl1\" R\"tpl(x)tpl\" \u00e9\n".encode("utf-8"),
}


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    folder = out / "tree" / generate.TEMPLATES
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.jinja"):
        stale.unlink()
    for name, data in TEMPLATES.items():
        (folder / f"{name}.jinja").write_bytes(data)
    if generate.main(["generate.py", str(out / "tree"), str(out / "generated")]) != 0:
        return 1
    table = (out / "generated" / generate.OUTPUT).read_text()
    # Both paths are taken: raw (a backslash before a newline, a delimiter the text lacks) and
    # escaped (NUL, CR, invalid UTF-8).
    assert 'R"tpl(\\x41 ' in table, "escapes: expected a raw literal"
    assert 'R"tpl2({{ ")tpl' in table, "raw-delimiters: expected delimiter tpl2"
    assert '"a\\000b\\000\\012"' in table, "nul: expected escapes"
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Writes a llama.cpp-like tree of hostile chat templates and the table the known-templates
generator makes of it, for test_known_templates.cpp to check that every text survives the
compiler byte for byte (the pinned llama.cpp's templates take only the raw-literal path).

    known_templates_fixture.py OUT_DIR

OUT_DIR/tree/models/templates/*.jinja; OUT_DIR/tree/models/ggml-vocab-fixture.gguf, a vocabulary
file whose templates (tokenizer.chat_template and .tool_use, among pairs of every other kind the
generator must step over) are also written as OUT_DIR/vocab/<table name>; and
OUT_DIR/generated/known_templates.inc.
"""

from __future__ import annotations

import struct
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


# The vocabulary file's templates, by the name the table gives them.
VOCAB_TEMPLATES = {
    "ggml-vocab-fixture": ("tokenizer.chat_template", b"{{ x }}\x00\r\n\xff)tpl\""),
    "ggml-vocab-fixture.tool_use": ("tokenizer.chat_template.tool_use", "\u00e9 ok\n".encode()),
}


def _string(data: bytes) -> bytes:
    return struct.pack("<Q", len(data)) + data


def vocab_file() -> bytes:
    """GGUF v3, no tensors: the templates among a scalar, a string, arrays of scalars and of
    strings (tokenizer.chat_templates, which names templates and is none), and a key that only
    starts like a template's."""
    pairs = [
        (b"general.architecture", struct.pack("<I", 8) + _string(b"llama")),
        (b"general.alignment", struct.pack("<II", 4, 32)),
        (b"tokenizer.ggml.scores", struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 1, 2, 3)),
        (b"tokenizer.chat_templates",
         struct.pack("<IIQ", 9, 8, 2) + _string(b"tool_use") + _string(b"rag")),
        (b"tokenizer.chat_templateX", struct.pack("<I", 8) + _string(b"not a template")),
    ]
    for key, text in VOCAB_TEMPLATES.values():
        pairs.append((key.encode(), struct.pack("<I", 8) + _string(text)))
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    for key, value in pairs:
        out += _string(key) + value
    return out + b"\0" * (-len(out) % 32)


def main(argv: list[str]) -> int:
    out = Path(argv[1])
    folder = out / "tree" / generate.TEMPLATES
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.jinja"):
        stale.unlink()
    for name, data in TEMPLATES.items():
        (folder / f"{name}.jinja").write_bytes(data)
    (out / "tree" / generate.VOCABULARIES / "ggml-vocab-fixture.gguf").write_bytes(vocab_file())
    (out / "vocab").mkdir(exist_ok=True)
    for name, (_, text) in VOCAB_TEMPLATES.items():
        (out / "vocab" / name).write_bytes(text)
    if generate.main(["generate.py", str(out / "tree"), str(out / "generated")]) != 0:
        return 1
    table = (out / "generated" / generate.OUTPUT).read_text()
    # Both paths are taken: raw (a backslash before a newline, a delimiter the text lacks) and
    # escaped (NUL, CR, invalid UTF-8).
    assert 'R"tpl(\\x41 ' in table, "escapes: expected a raw literal"
    assert 'R"tpl2({{ ")tpl' in table, "raw-delimiters: expected delimiter tpl2"
    assert '"a\\000b\\000\\012"' in table, "nul: expected escapes"
    assert ('"ggml-vocab-fixture.tool_use", '
            '"models/ggml-vocab-fixture.gguf, tokenizer.chat_template.tool_use"') in table
    assert "not a template" not in table and "GGUFCHECK_KNOWN_TEMPLATE(\"rag\"" not in table
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

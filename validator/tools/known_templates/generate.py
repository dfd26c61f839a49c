#!/usr/bin/env python3
"""Writes the table of the pinned llama.cpp's chat templates from its source tree.

    generate.py SOURCE_DIR OUTPUT_DIR

SOURCE_DIR: llama.cpp's source at the pinned release (conformance/setup clones it into
.deps/conformance/llama.cpp). OUTPUT_DIR: validator/src/templates/generated. Writes
known_templates.inc: every chat template of the tree, sorted by name, each with where it is in the
tree, its byte length, its SHA-256 and its exact text:

- every models/templates/*.jinja (the folder's README.md is not a template), named by its file
  name without ".jinja", its place "models/templates/NAME.jinja";
- every tokenizer.chat_template and tokenizer.chat_template.<name> (tool_use, rag, ...) of every
  models/ggml-vocab-*.gguf (the vocabulary files llama.cpp's tests load), named by the file name
  without ".gguf", then ".<name>" for a named one (ggml-vocab-command-r.tool_use), its place
  "models/ggml-vocab-command-r.gguf, tokenizer.chat_template.tool_use". Their metadata is read
  by read_gguf_templates below (the standard library only; a value that is not a string stops
  the generator, which then needs extending).

The ctest `known_templates_are_current` (tools/check_generated.py) regenerates it and fails on a
difference.

The text must reach the binary byte for byte. A template that is valid UTF-8 without control
characters other than tab and newline is written as a raw string literal whose delimiter does not
occur in it (so `)"` in a template is harmless); any other (NUL, CR, invalid UTF-8, ...) as
ordinary literals with every such byte an octal escape. The C++ side checks each length at compile
time and a test recomputes every SHA-256.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pinned import commit, version  # noqa: E402  (the pinned release, named once)

TEMPLATES = "models/templates"
VOCABULARIES = "models"  # ggml-vocab-*.gguf
TEMPLATE_KEY = "tokenizer.chat_template"
REQUIRED = TEMPLATES  # what check_generated.py looks for in the source tree
OUTPUT = "known_templates.inc"

# GGUF value types: the fixed sizes of the scalars, and the two that are not scalars.
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


class GgufError(ValueError):
    pass


class _Cursor:
    """Bounds-checked little-endian reads over a file's bytes."""

    def __init__(self, data: bytes, name: str):
        self.data, self.pos, self.name = data, 0, name

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise GgufError(f"{self.name}: {n} bytes wanted at offset {self.pos}, past the end")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> bytes:
        return self.take(self.u64())

    def skip(self, value_type: int, depth: int = 0) -> None:
        if value_type in _SCALAR_SIZES:
            self.take(_SCALAR_SIZES[value_type])
        elif value_type == _STRING:
            self.string()
        elif value_type == _ARRAY and depth < 8:
            element, count = self.u32(), self.u64()
            if element in _SCALAR_SIZES:
                self.take(count * _SCALAR_SIZES[element])  # one bounds check for the whole array
            else:
                for _ in range(count):
                    self.skip(element, depth + 1)
        else:
            raise GgufError(f"{self.name}: value type {value_type} at offset {self.pos}")


def read_gguf_templates(path: Path) -> list[tuple[str, bytes]]:
    """The (key, text) of every tokenizer.chat_template and tokenizer.chat_template.<name> of a
    GGUF v2/v3 little-endian file, in the file's order."""
    cursor = _Cursor(path.read_bytes(), path.name)
    if cursor.take(4) != b"GGUF" or cursor.u32() not in (2, 3):
        raise GgufError(f"{path.name}: not a GGUF v2/v3 little-endian file")
    cursor.u64()  # tensor count
    templates = []
    for _ in range(cursor.u64()):
        key = cursor.string().decode("utf-8")
        value_type = cursor.u32()
        if key == TEMPLATE_KEY or key.startswith(TEMPLATE_KEY + "."):
            if value_type != _STRING:
                raise GgufError(f"{path.name}: {key} is of type {value_type}, not a string: "
                                f"extend generate.py")
            templates.append((key, cursor.string()))
        else:
            cursor.skip(value_type)
    return templates


def collect(source: Path) -> list[tuple[str, str, bytes]]:
    """(name, place in the tree, text) of every template, sorted by name."""
    entries = [(p.stem, f"{TEMPLATES}/{p.name}", p.read_bytes())
               for p in (source / TEMPLATES).glob("*.jinja")]
    for path in (source / VOCABULARIES).glob("ggml-vocab-*.gguf"):
        for key, text in read_gguf_templates(path):
            name = path.stem + key[len(TEMPLATE_KEY):]
            entries.append((name, f"{VOCABULARIES}/{path.name}, {key}", text))
    entries.sort(key=lambda e: e[0])
    names = [e[0] for e in entries]
    if len(names) != len(set(names)):
        raise GgufError("two templates of the tree have the same name")
    return entries


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _raw_safe(data: bytes) -> bool:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any((ord(c) < 0x20 and c not in "\t\n") or ord(c) == 0x7F for c in text)


def _raw_literal(data: bytes) -> str:
    text = data.decode("utf-8")
    for n in range(1000):
        delimiter = "tpl" if n == 0 else f"tpl{n}"
        if f"){delimiter}\"" not in text:
            return f'R"{delimiter}({text}){delimiter}"'
    raise ValueError("no raw string delimiter fits")


def _escaped_literal(data: bytes) -> str:
    # One literal per line, concatenated by the compiler; octal escapes are always three digits,
    # so a following digit cannot join them (as it would a \x escape).
    pieces, current = [], []
    for byte in data:
        c = chr(byte)
        if c == "\\" or c == '"':
            current.append("\\" + c)
        elif c == "?":
            current.append("\\?")  # never part of a trigraph
        elif 0x20 <= byte < 0x7F:
            current.append(c)
        else:
            current.append(f"\\{byte:03o}")
        if c == "\n":
            pieces.append('"' + "".join(current) + '"')
            current = []
    if current or not pieces:
        pieces.append('"' + "".join(current) + '"')
    return "\n    ".join(pieces)


def generate(source: Path) -> str:
    out = [
        f"// Generated by validator/tools/known_templates/generate.py from {version(source)}:",
        f"// every {TEMPLATES}/*.jinja and every {TEMPLATE_KEY}* of every",
        f"// {VOCABULARIES}/ggml-vocab-*.gguf, sorted by name.",
        "// Do not edit: run validator/tools/known_templates/generate.py .deps/conformance/llama.cpp",
        "// validator/src/templates/generated (ctest known_templates_are_current).",
        "// GGUFCHECK_KNOWN_TEMPLATE(name, place in llama.cpp, bytes, SHA-256, text)",
        f"GGUFCHECK_KNOWN_TEMPLATES_VERSION({quote(version(source))}, {quote(commit(source))})",
    ]
    for name, place, data in collect(source):
        literal = _raw_literal(data) if _raw_safe(data) else _escaped_literal(data)
        out.append(f"GGUFCHECK_KNOWN_TEMPLATE({quote(name)}, {quote(place)}, "
                   f"{len(data)},\n    \"{hashlib.sha256(data).hexdigest()}\",\n    {literal})")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, output = Path(argv[1]), Path(argv[2])
    if not (source / TEMPLATES).is_dir():
        print(f"generate.py: {source} is not a llama.cpp source tree (run conformance/setup)", file=sys.stderr)
        return 2
    try:
        table = generate(source)
    except (GgufError, UnicodeDecodeError) as err:
        print(f"generate.py: {err}", file=sys.stderr)
        return 2
    output.mkdir(parents=True, exist_ok=True)
    # Bytes, not text: newline translation must never touch the templates.
    (output / OUTPUT).write_bytes(table.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

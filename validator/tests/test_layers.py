"""The library's layers (validator/src/README.md): every #include under validator/src points at
its own layer or one below it, every folder is a layer, the README lists them in the build's
order, and only input/ reads the bytes of an input by itself. The build's per-layer libraries catch calls upward (GGUFCHECK_LAYER_CHECK); this catches
the includes that compile either way, such as an inline function of a layer above.

Run by ctest with GGUFCHECK_SOURCE (the repository) and GGUFCHECK_LAYERS (the build's order,
bottom first, separated by ';').
"""

import os
import pathlib
import re

import pytest

SOURCE = pathlib.Path(os.environ.get("GGUFCHECK_SOURCE", pathlib.Path(__file__).parents[2]))
SRC = SOURCE / "validator" / "src"
LAYERS = [name for name in os.environ.get("GGUFCHECK_LAYERS", "").split(";") if name]
RANK = {name: rank for rank, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".inc", ".def"}


def sources():
    for path in sorted(SRC.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            yield path


def upward_includes(layer, text):
    """The includes of a file in `layer` that name a layer above it."""
    return [
        target
        for target in INCLUDE.findall(text)
        if target in RANK and RANK[target] > RANK[layer]
    ]


def test_the_build_names_the_layers():
    assert LAYERS, "GGUFCHECK_LAYERS is empty: run through ctest"
    assert len(set(LAYERS)) == len(LAYERS), LAYERS


def test_every_folder_is_a_layer():
    folders = sorted(p.name for p in SRC.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(LAYERS)


def test_no_include_points_upward():
    upward = []
    for path in sources():
        layer = path.relative_to(SRC).parts[0]
        if layer not in RANK:
            continue
        for target in upward_includes(layer, path.read_text(encoding="utf-8")):
            upward.append(f"{path.relative_to(SOURCE)}: {layer} includes {target}/, a layer above it")
    assert not upward, "\n".join(upward)


def test_the_check_sees_an_upward_include():
    # The test's own rule on a made-up file: read/ including validate/ is upward, the reverse is not.
    assert upward_includes("read", '#include "validate/validate.hpp"\n') == ["validate"]
    assert upward_includes("validate", '#include "read/reader.hpp"\n') == []
    assert upward_includes("read", '#include <vector>\n#include "ggufcheck/format.hpp"\n') == []


def test_the_readme_lists_the_layers_in_order():
    readme = (SRC / "README.md").read_text(encoding="utf-8")
    # The layer table: one row per layer, "| `name/` | ...", bottom first.
    listed = re.findall(r"^\| `([a-z_]+)/` \|", readme, re.MULTILINE)
    assert listed == LAYERS


# --- only input/ touches input bytes --------------------------------------------------------------
#
# Outside input/, nothing reads a file (pread, read, a file mapping), copies numbers out of a
# pointer (memcpy from anything but a variable's address) or reinterprets a pointer, but for the
# files below: each works on bytes the input handed over as a bounded view (text, tensor pieces)
# or on bytes that are not an input's at all. Every entry must still need its exemption.
EXEMPT = {
    "util/utf8.cpp": "UTF-8 validation of a view, a word or a SIMD vector at a time",
    "util/utf8.hpp": "UTF-8 validation of a view, a word at a time",
    "util/duplicates.cpp": "the address of a local as a seed: no input bytes",
    "util/table_memory.hpp": "anonymous memory for big tables",
    "templates/known_templates.cpp": "hashes template text, a view, a word at a time",
    "llama_loader/token_index.cpp": "hashes token texts, views, a word at a time",
    "data/kernels.cpp": "the kernels read tensor pieces the scan got through the input",
    "write/writer.cpp": "the writer writes bytes; it reads none",
    "dump/dump.cpp": "a digest's bytes as a string",
    "hash/manifest.cpp": "a digest's bytes as hex",
    "remote/client.cpp": "libcurl's buffer of a response, before it is an input",
    "remote/curl_library.cpp": "libcurl's functions from dlsym: no input bytes",
}
BYTE_ACCESS = re.compile(
    r"\bpread\s*\(|(?<![\w>)])::read\s*\(|\bmmap\s*\(|memcpy\s*\([^,;]+,\s*(?![\s&])|reinterpret_cast\s*<"
)


def byte_accesses(text):
    """The lines of `text` (code, not comments) that touch bytes by themselves: mappings that are
    anonymous memory (MAP_ANONYMOUS in the same call) do not count."""
    lines = text.split("\n")
    found = []
    for number, line in enumerate(lines, 1):
        code = line.split("//", 1)[0]
        if not BYTE_ACCESS.search(code):
            continue
        if re.search(r"\bmmap\s*\(", code) and "MAP_ANONYMOUS" in " ".join(lines[number - 1 : number + 2]):
            continue
        found.append((number, line.strip()))
    return found


def test_only_input_touches_input_bytes():
    touching = {}
    for path in sources():
        relative = path.relative_to(SRC).as_posix()
        if relative.startswith("input/"):
            continue
        found = byte_accesses(path.read_text(encoding="utf-8"))
        if found:
            touching[relative] = found
    unexempt = [
        f"validator/src/{relative}:{number}: {line}"
        for relative, found in sorted(touching.items())
        if relative not in EXEMPT
        for number, line in found
    ]
    assert not unexempt, "bytes read outside input/:\n" + "\n".join(unexempt)
    stale = sorted(set(EXEMPT) - set(touching))
    assert not stale, f"exempt but touching no bytes any more: {stale}"


def test_the_byte_check_sees_each_kind_of_access():
    assert byte_accesses("  n = ::pread(fd, buffer, n, at);")
    assert byte_accesses("  std::memcpy(&v, at, 8);")
    assert byte_accesses("  auto* p = reinterpret_cast<const char*>(bytes);")
    assert byte_accesses("  void* m = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE, fd, 0);")
    assert not byte_accesses("  std::memcpy(&f, &bits, sizeof f);")
    assert not byte_accesses("  void* m = ::mmap(nullptr, n, PROT_READ,\n      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);")
    assert not byte_accesses("  // pread(fd, ...) in a comment")
    assert not byte_accesses("std::optional<Manifest> Manifest::read(std::string_view text) {")


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__, "-q", "-p", "no:cacheprovider"]))

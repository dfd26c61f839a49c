"""The pinned llama.cpp that the table generators read (llama_tables/, known_templates/,
file_types/): its commit and the text naming it in every generated file, defined once."""

from __future__ import annotations

from pathlib import Path

NODE_LLAMA_CPP = "3.22.1"


def commit(source: Path) -> str:
    """The full commit of the tree, from conformance/setup's stamp; "unknown" without it."""
    stamp = source / ".installed"
    return stamp.read_text().strip() if stamp.exists() else "unknown"


def version(source: Path) -> str:
    """"llama.cpp de3ff815ea7d (node-llama-cpp 3.22.1)"."""
    full = commit(source)
    return f"llama.cpp {full[:12] if full != 'unknown' else full} (node-llama-cpp {NODE_LLAMA_CPP})"

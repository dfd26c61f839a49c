"""No `severity=` setting turns a file that cannot be read into a pass: every code that ends the
reading ("fixed" in `ggufcheck list`) refused as ValueError, on the code's example file in
corpus/codes/, by code and by name, at every lower level; the file still fails without it.

Run by ctest (python_package), as test_ggufcheck.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ggufcheck

SOURCE = Path(os.environ.get("GGUFCHECK_SOURCE", Path(__file__).resolve().parents[2]))
CODES = SOURCE / "corpus" / "codes"

FIXED = [d for d in ggufcheck.catalogue() if d["ends_reading"]]


def example_of(code: str, name: str) -> Path:
    return CODES / f"{code}-{name}.gguf"


def test_the_fixed_codes_are_the_catalogues() -> None:
    codes = {d["code"] for d in FIXED}
    assert "GGUF0001" in codes and "GGUF1002" in codes and "GGUF3001" in codes
    assert len(codes) == 25


@pytest.mark.parametrize("entry", [d for d in FIXED if d["code"] != "GGUF0001"],
                         ids=lambda d: d["code"])
def test_no_severity_setting_passes_a_file_with_a_fixed_code(entry: dict) -> None:
    path = example_of(entry["code"], entry["name"])
    assert path.is_file(), path
    # GGUF0003's example is a big-endian file the data check cannot read: it needs data=True.
    data = entry["code"] == "GGUF0003"
    for profile in ("strict", "spec", "llama.cpp"):
        plain = ggufcheck.validate(path, profile=profile, data=data)
        assert not plain.ok
        assert entry["code"] in {f.code for f in plain.findings}
        for what in (entry["code"], entry["name"]):
            for level in ("off", "note", "warning"):
                with pytest.raises(ValueError, match="cannot be read as GGUF"):
                    ggufcheck.validate(path, profile=profile, data=data, severity={what: level})
        raised = ggufcheck.validate(path, profile=profile, data=data,
                                    severity={entry["code"]: "error"})
        assert not raised.ok


def test_an_unreadable_file_cannot_be_silenced(tmp_path: Path) -> None:
    for level in ("off", "note", "warning"):
        with pytest.raises(ValueError, match="cannot be read as GGUF"):
            ggufcheck.validate(tmp_path / "missing.gguf", severity={"GGUF0001": level})
    with pytest.raises(ggufcheck.UnreadableError):
        ggufcheck.validate(tmp_path / "missing.gguf", severity={"GGUF0001": "error"})

"""ggufcheck: a strict, bounds-checked validator for GGUF model files (the llama.cpp format).

    >>> import ggufcheck
    >>> report = ggufcheck.validate("model.gguf")
    >>> report.ok, report.exit_status
    (True, 0)
    >>> for f in report.findings:
    ...     print(f.code, f.name, f.severity, hex(f.offset), f.path, f.message, f.hint)

The same checks as the ``ggufcheck`` command (its profiles, ``--data``, the model and chat
template checks), the same findings, the same JSON (``report.to_json()``). Reading a file
releases the GIL: other threads run during a long scan. An input that cannot be read raises
UnreadableError (an OSError) carrying its report. ``python -m ggufcheck`` is the command line.
"""

from __future__ import annotations

import json as _json
import os as _os
from collections.abc import Iterable, Mapping
from typing import Any, Union

from . import _ggufcheck

__all__ = [
    "Error",
    "UnreadableError",
    "HashError",
    "Report",
    "Finding",
    "validate",
    "info",
    "hash",
    "catalogue",
    "explain",
    "__version__",
    "version_info",
]

__version__: str = _ggufcheck.version()
#: The build: its version, git commit, and the llama.cpp the llama.cpp profile follows.
version_info: dict[str, str] = {
    "version": __version__,
    "commit": _ggufcheck.commit(),
    "llama_cpp": _ggufcheck.llama_cpp_version(),
}

Finding = _ggufcheck.Finding

PathOrBytes = Union[str, "_os.PathLike[str]", bytes, bytearray, memoryview]
StrPath = Union[str, "_os.PathLike[str]"]


class Error(Exception):
    """Base class of ggufcheck's exceptions."""


class UnreadableError(Error, OSError):
    """The input could not be read (a missing file, a permission, a failed download): nothing was
    validated. ``report`` holds the one GGUF0001 finding that says why (exit status 2)."""

    def __init__(self, message: str, report: Report | None = None) -> None:
        super().__init__(message)
        self.report = report


class HashError(Error):
    """The file's tensors could not be hashed: a tensor's bytes are not inside the file, or two
    overlap (``ggufcheck check`` says which)."""


class Report:
    """What ggufcheck found in one input."""

    __slots__ = ("_native",)

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def path(self) -> str:
        return self._native.path

    @property
    def findings(self) -> list[Finding]:
        """Every finding kept, by file offset (at most the findings limit; all are counted)."""
        return self._native.findings

    @property
    def errors(self) -> int:
        return self._native.errors

    @property
    def warnings(self) -> int:
        return self._native.warnings

    @property
    def notes(self) -> int:
        return self._native.notes

    @property
    def findings_dropped(self) -> int:
        return self._native.findings_dropped

    @property
    def exit_status(self) -> int:
        """As the command's: 0 no error, 1 errors found, 2 the input could not be read."""
        return self._native.exit_status

    @property
    def ok(self) -> bool:
        """True when the input was read and has no error (warnings and notes allowed)."""
        return self._native.exit_status == 0

    @property
    def facts(self) -> dict[str, Any]:
        """The header's facts: version, counts, alignment, data start... (docs/json-output.md)."""
        return self.to_dict()["files"][0]["facts"]

    def to_json(self) -> str:
        """The report as ``ggufcheck --format json`` writes it (with the options in force)."""
        return self._native.to_json()

    def to_dict(self) -> dict[str, Any]:
        return _json.loads(self.to_json())

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return (
            f"<ggufcheck.Report {self.path!r}: exit_status={self.exit_status}, "
            f"{self.errors} errors, {self.warnings} warnings, {self.notes} notes>"
        )


def _is_buffer(source: object) -> bool:
    return isinstance(source, (bytes, bytearray, memoryview))


def _stable(source: bytes | bytearray | memoryview) -> bytes | memoryview:
    """The bytes to read: a writable buffer is copied first, since another thread may change
    it while the GIL is released (a report of no one state of the bytes, or worse); bytes and
    read-only views are read where they are. A view the extension refuses (several dimensions,
    not contiguous) is passed on for it to say so."""
    if isinstance(source, bytearray):
        return bytes(source)
    if isinstance(source, memoryview) and not source.readonly:
        if source.ndim > 1 or not source.c_contiguous:
            return source
        return source.tobytes()
    return source


def _path(source: object) -> str:
    if isinstance(source, (str, _os.PathLike)):
        path = _os.fsdecode(source)
        if "\0" in path:
            raise ValueError(f"a path cannot contain a NUL character: {path!r}")
        return path
    raise TypeError(
        f"expected a path (str or os.PathLike) or bytes-like data, not {type(source).__name__}"
    )


def _mapping(value: object, what: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(
            f"{what} must be a mapping such as a dict ({{name: value}}), not "
            f"{type(value).__name__}"
        )
    return dict(value)


def validate(
    source: PathOrBytes,
    *,
    profile: str = "strict",
    data: bool = False,
    threads: int = 0,
    werror: bool = False,
    model_checks: bool = True,
    template_checks: bool = True,
    severity: Mapping[str, str] | None = None,
    limits: Mapping[str, int] | None = None,
    name: str | None = None,
    base: StrPath | None = None,
) -> Report:
    """Validates a GGUF file (a path; with a build that reads URLs, https:// and hf:// too) or
    GGUF bytes in memory.

    profile: "strict" (the CI gate), "spec" or "llama.cpp". data: also read every tensor's bytes
    (``--data``), with ``threads`` threads (0: one per core). severity: {code or name: "error" |
    "warning" | "note" | "off"}; a code that means the file cannot be read as GGUF (``fixed`` in
    ``ggufcheck list``) cannot be disabled or downgraded: ValueError. limits: {"depth" | "kv-count" | "tensor-count" |
    "string-length" | "array-length" | "findings" | "template-bytes": value}. name: what the
    report calls bytes (default "<buffer>"). base: a LoRA adapter's base model, a local file
    (``--base``).

    A writable buffer (bytearray, writable memoryview) is copied first, so that another thread
    changing it cannot tear the report; bytes are read in place.

    Raises UnreadableError when the input cannot be read, ValueError for a bad option (or a
    path with a NUL character), TypeError for an option of the wrong type (severity and limits
    are mappings).
    """
    options = (
        profile,
        bool(data),
        _count(threads, "threads"),
        bool(werror),
        bool(model_checks),
        bool(template_checks),
        _mapping(severity, "severity"),
        _mapping(limits, "limits"),
        "" if base is None else _path(base),
    )
    if _is_buffer(source):
        native = _ggufcheck.validate_buffer(_stable(source), name or "<buffer>", *options)
    else:
        native = _ggufcheck.validate_path(_path(source), *options)
    report = Report(native)
    if native.unreadable:
        messages = [f.message for f in native.findings if f.code == "GGUF0001"]
        raise UnreadableError(messages[0] if messages else f"cannot read {report.path}", report)
    return report


def info(
    source: PathOrBytes, *, profile: str = "strict", full: bool = False, name: str | None = None
) -> dict[str, Any]:
    """What is in a model, as ``ggufcheck info --format json`` shows it for one file: container,
    architecture, hyperparameters, vocabulary, chat templates, tensors by type, split set,
    metadata, and the verdict (docs/info.md). full: arrays, strings and tensors whole.

    A writable buffer is copied first, as by validate().

    Raises UnreadableError when the input cannot be read, ValueError for a bad profile or a path
    with a NUL character.
    """
    if _is_buffer(source):
        text = _ggufcheck.info_buffer(_stable(source), name or "<buffer>", profile, bool(full))
    else:
        text = _ggufcheck.info_path(_path(source), profile, bool(full))
    document = _json.loads(text)["files"][0]
    verdict = document.get("verdict", {})
    if verdict.get("exit_status") == 2:
        raise UnreadableError(verdict.get("reason") or f"cannot read {document['path']}")
    return document


def hash(  # noqa: A001 - the command's name
    paths: StrPath | Iterable[StrPath],
    *,
    algorithms: Iterable[str] = ("sha256",),
    per_tensor: bool = True,
    threads: int = 0,
) -> dict[str, Any]:
    """Digests of a model's tensor data (one file, or a split set's shards in order): the
    manifest record of ``ggufcheck hash --format json`` (docs/hash.md): per tensor its name,
    type, shape and digests, and over the whole model its digests and the Merkle root.
    algorithms: any of "xxh64", "sha1", "sha256", "uuid" (sha256 is always computed). Files
    only, as the command: bytes in memory are not hashed. per_tensor must stay True: a manifest
    record always lists every tensor (the command refuses ``--format json --no-layer``).

    Raises UnreadableError when a file cannot be read, HashError when its tensors cannot be
    placed in it, TypeError for bytes, ValueError for per_tensor=False or a path with a NUL.
    """
    if _is_buffer(paths):
        raise TypeError(
            "hash reads files: give a path (or the shards' paths), not "
            f"{type(paths).__name__}; write bytes in memory to a file to hash them"
        )
    if isinstance(paths, (str, _os.PathLike)):
        paths = [paths]
    listed = [_path(p) for p in paths]
    if not listed:
        raise ValueError("hash needs at least one path")
    status, error, text = _ggufcheck.hash_paths(
        listed, list(algorithms), bool(per_tensor), _count(threads, "threads")
    )
    if status == 2:
        raise UnreadableError(error)
    if status != 0:
        raise HashError(error)
    return _json.loads(text)


def catalogue() -> list[dict[str, Any]]:
    """Every diagnostic: code, name, area, meaning and severity per profile (``ggufcheck list``)."""
    return _json.loads(_ggufcheck.catalogue_json())["diagnostics"]


def explain(code_or_name: str) -> str:
    """A diagnostic's page (``ggufcheck explain``): what it means, an example, how to fix it."""
    return _ggufcheck.explain(code_or_name)


def _count(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1024:
        raise ValueError(f"{what} must be a whole number from 0 to 1024, not {value!r}")
    return value

"""The Python package against the command line it wraps: the same verdicts, findings and JSON,
the options, the exceptions, info/hash/catalogue/explain, `python -m ggufcheck`, and the GIL
released while a file is read.

Run by ctest (python_package) with PYTHONPATH at the build's python/ directory,
GGUFCHECK_SOURCE the repository and GGUFCHECK_CLI the built command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ggufcheck

SOURCE = Path(os.environ.get("GGUFCHECK_SOURCE", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("GGUFCHECK_CLI", "ggufcheck")
EXAMPLES = SOURCE / "examples"
VALID = EXAMPLES / "valid" / "tiny-llama.gguf"
BROKEN = EXAMPLES / "broken" / "three-problems.gguf"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], capture_output=True, text=True, check=False)


def without_build(doc: dict) -> dict:
    """A JSON report without what differs between two builds of the same code."""
    doc = dict(doc)
    doc.pop("tool", None)
    return doc


def test_the_documented_one_liner() -> None:
    assert ggufcheck.validate(str(VALID)).ok is True


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*/*.gguf")), ids=lambda p: p.name)
def test_every_example_reports_as_the_command_does(path: Path) -> None:
    report = ggufcheck.validate(path)
    command = cli("--format", "json", str(path))
    assert report.exit_status == command.returncode
    assert report.ok == (command.returncode == 0)
    assert bool(report) == report.ok
    expected = json.loads(command.stdout)
    assert without_build(report.to_dict()) == without_build(expected)
    listed = expected["files"][0]["findings"]
    assert [(f.code, f.name, f.severity, f.offset, f.length, f.path, f.message, f.hint)
            for f in report.findings] == [
        (f["code"], f["name"], f["severity"], f["offset"], f["length"], f["path"], f["message"],
         f["hint"]) for f in listed]
    assert (report.errors, report.warnings, report.notes) == (
        expected["files"][0]["summary"]["errors"],
        expected["files"][0]["summary"]["warnings"],
        expected["files"][0]["summary"]["notes"],
    )


def test_bytes_bytearray_and_memoryview_give_the_files_findings() -> None:
    data = BROKEN.read_bytes()
    from_file = [(f.code, f.offset) for f in ggufcheck.validate(BROKEN).findings]
    for source in (data, bytearray(data), memoryview(data)):
        report = ggufcheck.validate(source, name="mem.gguf")
        assert report.path == "mem.gguf"
        assert [(f.code, f.offset) for f in report.findings] == from_file
    assert ggufcheck.validate(data).path == "<buffer>"
    assert not ggufcheck.validate(b"").ok


def test_options_change_the_findings_as_the_clis_do() -> None:
    options = dict(profile="spec", severity={"non-canonical-bool": "off", "GGUF2004": "note"},
                   limits={"findings": 50}, werror=True, data=True, threads=1)
    report = ggufcheck.validate(BROKEN, **options)
    command = cli("--format", "json", "--profile", "spec", "--disable", "non-canonical-bool",
                  "--severity", "GGUF2004=note", "--limit", "findings=50", "--werror", "--data",
                  "-j", "1", str(BROKEN))
    assert without_build(report.to_dict()) == without_build(json.loads(command.stdout))
    codes = {f.code: f.severity for f in report.findings}
    assert "GGUF2012" not in codes
    assert codes["GGUF2004"] == "note"
    recorded = report.to_dict()["options"]
    assert recorded["profile"] == "spec" and recorded["data"] is True
    assert recorded["severity_overrides"] == {"GGUF2012": "off", "GGUF2004": "note"}


def test_no_model_checks_and_facts() -> None:
    report = ggufcheck.validate(VALID, model_checks=False, template_checks=False)
    assert report.ok
    assert report.facts["version"] == 3
    assert report.facts["tensor_count"] == 11


@pytest.mark.parametrize(
    "options, message",
    [
        ({"profile": "lenient"}, "profile 'lenient'"),
        ({"severity": {"GGUF9999x": "off"}}, "unknown diagnostic"),
        ({"severity": {"GGUF2012": "loud"}}, "'loud' is not error, warning, note or off"),
        ({"limits": {"speed": 1}}, "unknown limit 'speed'"),
        ({"limits": {"depth": 0}}, "depth"),
        ({"threads": -1}, "threads"),
    ],
)
def test_bad_options_are_value_errors(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        ggufcheck.validate(VALID, **options)


def test_wrong_input_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="expected a path"):
        ggufcheck.validate(42)  # type: ignore[arg-type]


def test_unreadable_input_raises_with_its_report(tmp_path: Path) -> None:
    missing = tmp_path / "missing.gguf"
    with pytest.raises(ggufcheck.UnreadableError, match="cannot open") as caught:
        ggufcheck.validate(missing)
    assert isinstance(caught.value, OSError)
    assert caught.value.report is not None
    assert caught.value.report.exit_status == 2
    assert [f.code for f in caught.value.report.findings] == ["GGUF0001"]
    with pytest.raises(ggufcheck.UnreadableError):
        ggufcheck.validate(tmp_path)  # a directory is not a file
    with pytest.raises(ggufcheck.UnreadableError):
        ggufcheck.info(missing)
    with pytest.raises(ggufcheck.UnreadableError):
        ggufcheck.hash(missing)


def test_info_is_the_commands_json() -> None:
    command = cli("info", "--format", "json", str(VALID))
    assert ggufcheck.info(VALID) == json.loads(command.stdout)["files"][0]
    from_bytes = ggufcheck.info(VALID.read_bytes(), name="x.gguf")
    assert from_bytes["path"] == "x.gguf"
    assert from_bytes["verdict"]["exit_status"] == 0


def test_hash_is_the_manifests_record() -> None:
    command = cli("hash", "--format", "json", "--xxh64", "--sha256", str(VALID))
    expected = json.loads(command.stdout)["models"][0]
    got = ggufcheck.hash(VALID, algorithms=["xxh64", "sha256"])
    assert got == expected
    assert len(got["tensors"]) == 11
    with pytest.raises(ValueError, match="unknown digest"):
        ggufcheck.hash(VALID, algorithms=["md5"])
    with pytest.raises(ggufcheck.HashError):
        ggufcheck.hash(EXAMPLES / "broken" / "hostile-tensor-count.gguf")


def test_catalogue_and_explain() -> None:
    entries = ggufcheck.catalogue()
    assert entries == json.loads(cli("list", "--format", "json").stdout)["diagnostics"]
    assert {"GGUF0001", "GGUF2012"} <= {e["code"] for e in entries}
    assert ggufcheck.explain("GGUF2012") == cli("explain", "GGUF2012").stdout
    assert ggufcheck.explain("non-canonical-bool") == ggufcheck.explain("GGUF2012")
    with pytest.raises(ValueError, match="unknown diagnostic"):
        ggufcheck.explain("GGUF0000")


def test_version_matches_the_command() -> None:
    first = cli("--version").stdout.splitlines()[0]
    assert first == (f"ggufcheck {ggufcheck.__version__} "
                     f"(git {ggufcheck.version_info['commit']})")
    assert "node-llama-cpp" in ggufcheck.version_info["llama_cpp"]


@pytest.mark.parametrize(
    "args",
    [
        [str(VALID)],
        [str(BROKEN)],
        ["--format", "json", str(BROKEN), str(VALID)],
        ["check", "--profile", "nope", str(VALID)],
        ["list"],
        ["--version"],
        ["no-such-file.gguf"],
    ],
    ids=["valid", "broken", "json", "usage-error", "list", "version", "missing"],
)
def test_python_dash_m_is_the_command(args: list[str]) -> None:
    module = subprocess.run([sys.executable, "-m", "ggufcheck", *args], capture_output=True,
                            text=True, check=False)
    command = cli(*args)
    assert (module.returncode, module.stdout, module.stderr) == (
        command.returncode, command.stdout, command.stderr)


def test_the_gil_is_released_while_a_file_is_read(tmp_path: Path) -> None:
    """validate() blocks in C++ reading a FIFO until this thread writes the file into it. Were
    the GIL held during the read, this thread could never run to write: the child would hang,
    and the guard timeout below fails the test (it is a hang guard, not a timing test)."""
    script = f"""
import os, sys, threading
sys.path.insert(0, {str(Path(ggufcheck.__file__).parent.parent)!r})
import ggufcheck
fifo = {str(tmp_path / "model.gguf")!r}
os.mkfifo(fifo)
result = {{}}
def check():
    result["report"] = ggufcheck.validate(fifo)
worker = threading.Thread(target=check)
worker.start()
with open(fifo, "wb") as pipe:  # opens once the reader has, inside validate()
    pipe.write(open({str(VALID)!r}, "rb").read())
worker.join()
print(result["report"].exit_status, result["report"].errors)
"""
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           timeout=120, check=False)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["0", "0"]


# --- defects a new user found (each test fails on the package before its fix) ----------------


def test_hash_refuses_what_the_command_refuses() -> None:
    """per_tensor=False gave a record with an all-zero header_sha256 and merkle_root; the
    command refuses --format json --no-layer, and so does hash()."""
    refused = cli("hash", "--format", "json", "--no-layer", str(VALID))
    assert refused.returncode == 3
    assert "every tensor" in refused.stderr
    with pytest.raises(ValueError, match="every tensor"):
        ggufcheck.hash(VALID, algorithms=["xxh64", "uuid"], per_tensor=False)
    record = ggufcheck.hash(VALID, algorithms=["xxh64", "uuid"])
    command = cli("hash", "--format", "json", "--xxh64", "--uuid", str(VALID))
    assert record == json.loads(command.stdout)["models"][0]
    zero = "0" * 64
    assert record["digests"]["merkle_root"] != zero
    assert all(f["header_sha256"] != zero for f in record["files"])


@pytest.mark.parametrize("data", [b"GGUF", bytearray(b"GGUF"), memoryview(b"GGUF")],
                         ids=["bytes", "bytearray", "memoryview"])
def test_hash_of_bytes_says_it_reads_files(data: object) -> None:
    """The signature accepted bytes-like data, and a TypeError about an int came out."""
    with pytest.raises(TypeError, match="hash reads files"):
        ggufcheck.hash(data)  # type: ignore[arg-type]
    annotation = str(ggufcheck.hash.__annotations__["paths"])
    assert "bytes" not in annotation and "memoryview" not in annotation


def test_a_path_with_a_nul_is_a_value_error(tmp_path: Path) -> None:
    """The path went to the system as a C string, cut at the NUL: another file was read."""
    named = str(VALID) + "\0.gguf"
    for call in (ggufcheck.validate, ggufcheck.info, ggufcheck.hash):
        with pytest.raises(ValueError, match="NUL"):
            call(named)
    with pytest.raises(ValueError, match="NUL"):
        ggufcheck.hash([VALID, named])
    # The extension refuses them too, whoever calls it.
    from ggufcheck import _ggufcheck
    with pytest.raises(ValueError, match="NUL"):
        _ggufcheck.validate_path(named, "strict", False, 0, False, True, True, {}, {})
    with pytest.raises(ValueError, match="NUL"):
        _ggufcheck.info_path(named, "strict", False)
    with pytest.raises(ValueError, match="NUL"):
        _ggufcheck.hash_paths([named], ["sha256"], True, 0)


@pytest.mark.parametrize("option", ["limits", "severity"])
@pytest.mark.parametrize("value", [["depth=1"], [], [("depth", 1)], "depth=1", 3],
                         ids=["list", "empty list", "list of pairs", "str", "int"])
def test_options_that_are_not_mappings_are_type_errors(option: str, value: object) -> None:
    """limits=[...] was read through dict(), so a list was ignored or misread, never refused."""
    with pytest.raises(TypeError, match=f"{option} must be a mapping"):
        ggufcheck.validate(VALID, **{option: value})


def test_thread_counts_outside_the_commands_range_are_value_errors() -> None:
    for threads in (1025, 100000, 2**32 - 1):
        with pytest.raises(ValueError, match="0 to 1024"):
            ggufcheck.validate(VALID, data=True, threads=threads)
        with pytest.raises(ValueError, match="0 to 1024"):
            ggufcheck.hash(VALID, threads=threads)
    assert ggufcheck.validate(VALID, data=True, threads=1024).ok
    # The extension's own check, behind the package's.
    from ggufcheck import _ggufcheck
    with pytest.raises(ValueError, match="0 to 1024"):
        _ggufcheck.validate_path(str(VALID), "strict", True, 1025, False, True, True, {}, {})
    with pytest.raises(ValueError, match="0 to 1024"):
        _ggufcheck.hash_paths([str(VALID)], ["sha256"], True, 100000)


@pytest.mark.parametrize("function", ["validate", "info"])
def test_a_writable_buffer_is_copied_before_it_is_read(
        function: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """info() of a bytearray that another thread changed during the call raised the JSON
    parser's RuntimeError: the extension now gets an immutable copy of a writable buffer (and
    bytes or a read-only view as they are)."""
    from ggufcheck import _ggufcheck
    native = getattr(_ggufcheck, f"{function}_buffer")
    handed: list[object] = []

    def spy(buffer: object, *args: object) -> object:
        handed.append(buffer)
        return native(buffer, *args)

    monkeypatch.setattr(_ggufcheck, f"{function}_buffer", spy)
    data = VALID.read_bytes()
    call = getattr(ggufcheck, function)
    for given in (bytearray(data), memoryview(bytearray(data))):
        result = call(given)
        assert isinstance(handed[-1], bytes), type(handed[-1])
        assert handed[-1] == data
        assert (result.ok if function == "validate" else result["verdict"]["exit_status"] == 0)
    for given in (data, memoryview(data)):  # immutable: read in place, not copied
        call(given)
        assert handed[-1] is given


def test_info_of_a_bytearray_changed_meanwhile_never_leaks_a_foreign_error() -> None:
    """Another thread flips bytes of the metadata while info() and validate() run: each call
    returns, or raises the package's own error, never a RuntimeError from inside."""
    data = bytearray(VALID.read_bytes())
    original = bytes(data)
    stop = threading.Event()

    def flip() -> None:
        i = 24
        while not stop.is_set():
            data[i] ^= 0xFF
            data[i] ^= 0xFF
            i = 24 + (i * 31 + 7) % 1600

    flipper = threading.Thread(target=flip)
    flipper.start()
    try:
        for _ in range(100):
            for call in (ggufcheck.info, ggufcheck.validate):
                try:
                    call(data)
                except ggufcheck.Error:
                    pass
    finally:
        stop.set()
        flipper.join()
    assert bytes(data) == original

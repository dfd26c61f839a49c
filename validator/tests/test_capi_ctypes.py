#!/usr/bin/env python3
"""The C interface through Python's ctypes, as another language binds it: libggufcheck.so
exports every function ggufcheck.h declares and nothing else, and a binding written from the
header alone validates files and buffers and reads the findings.

Usage: test_capi_ctypes.py --library libggufcheck.so --header ggufcheck.h --examples DIR
"""

from __future__ import annotations

import argparse
import ctypes
import json
import re
import subprocess
import sys
import threading
import unittest
from pathlib import Path

ARGS: argparse.Namespace


class Finding(ctypes.Structure):
    # ggufcheck.h's struct ggufcheck_finding, field for field.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("code", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("severity", ctypes.c_int),
        ("offset", ctypes.c_uint64),
        ("length", ctypes.c_uint64),
        ("path", ctypes.c_char_p),
        ("message", ctypes.c_char_p),
        ("hint", ctypes.c_char_p),
    ]


def load() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(ARGS.library))
    p = ctypes.c_void_p
    signatures = {
        "ggufcheck_version": ([], ctypes.c_char_p),
        "ggufcheck_abi_version": ([], ctypes.c_int),
        "ggufcheck_last_error": ([], ctypes.c_char_p),
        "ggufcheck_options_new": ([], p),
        "ggufcheck_options_free": ([p], None),
        "ggufcheck_options_set_profile": ([p, ctypes.c_int], ctypes.c_int),
        "ggufcheck_options_set_severity": ([p, ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int),
        "ggufcheck_options_set_limit": ([p, ctypes.c_char_p, ctypes.c_uint64], ctypes.c_int),
        "ggufcheck_options_set_data": ([p, ctypes.c_int, ctypes.c_uint], ctypes.c_int),
        "ggufcheck_validate_path": ([ctypes.c_char_p, p, ctypes.POINTER(p)], ctypes.c_int),
        "ggufcheck_validate_buffer": (
            [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, p, ctypes.POINTER(p)],
            ctypes.c_int,
        ),
        "ggufcheck_report_free": ([p], None),
        "ggufcheck_report_exit_status": ([p], ctypes.c_int),
        "ggufcheck_report_error_count": ([p], ctypes.c_size_t),
        "ggufcheck_report_finding_count": ([p], ctypes.c_size_t),
        "ggufcheck_report_finding": ([p, ctypes.c_size_t, ctypes.POINTER(Finding)], ctypes.c_int),
        "ggufcheck_report_json": ([p], ctypes.c_char_p),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib


def findings(lib: ctypes.CDLL, report: ctypes.c_void_p) -> list[dict]:
    out = []
    for i in range(lib.ggufcheck_report_finding_count(report)):
        f = Finding()
        f.struct_size = ctypes.sizeof(Finding)
        assert lib.ggufcheck_report_finding(report, i, ctypes.byref(f)) == 0
        out.append({name: getattr(f, name) for name, _ in Finding._fields_})
    return out


class Exports(unittest.TestCase):
    def test_exactly_the_declared_functions_are_exported(self) -> None:
        header = ARGS.header.read_text()
        declared = set(re.findall(r"GGUFCHECK_API[^;(]*?\b(ggufcheck_\w+)\s*\(", header, re.S))
        self.assertGreaterEqual(len(declared), 20, declared)
        nm = subprocess.run(
            ["nm", "-D", "--defined-only", str(ARGS.library)],
            capture_output=True, text=True, check=True,
        ).stdout
        exported = {line.split()[-1] for line in nm.splitlines() if line.split()[1:2] == ["T"]}
        self.assertEqual(exported, declared)
        # Nothing else at all: no C++ symbol, no fmt, no data.
        others = [line for line in nm.splitlines() if line.split()[-1] not in declared]
        self.assertEqual(others, [])


class Binding(unittest.TestCase):
    lib: ctypes.CDLL

    @classmethod
    def setUpClass(cls) -> None:
        cls.lib = load()

    def validate(self, path: Path, options=None) -> ctypes.c_void_p:
        report = ctypes.c_void_p()
        status = self.lib.ggufcheck_validate_path(str(path).encode(), options, ctypes.byref(report))
        self.assertEqual(status, 0, self.lib.ggufcheck_last_error())
        self.addCleanup(self.lib.ggufcheck_report_free, report)
        return report

    def test_version(self) -> None:
        self.assertEqual(self.lib.ggufcheck_abi_version(), 1)
        self.assertRegex(self.lib.ggufcheck_version().decode(), r"^ggufcheck \d+\.\d+\.\d+ \(git ")

    def test_every_example_has_the_clis_verdict(self) -> None:
        for path in sorted(ARGS.examples.glob("*/*.gguf")):
            with self.subTest(path=path.name):
                report = self.validate(path)
                want = 0 if path.parent.name == "valid" else 1
                self.assertEqual(self.lib.ggufcheck_report_exit_status(report), want)
                doc = json.loads(self.lib.ggufcheck_report_json(report))
                listed = [(f["code"], f["offset"], f["message"]) for f in doc["files"][0]["findings"]]
                read = [(f["code"].decode(), f["offset"], f["message"].decode())
                        for f in findings(self.lib, report)]
                self.assertEqual(read, listed)

    def test_buffer_and_options(self) -> None:
        data = (ARGS.examples / "broken" / "three-problems.gguf").read_bytes()
        options = self.lib.ggufcheck_options_new()
        self.addCleanup(self.lib.ggufcheck_options_free, options)
        self.assertEqual(self.lib.ggufcheck_options_set_severity(options, b"GGUF2012", b"off"), 0)
        self.assertEqual(self.lib.ggufcheck_options_set_severity(options, b"nope", b"off"), -1)
        self.assertIn(b"unknown diagnostic", self.lib.ggufcheck_last_error())
        report = ctypes.c_void_p()
        self.assertEqual(
            self.lib.ggufcheck_validate_buffer(data, len(data), b"mem.gguf", options,
                                               ctypes.byref(report)), 0)
        self.addCleanup(self.lib.ggufcheck_report_free, report)
        codes = {f["code"] for f in findings(self.lib, report)}
        self.assertIn(b"GGUF2004", codes)
        self.assertNotIn(b"GGUF2012", codes)
        self.assertEqual(self.lib.ggufcheck_report_exit_status(report), 1)

    def test_thread_counts_outside_the_clis_range_are_refused(self) -> None:
        options = self.lib.ggufcheck_options_new()
        self.addCleanup(self.lib.ggufcheck_options_free, options)
        for threads in (0, 1, 1024):
            self.assertEqual(self.lib.ggufcheck_options_set_data(options, 1, threads), 0, threads)
        self.assertEqual(self.lib.ggufcheck_options_set_data(options, 0, 0), 0)
        for threads in (1025, 100000, 2**31, 2**32 - 1):
            with self.subTest(threads=threads):
                self.assertEqual(self.lib.ggufcheck_options_set_data(options, 1, threads), -1)
                self.assertIn(b"0..1024", self.lib.ggufcheck_last_error())
        # The refused calls left the options as they were: no data check, and a valid file passes.
        report = self.validate(ARGS.examples / "valid" / "tiny-llama.gguf", options)
        self.assertEqual(self.lib.ggufcheck_report_exit_status(report), 0)
        self.assertIs(json.loads(self.lib.ggufcheck_report_json(report))["options"]["data"], False)

    def test_last_error_pointer_stays_put_until_the_thread_ends(self) -> None:
        last_error = ctypes.CDLL(str(ARGS.library)).ggufcheck_last_error
        last_error.restype = ctypes.c_void_p  # the address itself
        options = self.lib.ggufcheck_options_new()
        self.addCleanup(self.lib.ggufcheck_options_free, options)
        self.assertEqual(self.lib.ggufcheck_options_set_severity(options, b"x" * 40, b"off"), -1)
        address = last_error()
        for length in (400, 900, 5000):  # ever longer: a reallocated string would move
            self.assertEqual(
                self.lib.ggufcheck_options_set_severity(options, b"y" * length, b"off"), -1)
            self.assertEqual(last_error(), address)
            text = ctypes.string_at(address)
            self.assertTrue(text.startswith(b"unknown diagnostic 'yyy"), text[:40])
            self.assertLessEqual(len(text), 1023)
        self.assertTrue(ctypes.string_at(address).endswith(b"..."))
        # Another thread has its own: its failure does not touch this thread's text.
        other = []
        thread = threading.Thread(target=lambda: other.append(
            (self.lib.ggufcheck_options_set_limit(None, b"depth", 1), last_error())))
        thread.start()
        thread.join()
        self.assertEqual(other[0][0], -1)
        self.assertNotEqual(other[0][1], address)
        self.assertTrue(ctypes.string_at(address).startswith(b"unknown diagnostic 'yyy"))

    def test_unreadable_path_is_a_report(self) -> None:
        report = self.validate(Path("/nonexistent/x.gguf"))
        self.assertEqual(self.lib.ggufcheck_report_exit_status(report), 2)
        self.assertEqual([f["code"] for f in findings(self.lib, report)], [b"GGUF0001"])


def main() -> int:
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--library", type=Path, required=True)
    parser.add_argument("--header", type=Path, required=True)
    parser.add_argument("--examples", type=Path, required=True)
    ARGS, rest = parser.parse_known_args()
    program = unittest.main(argv=[sys.argv[0], *rest], exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

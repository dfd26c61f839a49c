#!/usr/bin/python3
"""The results page (conformance/runner/html.py) in a real browser: headless chromium loads an
index.html written by `conformance/run --results` on a toy suite (test_runner.py's), runs its
script, and dumps the DOM; the matrix must have a row per case and a column per parser and
profile of results.json, the pruned view no more rows (the collapsed ones counted), a scores
table per profile, the value-difference section a row per mismatch; and a screenshot must be
a real PNG.

Chromium comes from Debian (conformance/setup installs it). Without it the test is skipped,
or fails when CI=true.

Run: /usr/bin/python3 conformance/tests/test_results_page.py [-v]
"""
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import test_runner  # noqa: E402

WINDOW = (1280, 2000)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = find_chromium()
IN_CI = os.environ.get("CI") == "true"


class Dom(html.parser.HTMLParser):
    """The parts of the page the test counts: per table id, its rows and cells."""

    def __init__(self):
        super().__init__()
        self.tables = {}          # id -> {"attrs", "rows": [{"attrs", "cells": [attrs]}]}
        self.stack = []           # open tables
        self.body = {}
        self.status_text = ""
        self._in_status = False
        self.scores = []          # (profile, [row attrs])

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body":
            self.body = attrs
        elif tag == "table":
            table = {"attrs": attrs, "rows": []}
            self.stack.append(table)
            if attrs.get("id"):
                self.tables[attrs["id"]] = table
            if "scores" in attrs.get("class", "").split():
                self.scores.append((attrs.get("data-profile"), table))
        elif tag == "tr" and self.stack:
            self.stack[-1]["rows"].append({"attrs": attrs, "cells": []})
        elif tag in ("td", "th") and self.stack and self.stack[-1]["rows"]:
            self.stack[-1]["rows"][-1]["cells"].append(attrs)
        elif tag == "span" and attrs.get("id") == "matrix-status":
            self._in_status = True

    def handle_endtag(self, tag):
        if tag == "table" and self.stack:
            self.stack.pop()
        elif tag == "span":
            self._in_status = False

    def handle_data(self, data):
        if self._in_status:
            self.status_text += data


def chromium(*args, timeout=90):
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    try:
        command = [CHROMIUM, "--headless=new", "--disable-gpu", "--no-first-run",
                   "--hide-scrollbars", f"--user-data-dir={profile}"]
        if os.geteuid() == 0:
            command.append("--no-sandbox")
        done = subprocess.run(command + list(args), capture_output=True, timeout=timeout)
        if done.returncode != 0 and b"headless" in done.stderr:    # an older chromium
            command[1] = "--headless"
            done = subprocess.run(command + list(args), capture_output=True, timeout=timeout)
        return done
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@unittest.skipIf(CHROMIUM is None and not IN_CI,
                 "chromium is not installed (conformance/setup installs it; with CI=true this "
                 "test fails instead)")
class ResultsPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if CHROMIUM is None:
            raise AssertionError("chromium is not installed and CI=true: run conformance/setup")
        cls.tmp = tempfile.mkdtemp(prefix="results-page-")
        suite = test_runner.Suite(cls.tmp)
        suite.add_parser("perfect-spec", profile="spec")
        suite.add_parser("perfect-llama", profile="llama.cpp")
        suite.add_parser("wrong", "--wrong-on=y_kv_float,i_kv_either",
                         "--crash-on=n_header_bad_magic", profiles=["spec", "llama.cpp"])
        suite.add_parser("hangs", "--hang-on=n_count_huge", profiles=["spec", "llama.cpp"])
        cls.results_dir = os.path.join(cls.tmp, "results")
        code, out, err, cls.result = suite.run("--results", cls.results_dir, "--timeout", "2",
                                               "--hostile-timeout", "0.5")
        assert code == 1, out + err
        cls.page = os.path.join(cls.results_dir, "index.html")
        done = chromium("--virtual-time-budget=2000", "--dump-dom", "file://" + cls.page)
        cls.dom_text = done.stdout.decode("utf-8", "replace")
        cls.dom = Dom()
        cls.dom.feed(cls.dom_text)
        cls.chromium_stderr = done.stderr.decode("utf-8", "replace")[-2000:]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_script_ran(self):
        self.assertEqual(self.dom.body.get("data-ready"), "1",
                         "the page's script did not run:\n" + self.chromium_stderr)
        self.assertRegex(self.dom.status_text, r"^\d+ rows shown")

    def test_matrix_rows_and_columns(self):
        matrix = self.dom.tables["matrix"]
        columns = self.result["columns"]
        header = [c for c in matrix["rows"][0]["cells"] if "data-column" in c]
        self.assertEqual([c["data-column"] for c in header],
                         [f"{c['parser']}/{c['profile']}" for c in columns])
        case_rows = [r for r in matrix["rows"] if "data-case" in r["attrs"]]
        self.assertEqual(len(case_rows), len(self.result["cases"]))
        self.assertEqual(sorted(r["attrs"]["data-case"] for r in case_rows),
                         sorted(c["id"] for c in self.result["cases"]))
        areas = {c["area"] for c in self.result["cases"]}
        area_rows = [r for r in matrix["rows"] if "area" in r["attrs"].get("class", "").split()]
        self.assertEqual({r["attrs"]["data-area"] for r in area_rows}, areas)
        outcomes = {(r["case"], f"{r['parser']}/{r['profile']}"): r["outcome"]
                    for r in self.result["results"]}
        for row in case_rows:
            cells = [c for c in row["cells"] if "data-column" in c]
            self.assertEqual(len(cells), len(columns))
            for cell in cells:
                self.assertEqual(cell["data-outcome"],
                                 outcomes[(row["attrs"]["data-case"], cell["data-column"])])
                self.assertTrue(cell.get("title"))

    def test_pruned_view(self):
        full = [r for r in self.dom.tables["matrix"]["rows"] if "data-case" in r["attrs"]]
        pruned_table = self.dom.tables["matrix-pruned"]
        pruned = [r for r in pruned_table["rows"] if "data-case" in r["attrs"]]
        collapsed = sum(int(r["attrs"]["data-collapsed"]) for r in pruned_table["rows"]
                        if "data-collapsed" in r["attrs"])
        self.assertLessEqual(len(pruned), len(full))
        self.assertGreater(len(pruned), 0)          # the toys disagree somewhere
        self.assertEqual(len(pruned) + collapsed, len(full))
        self.assertEqual(int(pruned_table["attrs"]["data-collapsed-total"]), collapsed)

    def test_scores_tables(self):
        profiles = {profile for profile, _ in self.dom.scores}
        self.assertEqual(profiles, {"spec", "llama.cpp"})
        for profile, table in self.dom.scores:
            rows = [r["attrs"]["data-score"] for r in table["rows"] if "data-score" in r["attrs"]]
            self.assertEqual(rows, [s["parser"] for s in self.result["scores"]
                                    if s["profile"] == profile])

    def test_value_differences(self):
        mismatches = [r for r in self.result["results"] if r["outcome"] == "value_mismatch"]
        self.assertTrue(mismatches)
        rows = [r for r in self.dom.tables["diff-table"]["rows"] if "data-diff" in r["attrs"]]
        self.assertEqual(len(rows), len(mismatches))
        self.assertIn("metadata[1].value[1]", self.dom_text)

    def test_screenshot(self):
        shot = os.path.join(self.tmp, "shot.png")
        done = chromium(f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={shot}",
                        "file://" + self.page)
        self.assertTrue(os.path.exists(shot), done.stderr.decode("utf-8", "replace")[-2000:])
        with open(shot, "rb") as handle:
            data = handle.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        width, height = struct.unpack(">II", data[16:24])
        self.assertEqual((width, height), WINDOW)
        self.assertGreater(len(data), 20000)          # a blank page compresses to far less


if __name__ == "__main__":
    unittest.main()

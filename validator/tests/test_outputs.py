#!/usr/bin/python3
"""Machine-readable outputs of the CLI against their schemas.

Runs `ggufcheck check --format json` and `--format sarif` over the sample files, the real files
and the example file of every code (written by ggufcheck_testkit_files from the test kit's
validator/testkit/code_table.hpp, the corpus's codes/ files), under every profile and a few
option sets, then checks:

- every JSON output against docs/json-output.schema.json, plus the cross-field rules the
  schema cannot say (counts, exit status, sort order, offsets inside the file);
- every SARIF output against the official SARIF 2.1.0 schema, plus what GitHub code scanning
  and docs/sarif-output.md rely on: one run, one rule per code used, region.startLine 1 with
  byteOffset/byteLength inside the file, the field path as a logical location, each rule's
  helpUri and help (from the code's page in docs/diagnostics/), the invocation with its
  notifications (unreadable inputs, dropped findings), artifact URIs absolute or relative to
  --sarif-root;
- that the SARIF results say the same thing as the JSON findings;
- the text output's conventions: file names escaped like keys, the total line of a run over
  several files, `list` sorted by code.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider test_outputs.py --ggufcheck PATH
       --source REPO --testkit-files PATH
A test per file and profile, per option set and per output convention.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.parse

import pytest

# Required, not optional: python3-jsonschema (scripts/setup.sh installs it).
import jsonschema

PROFILES = ["strict", "spec", "llama.cpp"]
LEVELS = {"error", "warning", "note"}
CODE_RE = re.compile(r"^GGUF[0-9]{4}$")
# A URI reference: unreserved, reserved and percent-encoded characters only.
URI_REF_RE = re.compile(r"^([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")


DEFAULT_HELP_BASE = "https://github.com/ggufcheck/ggufcheck/blob/main/docs/diagnostics/"
DROPPED_RE = re.compile(r"^([0-9]+) findings? beyond the limit of ([0-9]+) (?:was|were) counted but not listed$")
# The help a user reads stands alone: no names of the project's internal notes.
INTERNAL_DOCS_RE = re.compile(r"shared/docs|\.\./shared|gguf-format\.md|design\.md|threats\.md|conformance\.md|docs/gguf\.md",
                              re.I)
ANSI_RE = re.compile(rb"\x1b\[[0-9;]*m")


def page_blocks(body):
    """The blank-line separated blocks of a Markdown section (fenced code blocks kept whole)."""
    blocks, current, fenced = [], [], False
    for line in body.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append("\n".join(current).rstrip())
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current).rstrip())
    return [b for b in blocks if b]


def page_help_parts(page):
    """(first paragraph of "What it means" with the list or code block it introduces and the end
    of its sentence, the last section's heading, that section's first block), read here
    independently of the library."""
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    what = ""
    for section in sections:
        heading, _, body = section.partition("\n")
        if heading == "What it means":
            parts = []
            blocks = page_blocks(body)
            for i, block in enumerate(blocks):
                parts.append(block)
                if not block.startswith(("```", "- ", "| ")):
                    if block[-1] in ".)":  # a sentence ends the paragraph
                        break
                else:  # after a list or code block, a paragraph in lower case goes on the sentence
                    following = blocks[i + 1] if i + 1 < len(blocks) else ""
                    if not (following[:1].islower() or following[:1] == "("):
                        break
            what = "\n\n".join(parts)
    heading, _, body = sections[-1].partition("\n")
    blocks = page_blocks(body)
    return what, heading, blocks[0] if blocks else ""


def file_uri_bytes(uri):
    """The absolute path a file:/// URI names, as bytes."""
    assert uri.startswith("file:///"), f"{uri!r} is not an absolute file:/// URI"
    return urllib.parse.unquote_to_bytes(uri[len("file://"):])


# --------------------------------------------------------------------------------------------
# The files

# The example of non-canonical-bool: it fails strict and spec, passes llama.cpp.
BOOL_BYTE = "non-canonical-bool.gguf"
# A copy of it under a name that needs escaping in a URI.
SPACED = "model with spaces #1 %20 ?x=y & ü.gguf"


def write_examples(tool, directory, source):
    """The example file of every code, written by the test kit: name -> (path, its code, the
    options it needs: ["--data"] for a tensor-data code, whose file shows it only with the data
    check; ["--base", PATH] for an adapter checked against a base model, PATH made absolute
    from the repository's root `source`)."""
    proc = subprocess.run([tool, directory], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{tool} exited {proc.returncode}: {proc.stderr.strip()[:300]}"
    files = {}
    for line in proc.stdout.splitlines():
        name, code, *needs = line.split(" ")
        if "--base" in needs:
            at = needs.index("--base") + 1
            needs[at] = os.path.join(source, needs[at])
        files[name] = (os.path.join(directory, name), code, needs)
    return files


# --------------------------------------------------------------------------------------------
# The harness

class Suite:
    def __init__(self, ggufcheck, source):
        self.exe = ggufcheck
        self.source = source
        # The official SARIF 2.1.0 schema (OASIS), committed beside the tests.
        with open(os.path.join(self.source, "validator", "tests", "data", "sarif-schema-2.1.0.json"),
                  encoding="utf-8") as f:
            sarif_schema = json.load(f)
        with open(os.path.join(self.source, "docs", "json-output.schema.json"), encoding="utf-8") as f:
            json_schema = json.load(f)
        sarif_cls = jsonschema.validators.validator_for(sarif_schema)
        json_cls = jsonschema.validators.validator_for(json_schema)
        sarif_cls.check_schema(sarif_schema)
        json_cls.check_schema(json_schema)
        self.sarif_validator = sarif_cls(sarif_schema, format_checker=sarif_cls.FORMAT_CHECKER
                                         if hasattr(sarif_cls, "FORMAT_CHECKER") else jsonschema.FormatChecker())
        self.json_validator = json_cls(json_schema, format_checker=jsonschema.FormatChecker())
        self.catalogue = {}
        self.version = None
        self.last_sarif = None
        self.help_cache = {}

    def help_parts(self, code):
        if code not in self.help_cache:
            with open(os.path.join(self.source, "docs", "diagnostics", code + ".md"), encoding="utf-8") as f:
                self.help_cache[code] = page_help_parts(f.read())
        return self.help_cache[code]

    def run(self, argv, stdin=None):
        argv = [os.fsencode(a) if isinstance(a, str) else a for a in argv]
        proc = subprocess.run([os.fsencode(self.exe)] + argv, input=stdin if stdin is not None else b"",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
        return proc

    # ----------------------------------------------------------------------------------------

    def load_catalogue(self):
        proc = self.run(["list", "--format", "json"])
        assert proc.returncode == 0, f"`list --format json` exited {proc.returncode}: {proc.stderr!r}"
        doc = json.loads(proc.stdout)
        assert doc.get("schema_version") == 1, "`list --format json` has no schema_version 1"
        for d in doc["diagnostics"]:
            assert CODE_RE.match(d["code"]), f"bad code in list: {d['code']}"
            assert d["code"] not in self.catalogue, f"code listed twice: {d['code']}"
            self.catalogue[d["code"]] = d
        assert "GGUF0001" in self.catalogue and "GGUF4001" in self.catalogue, "catalogue is incomplete"
        proc = self.run(["--version"])
        assert proc.returncode == 0, "--version failed"
        m = re.match(rb"^ggufcheck (\S+) \(git \S+\)\nllama\.cpp profile: llama\.cpp .+\n$", proc.stdout)
        assert m, f"--version printed {proc.stdout!r}"
        self.version = m.group(1).decode()

    def list_is_sorted(self):
        """`list` and `list --format json` give every code once, by code number."""
        proc = self.run(["list", "--format", "json"])
        codes = [d["code"] for d in json.loads(proc.stdout)["diagnostics"]]
        assert codes == sorted(codes, key=lambda c: int(c[4:])), f"`list --format json` is not sorted by code: {codes}"
        proc = self.run(["list"])
        assert proc.returncode == 0, f"`list` exited {proc.returncode}"
        text_codes = [c.decode() for c in re.findall(rb"^(GGUF[0-9]{4}) ", proc.stdout, flags=re.M)]
        assert text_codes == codes, f"`list` does not give the codes of `list --format json` in code order: {text_codes}"

    # ----------------------------------------------------------------------------------------

    @staticmethod
    def error_text(errors):
        out = []
        for e in errors[:5]:
            where = "/".join(str(p) for p in e.absolute_path)
            out.append(f"at /{where}: {e.message[:300]}")
        return "; ".join(out)

    def check_json(self, doc, rc, paths, profile, werror, plain):
        """plain: no severity overrides were given (severities must match the catalogue)."""
        errors = list(self.json_validator.iter_errors(doc))
        assert not errors, "JSON output does not match docs/json-output.schema.json: " + self.error_text(errors)
        assert doc["summary"]["exit_status"] == rc, f"summary.exit_status {doc['summary']['exit_status']} but the process exited {rc}"
        assert doc["profile"] == profile, f"profile {doc['profile']!r}, expected {profile!r}"
        assert doc["werror"] == werror, f"werror {doc['werror']}, expected {werror}"
        assert doc["tool"]["version"] == self.version, f"tool.version {doc['tool']['version']} != --version {self.version}"
        files = doc["files"]
        if paths is not None:
            assert [f["path"] for f in files] == paths, (
                f"files in the wrong order or with the wrong paths: {[f['path'] for f in files]} != {paths}")
        counts = {"pass": 0, "fail": 0, "unreadable": 0}
        for f in files:
            counts[f["status"]] += 1
            findings = f["findings"]
            tally = {s: sum(1 for x in findings if x["severity"] == s) for s in LEVELS}
            summary = f["summary"]
            for key, level in (("errors", "error"), ("warnings", "warning"), ("notes", "note")):
                if summary["findings_dropped"] == 0:
                    assert summary[key] == tally[level], f"{f['path']}: summary.{key} {summary[key]} but {tally[level]} {level} findings"
                else:
                    assert summary[key] >= tally[level], f"{f['path']}: summary.{key} {summary[key]} < {tally[level]} {level} findings"
            unreadable = any(x["code"] == "GGUF0001" for x in findings)
            expected_status = "unreadable" if unreadable else ("pass" if summary["errors"] == 0 else "fail")
            assert f["status"] == expected_status, f"{f['path']}: status {f['status']}, expected {expected_status}"
            offsets = [x["offset"] for x in findings]
            assert offsets == sorted(offsets), f"{f['path']}: findings not sorted by offset: {offsets}"
            size = f["facts"]["file_size"]
            if not unreadable and os.path.isfile(f["path"]):
                assert size == os.path.getsize(f["path"]), f"{f['path']}: facts.file_size {size} != {os.path.getsize(f['path'])}"
            for x in findings:
                assert x["offset"] <= size and x["length"] <= size - x["offset"], (
                    f"{f['path']}: {x['code']} at 0x{x['offset']:x}+{x['length']} runs outside the {size}-byte file")
                entry = self.catalogue.get(x["code"])
                assert entry is not None, f"{f['path']}: code {x['code']} is not in `ggufcheck list`"
                assert x["name"] == entry["name"], f"{x['code']}: name {x['name']} != catalogue name {entry['name']}"
                if plain and x["code"] != "GGUF0001":
                    expected = entry["severity"][profile]
                    if werror and expected == "warning":
                        expected = "error"
                    assert x["severity"] == expected, (
                        f"{f['path']}: {x['code']} reported as {x['severity']}, catalogue says {expected} in {profile}")
            facts = f["facts"]
            if facts["data_start"] is not None:
                assert facts["data_start"] <= size or facts["tensor_data_size"] is None, (
                    f"{f['path']}: data_start past the end with a tensor_data_size")
        assert doc["summary"]["files"] == len(files), "summary.files != number of files"
        for key, status in (("passed", "pass"), ("failed", "fail"), ("unreadable", "unreadable")):
            assert doc["summary"][key] == counts[status], f"summary.{key} {doc['summary'][key]} != {counts[status]}"
        expected_rc = 2 if counts["unreadable"] else (1 if counts["fail"] else 0)
        assert rc == expected_rc, f"exit status {rc}, expected {expected_rc} (worst of the files)"

    def check_sarif(self, doc, json_doc, plain, profile, werror, rc, root=None, help_base=DEFAULT_HELP_BASE):
        errors = list(self.sarif_validator.iter_errors(doc))
        assert not errors, "SARIF output does not match the SARIF 2.1.0 schema: " + self.error_text(errors)
        assert doc.get("version") == "2.1.0", "version is not 2.1.0"
        assert len(doc["runs"]) == 1, f"{len(doc['runs'])} runs, expected exactly one"
        run = doc["runs"][0]
        driver = run["tool"]["driver"]
        assert driver["name"] == "ggufcheck", "tool.driver.name is not ggufcheck"
        assert driver.get("version") == self.version, "tool.driver.version differs from --version"
        rules = driver.get("rules", [])
        rule_ids = [r["id"] for r in rules]
        assert len(rule_ids) == len(set(rule_ids)), f"duplicate rules: {rule_ids}"
        results = run.get("results", [])
        used = {r["ruleId"] for r in results}
        assert set(rule_ids) == used, f"rules {sorted(rule_ids)} are not exactly the codes used {sorted(used)}"
        for rule in rules:
            assert CODE_RE.match(rule["id"]), f"rule id {rule['id']}"
            entry = self.catalogue[rule["id"]]
            assert rule.get("name") == entry["name"], f"rule {rule['id']} name {rule.get('name')} != {entry['name']}"
            assert rule.get("shortDescription", {}).get("text"), f"rule {rule['id']} has no shortDescription"
            level = rule.get("defaultConfiguration", {}).get("level")
            assert level in LEVELS, f"rule {rule['id']} defaultConfiguration.level {level}"
            if plain and rule["id"] != "GGUF0001" and entry["severity"][profile] != "silent":
                expected = entry["severity"][profile]
                if werror and expected == "warning":
                    expected = "error"
                assert level == expected, f"rule {rule['id']} level {level}, catalogue says {expected} in {profile}"
            assert rule.get("helpUri") == help_base + rule["id"] + ".md", (
                f"rule {rule['id']} helpUri {rule.get('helpUri')!r}, expected {help_base + rule['id'] + '.md'!r}")
            what, fix_heading, fix = self.help_parts(rule["id"])
            help_text = rule.get("help", {}).get("text", "")
            assert what and help_text.startswith(what), (
                f"rule {rule['id']} help.text does not start with the page's first paragraph: {help_text[:120]!r}")
            assert fix and f"{fix_heading}:\n{fix}" in help_text, (
                f"rule {rule['id']} help.text lacks the page's fix section {fix_heading!r}")
            assert help_text.endswith(rule["helpUri"]), f"rule {rule['id']} help.text does not end with the page's URL"
            assert not INTERNAL_DOCS_RE.search(help_text), f"rule {rule['id']} help.text names an internal document"
            markdown = rule["help"].get("markdown", "")
            assert (markdown.startswith(what) and f"**{fix_heading}**\n\n{fix}" in markdown
                and markdown.endswith(f"]({rule['helpUri']})")), (
                f"rule {rule['id']} help.markdown is not the page's short form: {markdown[:120]!r}")
            assert rule.get("fullDescription", {}).get("text", "").startswith(entry["meaning"]), (
                f"rule {rule['id']} fullDescription does not start with the meaning")
            props = rule.get("properties", {})
            assert (props.get("tags", [])[:2] == ["gguf", profile] and props.get("precision") in ("very-high", "high")
                and props.get("problem.severity") in ("error", "warning", "recommendation")), (
                f"rule {rule['id']} properties {props}")
        # One invocation: successful unless an input was unreadable, with a notification per
        # unreadable input (error) and per file whose findings were dropped (warning).
        invocations = run.get("invocations", [])
        assert len(invocations) == 1, f"{len(invocations)} invocations, expected 1"
        invocation = invocations[0]
        json_files = json_doc["files"]
        any_unreadable = any(f["status"] == "unreadable" for f in json_files)
        assert invocation.get("executionSuccessful") is (not any_unreadable), (
            f"executionSuccessful {invocation.get('executionSuccessful')} with unreadable inputs: {any_unreadable}")
        assert invocation.get("exitCode") == rc, f"invocation exitCode {invocation.get('exitCode')} != exit status {rc}"
        expected_notes = []
        for i, f in enumerate(json_files):
            for x in f["findings"]:
                if x["code"] == "GGUF0001":
                    expected_notes.append((i, "error", x["message"]))
            dropped = f["summary"]["findings_dropped"]
            if dropped:
                expected_notes.append((i, "warning", dropped))
        notes = invocation.get("toolExecutionNotifications", [])
        assert len(notes) == len(expected_notes), (
            f"{len(notes)} toolExecutionNotifications, expected {len(expected_notes)}")
        for note, (i, level, what) in zip(notes, expected_notes):
            where = f"notification for {json_files[i]['path']}"
            assert note.get("level") == level, f"{where}: level {note.get('level')}, expected {level}"
            loc = note.get("locations", [{}])[0].get("physicalLocation", {}).get("artifactLocation", {})
            assert loc.get("index") == i, f"{where}: artifactLocation.index {loc.get('index')}"
            text = note.get("message", {}).get("text", "")
            if level == "error":
                assert text == what, f"{where}: message {text!r} != the GGUF0001 message {what!r}"
                assert note.get("associatedRule", {}).get("id") == "GGUF0001", f"{where}: no associatedRule GGUF0001"
            else:
                m = DROPPED_RE.match(text)
                listed = len(json_files[i]["findings"])
                assert m and int(m.group(1)) == what and int(m.group(2)) == listed, (
                    f"{where}: message {text!r}, expected {what} findings beyond the limit of {listed}")
        base_ids = run.get("originalUriBaseIds")
        if root is not None:
            root_abs = os.path.abspath(root)
            assert base_ids and set(base_ids) == {"SRCROOT"}, f"originalUriBaseIds {base_ids}, expected SRCROOT"
            root_uri = base_ids["SRCROOT"].get("uri", "")
            assert root_uri.endswith("/") and URI_REF_RE.match(root_uri), f"SRCROOT uri {root_uri!r}"
            assert file_uri_bytes(root_uri).rstrip(b"/") == os.fsencode(root_abs).rstrip(b"/"), (
                f"SRCROOT uri {root_uri!r} is not {root_abs!r}")
        else:
            assert base_ids is None, f"originalUriBaseIds {base_ids} without --sarif-root"
        artifacts = run.get("artifacts", [])
        assert len(artifacts) == len(json_files), f"{len(artifacts)} artifacts for {len(json_files)} files"
        for artifact, f in zip(artifacts, json_files):
            location = artifact.get("location", {})
            if f["path"] == "<stdin>":
                assert "uri" not in location and location.get("description", {}).get("text") == "standard input", (
                    f"standard input has the location {location}, expected no uri and a description")
                continue
            uri = location.get("uri", "")
            assert URI_REF_RE.match(uri), f"artifact uri {uri!r} is not a valid URI reference"
            path_abs = os.fsencode(os.path.abspath(f["path"]))
            if root is not None and (path_abs + b"/").startswith(os.fsencode(os.path.abspath(root)).rstrip(b"/") + b"/") \
                    and path_abs != os.fsencode(os.path.abspath(root)):
                rel = os.fsencode(os.path.relpath(f["path"], root))
                assert location.get("uriBaseId") == "SRCROOT", f"artifact {uri!r} under the root has no uriBaseId SRCROOT"
                assert not uri.startswith("file:") and not uri.startswith("/"), f"artifact uri {uri!r} under the root is not relative"
                assert urllib.parse.unquote_to_bytes(uri) == rel, f"artifact uri {uri!r} does not decode to {rel!r}"
            else:
                assert "uriBaseId" not in location, f"artifact {uri!r} outside any root has a uriBaseId"
                assert file_uri_bytes(uri) == path_abs, f"artifact uri {uri!r} does not decode to {path_abs!r}"
            if f["status"] == "unreadable":
                assert "length" not in artifact, f"unreadable input {f['path']} has an artifact length"
            else:
                assert artifact.get("length") == f["facts"]["file_size"], (
                    f"artifact length {artifact.get('length')} != file size {f['facts']['file_size']}")
        expected_findings = [(i, x) for i, f in enumerate(json_files) for x in f["findings"]]
        assert len(results) == len(expected_findings), (
            f"{len(results)} SARIF results but {len(expected_findings)} JSON findings")
        for result, (file_index, x) in zip(results, expected_findings):
            where = f"{json_files[file_index]['path']} {x['code']} at 0x{x['offset']:x}"
            assert result["ruleId"] == x["code"], f"{where}: ruleId {result['ruleId']}"
            idx = result.get("ruleIndex")
            assert idx is not None and 0 <= idx < len(rules) and rules[idx]["id"] == result["ruleId"], (
                f"{where}: ruleIndex {idx} does not point at rule {result['ruleId']}")
            assert result.get("level") in LEVELS, f"{where}: level {result.get('level')}"
            assert result["level"] == x["severity"], f"{where}: level {result['level']} != severity {x['severity']}"
            text = result.get("message", {}).get("text", "")
            assert text and text.startswith(x["message"]), f"{where}: message {text!r} does not carry {x['message']!r}"
            locations = result.get("locations", [])
            assert len(locations) == 1, f"{where}: {len(locations)} locations"
            physical = locations[0].get("physicalLocation", {})
            art = physical.get("artifactLocation", {})
            assert art.get("index") == file_index, f"{where}: artifactLocation.index {art.get('index')} != {file_index}"
            assert {k: v for k, v in art.items() if k != "index"} == artifacts[file_index]["location"], (
                f"{where}: artifactLocation {art} differs from the artifact's location")
            region = physical.get("region", {})
            assert region.get("startLine") == 1, f"{where}: region.startLine {region.get('startLine')}, expected 1"
            assert "byteOffset" in region and "byteLength" in region, f"{where}: region without byteOffset/byteLength"
            assert region["byteOffset"] == x["offset"] and region["byteLength"] == x["length"], (
                f"{where}: region {region} differs from the JSON finding")
            size = json_files[file_index]["facts"]["file_size"]
            assert region["byteOffset"] <= size and region["byteLength"] <= size - region["byteOffset"], (
                f"{where}: region 0x{region['byteOffset']:x}+{region['byteLength']} outside the {size}-byte file")
            logical = locations[0].get("logicalLocations", [])
            assert logical and logical[0].get("fullyQualifiedName") == x["path"], (
                f"{where}: logical location {logical} is not the field path {x['path']!r}")

    def check_run(self, label, argv, paths, profile="strict", werror=False, plain=True, stdin=None,
                  expect_rc=None, sarif_root=None, help_base=None, sarif=True):
        """Runs argv with --format json and (unless sarif is False) --format sarif and checks
        both; sarif_root and help_base go to the SARIF run only (--sarif-root,
        --sarif-help-base). Returns the JSON document; self.last_sarif is the SARIF one."""
        sarif_args = (["--sarif-root", sarif_root] if sarif_root is not None else []) + \
                     (["--sarif-help-base", help_base] if help_base is not None else [])
        pj = self.run(["--format", "json"] + argv, stdin)
        ps = self.run(["--format", "sarif"] + sarif_args + argv, stdin) if sarif else None
        for proc, fmt in ((pj, "json"), (ps, "sarif")):
            if proc is None:
                continue
            assert proc.returncode in (0, 1, 2), (
                f"--format {fmt} exited {proc.returncode}; stderr: {proc.stderr.decode(errors='replace').strip()[:300]}")
            err = proc.stderr.decode(errors="replace")
            assert "internal error" not in err and "terminate called" not in err, f"--format {fmt}: {err.strip()[:300]}"
        if ps is not None:
            assert pj.returncode == ps.returncode, f"json exited {pj.returncode}, sarif exited {ps.returncode}"
        if expect_rc is not None:
            assert pj.returncode == expect_rc, f"exit status {pj.returncode}, expected {expect_rc}"
        try:
            jdoc = json.loads(pj.stdout)
        except ValueError as e:
            pytest.fail(f"--format json is not JSON: {e}")
        self.check_json(jdoc, pj.returncode, paths, profile, werror, plain)
        if ps is None:
            return jdoc
        try:
            sdoc = json.loads(ps.stdout)
        except ValueError as e:
            pytest.fail(f"--format sarif is not JSON: {e}")
        self.check_sarif(sdoc, jdoc, plain, profile, werror, ps.returncode, root=sarif_root,
                         help_base=help_base if help_base is not None else DEFAULT_HELP_BASE)
        self.last_sarif = sdoc
        return jdoc

    # ----------------------------------------------------------------------------------------

    def expect_codes(self, jdoc, expected):
        """expected: path -> code that must be reported."""
        for f in jdoc["files"]:
            code = expected.get(f["path"])
            if code:
                codes = [x["code"] for x in f["findings"]]
                assert code in codes, f"{f['path']}: expected {code}, got {codes}"


# --------------------------------------------------------------------------------------------
# The files, written once per session (the example file of every code, by the test kit)

class Files:
    """The inputs of the runs: the samples, the real files, the example file of every code in a
    temporary directory (with SPACED beside them, a missing path and a directory without *.gguf)."""

    def __init__(self, source, testkit_files, tmp):
        self.tmp = tmp
        self.examples = sorted(
            os.path.join(source, "examples", sub, name)
            for sub in ("valid", "broken")
            for name in os.listdir(os.path.join(source, "examples", sub))
            if name.endswith(".gguf"))
        self.valid_examples = [p for p in self.examples if os.sep + "valid" + os.sep in p]
        real_dir = os.path.join(source, "validator", "tests", "data", "real-gguf")
        self.real = sorted(os.path.join(real_dir, n) for n in os.listdir(real_dir) if n.endswith(".gguf"))
        self.generated = {}
        self.expected_strict = {}
        self.needs = {}  # path -> the options its code needs
        for name, (path, code, options) in write_examples(testkit_files, tmp, source).items():
            self.generated[name] = path
            self.expected_strict[path] = code
            self.needs[path] = options
        self.generated[SPACED] = os.path.join(tmp, SPACED)
        shutil.copyfile(self.generated[BOOL_BYTE], self.generated[SPACED])
        self.expected_strict[self.generated[SPACED]] = "GGUF2012"
        self.missing = os.path.join(tmp, "does-not-exist.gguf")
        self.empty_dir = os.path.join(tmp, "no-gguf-here")
        os.makedirs(self.empty_dir)
        with open(os.path.join(self.empty_dir, "readme.txt"), "w", encoding="utf-8") as f:
            f.write("nothing to see\n")
        self.gen_paths = sorted(self.generated.values())

    def label(self, path):
        return os.path.relpath(path, self.tmp) if path.startswith(self.tmp) else os.path.basename(path)


FILES = pytest.StashKey()


def files_of(config):
    """The Files of this session, written when first asked for (collection needs their names)."""
    if FILES not in config.stash:
        source = os.path.abspath(config.getoption("--source") or
                                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
        tool = config.getoption("--testkit-files")
        if not tool:
            raise pytest.UsageError("--testkit-files is required: the built ggufcheck_testkit_files")
        assert os.access(tool, os.X_OK), f"{tool} is not an executable"
        tmp = tempfile.mkdtemp(prefix="ggufcheck-outputs-")
        config.add_cleanup(lambda: shutil.rmtree(tmp, ignore_errors=True))
        config.stash[FILES] = Files(source, os.path.abspath(tool), tmp)
    return config.stash[FILES]


def pytest_generate_tests(metafunc):
    names = metafunc.fixturenames
    if "one_path" in names or "info_path" in names:
        files = files_of(metafunc.config)
        paths = files.examples + files.real + files.gen_paths
        if "one_path" in names:
            metafunc.parametrize("one_path", paths, ids=[files.label(p) for p in paths])
        else:
            paths = paths + [files.missing]
            metafunc.parametrize("info_path", paths, ids=[files.label(p) for p in paths])


@pytest.fixture(scope="session")
def files(pytestconfig):
    return files_of(pytestconfig)


@pytest.fixture(scope="session")
def suite(ggufcheck, source):
    """The checker, with the catalogue and the version every output is compared with."""
    checker = Suite(ggufcheck, source)
    checker.load_catalogue()
    return checker


@pytest.fixture(params=PROFILES)
def profile(request):
    return request.param


# --------------------------------------------------------------------------------------------
# The tests

def test_catalogue_and_version(suite):
    assert suite.catalogue and suite.version


def test_list_sorted_by_code(suite):
    suite.list_is_sorted()


def test_generated_files_are_all_present(files):
    assert len(files.gen_paths) >= 30, "too few generated files"


# One file per run: each output small and self-contained. SARIF per file in the strict profile;
# in the others the runs of all files at once below check it.
def test_one_file(suite, files, profile, one_path):
    p = ["--profile", profile]
    jdoc = suite.check_run(files.label(one_path), p + files.needs.get(one_path, []) + [one_path],
                           [one_path], profile=profile, sarif=profile == "strict")
    if profile == "strict":
        suite.expect_codes(jdoc, files.expected_strict)
    if one_path in files.real:
        # No finding but the note naming a chat template of the pinned llama.cpp (GGUF9015: the
        # phi-3 vocabulary's is one).
        f = jdoc["files"][0]
        noise = [x for x in f["findings"] if not (x["code"] == "GGUF9015" and x["severity"] == "note")]
        assert f["status"] == "pass" and not noise, \
            f"real file {one_path} must pass {profile} with no finding: {noise[:3]}"
    if one_path in files.valid_examples:
        assert jdoc["files"][0]["status"] == "pass", f"{one_path} must pass {profile}"


# Unreadable inputs: GGUF0001, exit 2.
@pytest.mark.parametrize("what", ["missing file", "directory without *.gguf"])
def test_unreadable_input(suite, files, profile, what):
    path = files.missing if what == "missing file" else files.empty_dir
    jdoc = suite.check_run(what, ["--profile", profile, path], [path], profile=profile, expect_rc=2)
    f = jdoc["files"][0]
    assert f["status"] == "unreadable", f"status {f['status']}"
    assert [x["code"] for x in f["findings"]] == ["GGUF0001"], f"findings {f['findings']}"


def everything(files):
    return files.examples + files.gen_paths + [files.missing] + files.real


# Everything at once, in the order given.
def test_all_files_in_one_run(suite, files, profile):
    suite.check_run("all", ["--profile", profile] + everything(files), everything(files),
                    profile=profile, expect_rc=2)


def test_all_files_with_two_jobs(suite, files, profile):
    suite.check_run("all -j 2", ["-j", "2", "--profile", profile] + everything(files),
                    everything(files), profile=profile, expect_rc=2)


# The data check over every file: the zero tensors of most examples get GGUF6005, data_checked
# appears in the facts of each file it scanned.
def test_all_files_with_data(suite, files, profile):
    suite.check_run("all --data", ["--data", "-j", "1", "--profile", profile] + everything(files),
                    everything(files), profile=profile, expect_rc=2)


def test_werror(suite, files, profile):
    suite.check_run("werror", ["--werror", "--profile", profile] + files.gen_paths, files.gen_paths,
                    profile=profile, werror=True)


# Directories expand to their *.gguf files, sorted.
def test_a_directory(suite, files, profile):
    suite.check_run("dir", ["--profile", profile, files.tmp], sorted(files.gen_paths), profile=profile)


def test_standard_input(suite, files, profile):
    with open(files.generated[BOOL_BYTE], "rb") as f:
        bool_bytes = f.read()
    # A container fixture (no vocabulary): without the model checks.
    jdoc = suite.check_run("stdin", ["--profile", profile, "--no-model-checks", "-"], ["<stdin>"],
                           profile=profile, stdin=bool_bytes,
                           expect_rc=0 if profile == "llama.cpp" else 1)
    assert jdoc["files"][0]["facts"]["file_size"] == len(bool_bytes), "stdin file_size"


# `info --format json` against docs/info.schema.json, and its verdict against check's.
@pytest.fixture(scope="session")
def info_validator(source):
    with open(os.path.join(source, "docs", "info.schema.json"), encoding="utf-8") as f:
        info_schema = json.load(f)
    info_cls = jsonschema.validators.validator_for(info_schema)
    info_cls.check_schema(info_schema)
    return info_cls(info_schema)


def test_info(suite, files, info_validator, info_path):
    path, needs = info_path, files.needs.get(info_path, [])
    for extra in ([], ["--full"]):
        proc = suite.run(["info", "--format", "json"] + extra + needs + [path])
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode in (0, 1, 2) and "internal error" not in err, \
            f"info {extra} exited {proc.returncode}: {err.strip()[:300]}"
        doc = json.loads(proc.stdout)
        errors = list(info_validator.iter_errors(doc))
        assert not errors, "info JSON does not match docs/info.schema.json: " + suite.error_text(errors)
        f = doc["files"][0]
        assert f["path"] == path, f"path {f['path']}"
        assert f["verdict"]["exit_status"] == proc.returncode, \
            f"verdict exit status {f['verdict']['exit_status']}, process {proc.returncode}"
        check = json.loads(suite.run(["--format", "json"] + needs + [path]).stdout)
        assert f["verdict"]["status"] == check["files"][0]["status"], \
            f"info says {f['verdict']['status']}, check says {check['files'][0]['status']}"
        if path in files.real or path in files.valid_examples:
            assert f["verdict"]["status"] == "pass", f"{path} must pass"
            assert len(f["metadata"]) == f["container"]["kv_count"], "every pair is listed"
            if extra:
                assert len(f["tensors"].get("list", [])) == f["tensors"]["count"], \
                    "--full lists every tensor"
                assert not any(m.get("elided") for m in f["metadata"]), "--full elides nothing"
    text = suite.run(["info"] + needs + [path])
    assert text.returncode == proc.returncode, "text and JSON exit statuses differ"
    assert b"internal error" not in text.stderr, text.stderr.decode(errors="replace")[:300]


# The example in the README and docs/info.md is what `info` prints.
@pytest.mark.parametrize("doc", ["README.md", os.path.join("docs", "info.md")])
def test_info_example_in_the_docs(suite, source, doc):
    proc = subprocess.run([suite.exe, "info", "examples/valid/tiny-llama.gguf"],
                          cwd=source, stdout=subprocess.PIPE, check=False)
    block = "$ ggufcheck info examples/valid/tiny-llama.gguf\n" + proc.stdout.decode()
    with open(os.path.join(source, doc), encoding="utf-8") as f:
        assert block in f.read(), f"{doc}: the info example is not what info prints"


# Options that change severities (the catalogue no longer predicts them: plain=False).
OPTION_SETS = [
    ["--disable", "GGUF2012"],
    ["--disable", "non-canonical-bool"],
    ["--enable", "nul-in-string", "--profile", "spec"],
    ["--severity", "GGUF2006=error"],
    ["--severity", "GGUF4004=note"],
    ["--severity", "GGUF2012=warning"],
    ["--disable", "GGUF2004"],
    ["--limit", "depth=1"],
    ["--limit", "findings=1"],
    ["--limit", "kv-count=1"],
    ["--limit", "string-length=4"],
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=[" ".join(o) for o in OPTION_SETS])
def test_options(suite, files, options):
    profile = options[options.index("--profile") + 1] if "--profile" in options else "strict"
    paths = files.gen_paths + [files.missing]
    suite.check_run(" ".join(options), options + ["--"] + paths, paths, profile=profile,
                    plain=False, expect_rc=2)


# A file name that is not valid UTF-8: JSON must still be produced (escaped), not exit 4.
@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_non_utf8_file_name(suite, files, tmp_path, fmt):
    raw_name = os.path.join(os.fsencode(tmp_path), b"not-utf8-\xff\xfe.gguf")
    shutil.copyfile(files.generated[BOOL_BYTE], raw_name)
    proc = suite.run(["--format", fmt, raw_name])
    assert proc.returncode == 1, (
        f"--format {fmt} on a non-UTF-8 file name exited {proc.returncode} (expected 1); "
        f"stderr: {proc.stderr.decode(errors='replace').strip()[:200]}")
    doc = json.loads(proc.stdout)
    validator = suite.json_validator if fmt == "json" else suite.sarif_validator
    errors = list(validator.iter_errors(doc))
    assert not errors, suite.error_text(errors)


# SARIF for code scanning: notifications, URIs in both modes, help.
@pytest.fixture(scope="session")
def three(source):
    return os.path.join(source, "examples", "broken", "three-problems.gguf")


def test_sarif_notification_for_dropped_findings(suite, three):
    suite.check_run("dropped", ["--limit", "findings=1", three], [three], plain=False, expect_rc=1)
    inv = suite.last_sarif["runs"][0]["invocations"][0]
    notes = inv["toolExecutionNotifications"]
    assert inv["executionSuccessful"] is True, "a run with dropped findings is still successful"
    assert len(notes) == 1 and notes[0]["level"] == "warning" \
        and DROPPED_RE.match(notes[0]["message"]["text"]) \
        and DROPPED_RE.match(notes[0]["message"]["text"]).group(2) == "1", \
        f"expected one dropped-findings warning with the limit 1: {notes}"


def test_sarif_notification_for_an_unreadable_input(suite, files, three):
    suite.check_run("unreadable", [three, files.missing], [three, files.missing], expect_rc=2)
    inv = suite.last_sarif["runs"][0]["invocations"][0]
    notes = inv["toolExecutionNotifications"]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 2, f"invocation {inv}"
    assert len(notes) == 1 and notes[0]["level"] == "error" \
        and notes[0]["message"]["text"].startswith("cannot open ") \
        and notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["index"] == 1, \
        f"expected one error notification for the missing input: {notes}"
    rules = suite.last_sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rules[notes[0]["associatedRule"]["index"]]["id"] == "GGUF0001", "associatedRule index"


def test_sarif_absolute_file_uris(suite, files):
    spaced = files.generated[SPACED]
    suite.check_run("absolute", [spaced, files.missing], [spaced, files.missing], expect_rc=2)
    uri = suite.last_sarif["runs"][0]["artifacts"][0]["location"]["uri"]
    expected = "file://" + urllib.parse.quote(os.path.abspath(spaced), safe="/~")
    assert uri == expected, f"uri {uri!r}, expected {expected!r}"
    assert "%20" in uri and "%23" in uri and "%25" in uri and "%3F" in uri and "%C3%BC" in uri, \
        f"space, #, %, ? and ü are not all percent-encoded in {uri!r}"


def test_sarif_uris_relative_to_the_root(suite, files, three):
    outside = three
    run_paths = [files.generated[SPACED], files.generated[BOOL_BYTE], outside, files.missing]
    suite.check_run("rooted", run_paths, run_paths, sarif_root=files.tmp, expect_rc=2)
    run = suite.last_sarif["runs"][0]
    locations = [a["location"] for a in run["artifacts"]]
    assert locations[0] == {"uri": "model%20with%20spaces%20%231%20%2520%20%3Fx%3Dy%20%26%20%C3%BC.gguf",
        "uriBaseId": "SRCROOT"}, f"location {locations[0]}"
    assert locations[2].get("uri", "").startswith("file:///") and "uriBaseId" not in locations[2], \
        f"a file outside the root must have an absolute URI: {locations[2]}"
    assert locations[3] == {"uri": "does-not-exist.gguf", "uriBaseId": "SRCROOT"}, f"location {locations[3]}"


def test_sarif_root_dot_from_the_repository(suite, source, monkeypatch):
    # The usual CI call: a repository-relative root, from the current directory.
    monkeypatch.chdir(source)
    rel = os.path.join("examples", "broken", "truncated.gguf")
    suite.check_run("relative root", ["./" + rel], ["./" + rel], sarif_root=".")
    location = suite.last_sarif["runs"][0]["artifacts"][0]["location"]
    assert location == {"uri": "examples/broken/truncated.gguf", "uriBaseId": "SRCROOT"}, f"location {location}"


def test_sarif_help_base(suite, three):
    base = "https://example.org/ggufcheck/docs/"
    suite.check_run("help base", [three], [three], help_base=base, expect_rc=1)
    rules = suite.last_sarif["runs"][0]["tool"]["driver"]["rules"]
    assert rules and all(r["helpUri"].startswith(base) for r in rules), "helpUri does not use --sarif-help-base"


# Text output: file names escaped as keys are, whatever bytes they hold.
ESCAPED_NAMES = [
    (b"new\nline.gguf", b"new\\x0aline.gguf"),
    (b"esc\x1b[31mred.gguf", b"esc\\x1b[31mred.gguf"),
    (b"bad-\xff-utf8.gguf", b"bad-\\xff-utf8.gguf"),
    (b"csi-\xc2\x9b-c1.gguf", b"csi-\\xc2\\x9b-c1.gguf"),
    (b"back\\slash\x01.gguf", b"back\\\\slash\\x01.gguf"),
    (b"caf\xc3\xa9 ok.gguf", b"caf\xc3\xa9 ok.gguf"),
]


@pytest.mark.parametrize("raw, shown", ESCAPED_NAMES, ids=[repr(r) for r, _ in ESCAPED_NAMES])
def test_text_output_escapes_file_names(suite, files, tmp_path, raw, shown):
    tmpb = os.fsencode(tmp_path)
    path = os.path.join(tmpb, raw)
    shutil.copyfile(files.generated[BOOL_BYTE], path)
    for argv in (["--color", "never", path], ["--color", "never", path + b".missing"]):
        proc = suite.run(argv)
        assert proc.returncode in (1, 2), f"text run on {raw!r} exited {proc.returncode}"
        lines = proc.stdout.split(b"\n")
        assert lines[-1] == b"", f"{raw!r}: output does not end with a newline"
        for line in lines[:-1]:
            assert not re.search(rb"[\x00-\x08\x0a-\x1f\x7f]", line), \
                f"{raw!r}: a raw control byte reaches the terminal: {line!r}"
            assert line.startswith(b"  ") or line.startswith(os.path.join(tmpb, shown)), \
                f"{raw!r}: line {line!r} does not start with the escaped name {shown!r}"
        if argv[-1].endswith(b".missing"):
            assert os.path.join(tmpb, shown) + b".missing: No such file" in \
                proc.stdout.replace(b"cannot open ", b""), \
                f"{raw!r}: the GGUF0001 message does not show the escaped name: {proc.stdout!r}"


def test_text_total_line_of_a_run_over_several_files(suite, files, three):
    valid = files.valid_examples[0]
    for color in ("never", "always"):
        proc = suite.run(["--color", color, valid, three, files.missing])
        assert proc.returncode == 2, f"exit status {proc.returncode}"
        last = proc.stdout.rstrip(b"\n").split(b"\n")[-1]
        assert ANSI_RE.sub(b"", last) == b"3 files: 1 passed, 1 failed, 1 unreadable", \
            f"--color {color}: total line {last!r}"
        assert (ANSI_RE.search(last) is not None) == (color == "always"), f"--color {color}: total line {last!r}"
    proc = suite.run(["--color", "never", valid])
    assert b" files: " not in proc.stdout, f"a one-file run prints a total line: {proc.stdout!r}"

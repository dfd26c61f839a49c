#!/usr/bin/python3
"""Machine-readable outputs of the CLI against their schemas.

Runs `ggufcheck check --format json` and `--format sarif` over the sample files, the real files
and the example file of every code (written by ggufcheck_testkit_files from the test kit's
validator/testkit/code_examples.hpp, the corpus's codes/ files), under every profile and a few
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

Usage: /usr/bin/python3 test_outputs.py --ggufcheck PATH --source REPO --testkit-files PATH
Prints one line per failure and a final `N passed, M failed`; exits 1 on any failure.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
import urllib.parse

try:
    import jsonschema
except ImportError:  # pragma: no cover
    print("test_outputs.py: python3-jsonschema is required (apt-get install python3-jsonschema)",
          file=sys.stderr)
    sys.exit(1)

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


class Failure(Exception):
    pass


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
    require(uri.startswith("file:///"), f"{uri!r} is not an absolute file:/// URI")
    return urllib.parse.unquote_to_bytes(uri[len("file://"):])


def require(condition, message):
    if not condition:
        raise Failure(message)


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
    if proc.returncode != 0:
        raise Failure(f"{tool} exited {proc.returncode}: {proc.stderr.strip()[:300]}")
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
    def __init__(self, args):
        self.exe = args.ggufcheck
        self.source = args.source
        self.passed = 0
        self.failed = 0
        self.failures = []
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

    def case(self, name, fn, *a, **kw):
        try:
            fn(*a, **kw)
        except Failure as e:
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL {name}: {e}", flush=True)
        except Exception:  # a bug in the harness or a crash in parsing: report, keep going
            self.failed += 1
            self.failures.append(name)
            print(f"FAIL {name}: unexpected exception\n{traceback.format_exc()}", flush=True)
        else:
            self.passed += 1

    def run(self, argv, stdin=None):
        argv = [os.fsencode(a) if isinstance(a, str) else a for a in argv]
        proc = subprocess.run([os.fsencode(self.exe)] + argv, input=stdin if stdin is not None else b"",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
        return proc

    # ----------------------------------------------------------------------------------------

    def load_catalogue(self):
        proc = self.run(["list", "--format", "json"])
        require(proc.returncode == 0, f"`list --format json` exited {proc.returncode}: {proc.stderr!r}")
        doc = json.loads(proc.stdout)
        require(doc.get("schema_version") == 1, "`list --format json` has no schema_version 1")
        for d in doc["diagnostics"]:
            require(CODE_RE.match(d["code"]), f"bad code in list: {d['code']}")
            require(d["code"] not in self.catalogue, f"code listed twice: {d['code']}")
            self.catalogue[d["code"]] = d
        require("GGUF0001" in self.catalogue and "GGUF4001" in self.catalogue, "catalogue is incomplete")
        proc = self.run(["--version"])
        require(proc.returncode == 0, "--version failed")
        m = re.match(rb"^ggufcheck (\S+) \(git \S+\)\nllama\.cpp profile: llama\.cpp .+\n$", proc.stdout)
        require(m, f"--version printed {proc.stdout!r}")
        self.version = m.group(1).decode()

    def list_is_sorted(self):
        """`list` and `list --format json` give every code once, by code number."""
        proc = self.run(["list", "--format", "json"])
        codes = [d["code"] for d in json.loads(proc.stdout)["diagnostics"]]
        require(codes == sorted(codes, key=lambda c: int(c[4:])), f"`list --format json` is not sorted by code: {codes}")
        proc = self.run(["list"])
        require(proc.returncode == 0, f"`list` exited {proc.returncode}")
        text_codes = [c.decode() for c in re.findall(rb"^(GGUF[0-9]{4}) ", proc.stdout, flags=re.M)]
        require(text_codes == codes, f"`list` does not give the codes of `list --format json` in code order: {text_codes}")

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
        require(not errors, "JSON output does not match docs/json-output.schema.json: " + self.error_text(errors))
        require(doc["summary"]["exit_status"] == rc, f"summary.exit_status {doc['summary']['exit_status']} but the process exited {rc}")
        require(doc["profile"] == profile, f"profile {doc['profile']!r}, expected {profile!r}")
        require(doc["werror"] == werror, f"werror {doc['werror']}, expected {werror}")
        require(doc["tool"]["version"] == self.version, f"tool.version {doc['tool']['version']} != --version {self.version}")
        files = doc["files"]
        if paths is not None:
            require([f["path"] for f in files] == paths,
                    f"files in the wrong order or with the wrong paths: {[f['path'] for f in files]} != {paths}")
        counts = {"pass": 0, "fail": 0, "unreadable": 0}
        for f in files:
            counts[f["status"]] += 1
            findings = f["findings"]
            tally = {s: sum(1 for x in findings if x["severity"] == s) for s in LEVELS}
            summary = f["summary"]
            for key, level in (("errors", "error"), ("warnings", "warning"), ("notes", "note")):
                if summary["findings_dropped"] == 0:
                    require(summary[key] == tally[level], f"{f['path']}: summary.{key} {summary[key]} but {tally[level]} {level} findings")
                else:
                    require(summary[key] >= tally[level], f"{f['path']}: summary.{key} {summary[key]} < {tally[level]} {level} findings")
            unreadable = any(x["code"] == "GGUF0001" for x in findings)
            expected_status = "unreadable" if unreadable else ("pass" if summary["errors"] == 0 else "fail")
            require(f["status"] == expected_status, f"{f['path']}: status {f['status']}, expected {expected_status}")
            offsets = [x["offset"] for x in findings]
            require(offsets == sorted(offsets), f"{f['path']}: findings not sorted by offset: {offsets}")
            size = f["facts"]["file_size"]
            if not unreadable and os.path.isfile(f["path"]):
                require(size == os.path.getsize(f["path"]), f"{f['path']}: facts.file_size {size} != {os.path.getsize(f['path'])}")
            for x in findings:
                require(x["offset"] <= size and x["length"] <= size - x["offset"],
                        f"{f['path']}: {x['code']} at 0x{x['offset']:x}+{x['length']} runs outside the {size}-byte file")
                entry = self.catalogue.get(x["code"])
                require(entry is not None, f"{f['path']}: code {x['code']} is not in `ggufcheck list`")
                require(x["name"] == entry["name"], f"{x['code']}: name {x['name']} != catalogue name {entry['name']}")
                if plain and x["code"] != "GGUF0001":
                    expected = entry["severity"][profile]
                    if werror and expected == "warning":
                        expected = "error"
                    require(x["severity"] == expected,
                            f"{f['path']}: {x['code']} reported as {x['severity']}, catalogue says {expected} in {profile}")
            facts = f["facts"]
            if facts["data_start"] is not None:
                require(facts["data_start"] <= size or facts["tensor_data_size"] is None,
                        f"{f['path']}: data_start past the end with a tensor_data_size")
        require(doc["summary"]["files"] == len(files), "summary.files != number of files")
        for key, status in (("passed", "pass"), ("failed", "fail"), ("unreadable", "unreadable")):
            require(doc["summary"][key] == counts[status], f"summary.{key} {doc['summary'][key]} != {counts[status]}")
        expected_rc = 2 if counts["unreadable"] else (1 if counts["fail"] else 0)
        require(rc == expected_rc, f"exit status {rc}, expected {expected_rc} (worst of the files)")

    def check_sarif(self, doc, json_doc, plain, profile, werror, rc, root=None, help_base=DEFAULT_HELP_BASE):
        errors = list(self.sarif_validator.iter_errors(doc))
        require(not errors, "SARIF output does not match the SARIF 2.1.0 schema: " + self.error_text(errors))
        require(doc.get("version") == "2.1.0", "version is not 2.1.0")
        require(len(doc["runs"]) == 1, f"{len(doc['runs'])} runs, expected exactly one")
        run = doc["runs"][0]
        driver = run["tool"]["driver"]
        require(driver["name"] == "ggufcheck", "tool.driver.name is not ggufcheck")
        require(driver.get("version") == self.version, "tool.driver.version differs from --version")
        rules = driver.get("rules", [])
        rule_ids = [r["id"] for r in rules]
        require(len(rule_ids) == len(set(rule_ids)), f"duplicate rules: {rule_ids}")
        results = run.get("results", [])
        used = {r["ruleId"] for r in results}
        require(set(rule_ids) == used, f"rules {sorted(rule_ids)} are not exactly the codes used {sorted(used)}")
        for rule in rules:
            require(CODE_RE.match(rule["id"]), f"rule id {rule['id']}")
            entry = self.catalogue[rule["id"]]
            require(rule.get("name") == entry["name"], f"rule {rule['id']} name {rule.get('name')} != {entry['name']}")
            require(rule.get("shortDescription", {}).get("text"), f"rule {rule['id']} has no shortDescription")
            level = rule.get("defaultConfiguration", {}).get("level")
            require(level in LEVELS, f"rule {rule['id']} defaultConfiguration.level {level}")
            if plain and rule["id"] != "GGUF0001" and entry["severity"][profile] != "silent":
                expected = entry["severity"][profile]
                if werror and expected == "warning":
                    expected = "error"
                require(level == expected, f"rule {rule['id']} level {level}, catalogue says {expected} in {profile}")
            require(rule.get("helpUri") == help_base + rule["id"] + ".md",
                    f"rule {rule['id']} helpUri {rule.get('helpUri')!r}, expected {help_base + rule['id'] + '.md'!r}")
            what, fix_heading, fix = self.help_parts(rule["id"])
            help_text = rule.get("help", {}).get("text", "")
            require(what and help_text.startswith(what),
                    f"rule {rule['id']} help.text does not start with the page's first paragraph: {help_text[:120]!r}")
            require(fix and f"{fix_heading}:\n{fix}" in help_text,
                    f"rule {rule['id']} help.text lacks the page's fix section {fix_heading!r}")
            require(help_text.endswith(rule["helpUri"]), f"rule {rule['id']} help.text does not end with the page's URL")
            require(not INTERNAL_DOCS_RE.search(help_text), f"rule {rule['id']} help.text names an internal document")
            markdown = rule["help"].get("markdown", "")
            require(markdown.startswith(what) and f"**{fix_heading}**\n\n{fix}" in markdown
                    and markdown.endswith(f"]({rule['helpUri']})"),
                    f"rule {rule['id']} help.markdown is not the page's short form: {markdown[:120]!r}")
            require(rule.get("fullDescription", {}).get("text", "").startswith(entry["meaning"]),
                    f"rule {rule['id']} fullDescription does not start with the meaning")
            props = rule.get("properties", {})
            require(props.get("tags", [])[:2] == ["gguf", profile] and props.get("precision") in ("very-high", "high")
                    and props.get("problem.severity") in ("error", "warning", "recommendation"),
                    f"rule {rule['id']} properties {props}")
        # One invocation: successful unless an input was unreadable, with a notification per
        # unreadable input (error) and per file whose findings were dropped (warning).
        invocations = run.get("invocations", [])
        require(len(invocations) == 1, f"{len(invocations)} invocations, expected 1")
        invocation = invocations[0]
        json_files = json_doc["files"]
        any_unreadable = any(f["status"] == "unreadable" for f in json_files)
        require(invocation.get("executionSuccessful") is (not any_unreadable),
                f"executionSuccessful {invocation.get('executionSuccessful')} with unreadable inputs: {any_unreadable}")
        require(invocation.get("exitCode") == rc, f"invocation exitCode {invocation.get('exitCode')} != exit status {rc}")
        expected_notes = []
        for i, f in enumerate(json_files):
            for x in f["findings"]:
                if x["code"] == "GGUF0001":
                    expected_notes.append((i, "error", x["message"]))
            dropped = f["summary"]["findings_dropped"]
            if dropped:
                expected_notes.append((i, "warning", dropped))
        notes = invocation.get("toolExecutionNotifications", [])
        require(len(notes) == len(expected_notes),
                f"{len(notes)} toolExecutionNotifications, expected {len(expected_notes)}")
        for note, (i, level, what) in zip(notes, expected_notes):
            where = f"notification for {json_files[i]['path']}"
            require(note.get("level") == level, f"{where}: level {note.get('level')}, expected {level}")
            loc = note.get("locations", [{}])[0].get("physicalLocation", {}).get("artifactLocation", {})
            require(loc.get("index") == i, f"{where}: artifactLocation.index {loc.get('index')}")
            text = note.get("message", {}).get("text", "")
            if level == "error":
                require(text == what, f"{where}: message {text!r} != the GGUF0001 message {what!r}")
                require(note.get("associatedRule", {}).get("id") == "GGUF0001", f"{where}: no associatedRule GGUF0001")
            else:
                m = DROPPED_RE.match(text)
                listed = len(json_files[i]["findings"])
                require(m and int(m.group(1)) == what and int(m.group(2)) == listed,
                        f"{where}: message {text!r}, expected {what} findings beyond the limit of {listed}")
        base_ids = run.get("originalUriBaseIds")
        if root is not None:
            root_abs = os.path.abspath(root)
            require(base_ids and set(base_ids) == {"SRCROOT"}, f"originalUriBaseIds {base_ids}, expected SRCROOT")
            root_uri = base_ids["SRCROOT"].get("uri", "")
            require(root_uri.endswith("/") and URI_REF_RE.match(root_uri), f"SRCROOT uri {root_uri!r}")
            require(file_uri_bytes(root_uri).rstrip(b"/") == os.fsencode(root_abs).rstrip(b"/"),
                    f"SRCROOT uri {root_uri!r} is not {root_abs!r}")
        else:
            require(base_ids is None, f"originalUriBaseIds {base_ids} without --sarif-root")
        artifacts = run.get("artifacts", [])
        require(len(artifacts) == len(json_files), f"{len(artifacts)} artifacts for {len(json_files)} files")
        for artifact, f in zip(artifacts, json_files):
            location = artifact.get("location", {})
            if f["path"] == "<stdin>":
                require("uri" not in location and location.get("description", {}).get("text") == "standard input",
                        f"standard input has the location {location}, expected no uri and a description")
                continue
            uri = location.get("uri", "")
            require(URI_REF_RE.match(uri), f"artifact uri {uri!r} is not a valid URI reference")
            path_abs = os.fsencode(os.path.abspath(f["path"]))
            if root is not None and (path_abs + b"/").startswith(os.fsencode(os.path.abspath(root)).rstrip(b"/") + b"/") \
                    and path_abs != os.fsencode(os.path.abspath(root)):
                rel = os.fsencode(os.path.relpath(f["path"], root))
                require(location.get("uriBaseId") == "SRCROOT", f"artifact {uri!r} under the root has no uriBaseId SRCROOT")
                require(not uri.startswith("file:") and not uri.startswith("/"), f"artifact uri {uri!r} under the root is not relative")
                require(urllib.parse.unquote_to_bytes(uri) == rel, f"artifact uri {uri!r} does not decode to {rel!r}")
            else:
                require("uriBaseId" not in location, f"artifact {uri!r} outside any root has a uriBaseId")
                require(file_uri_bytes(uri) == path_abs, f"artifact uri {uri!r} does not decode to {path_abs!r}")
            if f["status"] == "unreadable":
                require("length" not in artifact, f"unreadable input {f['path']} has an artifact length")
            else:
                require(artifact.get("length") == f["facts"]["file_size"],
                        f"artifact length {artifact.get('length')} != file size {f['facts']['file_size']}")
        expected_findings = [(i, x) for i, f in enumerate(json_files) for x in f["findings"]]
        require(len(results) == len(expected_findings),
                f"{len(results)} SARIF results but {len(expected_findings)} JSON findings")
        for result, (file_index, x) in zip(results, expected_findings):
            where = f"{json_files[file_index]['path']} {x['code']} at 0x{x['offset']:x}"
            require(result["ruleId"] == x["code"], f"{where}: ruleId {result['ruleId']}")
            idx = result.get("ruleIndex")
            require(idx is not None and 0 <= idx < len(rules) and rules[idx]["id"] == result["ruleId"],
                    f"{where}: ruleIndex {idx} does not point at rule {result['ruleId']}")
            require(result.get("level") in LEVELS, f"{where}: level {result.get('level')}")
            require(result["level"] == x["severity"], f"{where}: level {result['level']} != severity {x['severity']}")
            text = result.get("message", {}).get("text", "")
            require(text and text.startswith(x["message"]), f"{where}: message {text!r} does not carry {x['message']!r}")
            locations = result.get("locations", [])
            require(len(locations) == 1, f"{where}: {len(locations)} locations")
            physical = locations[0].get("physicalLocation", {})
            art = physical.get("artifactLocation", {})
            require(art.get("index") == file_index, f"{where}: artifactLocation.index {art.get('index')} != {file_index}")
            require({k: v for k, v in art.items() if k != "index"} == artifacts[file_index]["location"],
                    f"{where}: artifactLocation {art} differs from the artifact's location")
            region = physical.get("region", {})
            require(region.get("startLine") == 1, f"{where}: region.startLine {region.get('startLine')}, expected 1")
            require("byteOffset" in region and "byteLength" in region, f"{where}: region without byteOffset/byteLength")
            require(region["byteOffset"] == x["offset"] and region["byteLength"] == x["length"],
                    f"{where}: region {region} differs from the JSON finding")
            size = json_files[file_index]["facts"]["file_size"]
            require(region["byteOffset"] <= size and region["byteLength"] <= size - region["byteOffset"],
                    f"{where}: region 0x{region['byteOffset']:x}+{region['byteLength']} outside the {size}-byte file")
            logical = locations[0].get("logicalLocations", [])
            require(logical and logical[0].get("fullyQualifiedName") == x["path"],
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
            require(proc.returncode in (0, 1, 2),
                    f"--format {fmt} exited {proc.returncode}; stderr: {proc.stderr.decode(errors='replace').strip()[:300]}")
            err = proc.stderr.decode(errors="replace")
            require("internal error" not in err and "terminate called" not in err, f"--format {fmt}: {err.strip()[:300]}")
        if ps is not None:
            require(pj.returncode == ps.returncode, f"json exited {pj.returncode}, sarif exited {ps.returncode}")
        if expect_rc is not None:
            require(pj.returncode == expect_rc, f"exit status {pj.returncode}, expected {expect_rc}")
        try:
            jdoc = json.loads(pj.stdout)
        except ValueError as e:
            raise Failure(f"--format json is not JSON: {e}")
        self.check_json(jdoc, pj.returncode, paths, profile, werror, plain)
        if ps is None:
            return jdoc
        try:
            sdoc = json.loads(ps.stdout)
        except ValueError as e:
            raise Failure(f"--format sarif is not JSON: {e}")
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
                require(code in codes, f"{f['path']}: expected {code}, got {codes}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ggufcheck", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--testkit-files", required=True)
    args = parser.parse_args()
    for path in (args.ggufcheck, args.testkit_files):
        if not os.access(path, os.X_OK):
            print(f"test_outputs.py: {path} is not an executable", file=sys.stderr)
            return 1

    suite = Suite(args)
    suite.case("catalogue and version", suite.load_catalogue)
    if suite.failed:
        print(f"{suite.passed} passed, {suite.failed} failed")
        return 1
    suite.case("list sorted by code", suite.list_is_sorted)

    examples = sorted(
        os.path.join(args.source, "examples", sub, name)
        for sub in ("valid", "broken")
        for name in os.listdir(os.path.join(args.source, "examples", sub))
        if name.endswith(".gguf"))
    valid_examples = [p for p in examples if os.sep + "valid" + os.sep in p]
    real_dir = os.path.join(args.source, "validator", "tests", "data", "real-gguf")
    real = sorted(os.path.join(real_dir, n) for n in os.listdir(real_dir) if n.endswith(".gguf"))

    tmp = tempfile.mkdtemp(prefix="ggufcheck-outputs-")
    try:
        generated = {}
        expected_strict = {}
        needs = {}  # path -> the options its code needs
        for name, (path, code, options) in write_examples(args.testkit_files, tmp, args.source).items():
            generated[name] = path
            expected_strict[path] = code
            needs[path] = options
        generated[SPACED] = os.path.join(tmp, SPACED)
        shutil.copyfile(generated[BOOL_BYTE], generated[SPACED])
        expected_strict[generated[SPACED]] = "GGUF2012"
        missing = os.path.join(tmp, "does-not-exist.gguf")
        empty_dir = os.path.join(tmp, "no-gguf-here")
        os.makedirs(empty_dir)
        with open(os.path.join(empty_dir, "readme.txt"), "w", encoding="utf-8") as f:
            f.write("nothing to see\n")
        gen_paths = sorted(generated.values())

        suite.case("generated files are all present", require, len(gen_paths) >= 30, "too few generated files")

        for profile in PROFILES:
            p = ["--profile", profile]
            # One file per run: each output small and self-contained. SARIF per file in the strict
            # profile; in the others the runs of all files at once below check it.
            for path in examples + real + gen_paths:
                label = f"{profile} {os.path.relpath(path, tmp) if path.startswith(tmp) else os.path.basename(path)}"

                def one(path=path, profile=profile, p=p):
                    jdoc = suite.check_run(label, p + needs.get(path, []) + [path], [path], profile=profile,
                                           sarif=profile == "strict")
                    if profile == "strict":
                        suite.expect_codes(jdoc, expected_strict)
                    if path in real:
                        # No finding but the note naming a chat template of the pinned llama.cpp
                        # (GGUF9015: the phi-3 vocabulary's is one).
                        f = jdoc["files"][0]
                        noise = [x for x in f["findings"]
                                 if not (x["code"] == "GGUF9015" and x["severity"] == "note")]
                        require(f["status"] == "pass" and not noise,
                                f"real file {path} must pass {profile} with no finding: {noise[:3]}")
                    if path in valid_examples:
                        require(jdoc["files"][0]["status"] == "pass", f"{path} must pass {profile}")
                suite.case(label, one)
            # Unreadable inputs: GGUF0001, exit 2.
            for label, path in (("missing file", missing), ("directory without *.gguf", empty_dir)):
                def unreadable(path=path, profile=profile, p=p):
                    jdoc = suite.check_run(label, p + [path], [path], profile=profile, expect_rc=2)
                    f = jdoc["files"][0]
                    require(f["status"] == "unreadable", f"status {f['status']}")
                    require([x["code"] for x in f["findings"]] == ["GGUF0001"], f"findings {f['findings']}")
                suite.case(f"{profile} {label}", unreadable)
            # Everything at once, in the order given.
            everything = examples + gen_paths + [missing] + real
            suite.case(f"{profile} all files in one run",
                       lambda p=p, profile=profile: suite.check_run("all", p + everything, everything,
                                                                     profile=profile, expect_rc=2))
            suite.case(f"{profile} all files, -j 2",
                       lambda p=p, profile=profile: suite.check_run("all -j 2", ["-j", "2"] + p + everything,
                                                                     everything, profile=profile, expect_rc=2))
            # The data check over every file: the zero tensors of most examples get GGUF6005,
            # data_checked appears in the facts of each file it scanned.
            suite.case(f"{profile} all files, --data",
                       lambda p=p, profile=profile: suite.check_run("all --data", ["--data", "-j", "1"] + p + everything,
                                                                     everything, profile=profile, expect_rc=2))
            suite.case(f"{profile} --werror",
                       lambda p=p, profile=profile: suite.check_run("werror", ["--werror"] + p + gen_paths, gen_paths,
                                                                     profile=profile, werror=True))
            # Directories expand to their *.gguf files, sorted.
            suite.case(f"{profile} a directory",
                       lambda p=p, profile=profile: suite.check_run("dir", p + [tmp], sorted(gen_paths), profile=profile))
            # Standard input.
            with open(generated[BOOL_BYTE], "rb") as f:
                bool_bytes = f.read()

            def stdin_case(p=p, profile=profile):
                # A container fixture (no vocabulary): without the model checks.
                jdoc = suite.check_run("stdin", p + ["--no-model-checks", "-"], ["<stdin>"],
                                       profile=profile, stdin=bool_bytes,
                                       expect_rc=0 if profile == "llama.cpp" else 1)
                require(jdoc["files"][0]["facts"]["file_size"] == len(bool_bytes), "stdin file_size")
            suite.case(f"{profile} standard input", stdin_case)

        # `info --format json` against docs/info.schema.json, and its verdict against check's.
        with open(os.path.join(args.source, "docs", "info.schema.json"), encoding="utf-8") as f:
            info_schema = json.load(f)
        info_cls = jsonschema.validators.validator_for(info_schema)
        info_cls.check_schema(info_schema)
        info_validator = info_cls(info_schema)
        for path in examples + real + gen_paths + [missing]:
            label = f"info {os.path.relpath(path, tmp) if path.startswith(tmp) else os.path.basename(path)}"

            def info_case(path=path):
                for extra in ([], ["--full"]):
                    proc = suite.run(["info", "--format", "json"] + extra + needs.get(path, []) + [path])
                    err = proc.stderr.decode(errors="replace")
                    require(proc.returncode in (0, 1, 2) and "internal error" not in err,
                            f"info {extra} exited {proc.returncode}: {err.strip()[:300]}")
                    doc = json.loads(proc.stdout)
                    errors = list(info_validator.iter_errors(doc))
                    require(not errors, "info JSON does not match docs/info.schema.json: " +
                            suite.error_text(errors))
                    f = doc["files"][0]
                    require(f["path"] == path, f"path {f['path']}")
                    require(f["verdict"]["exit_status"] == proc.returncode,
                            f"verdict exit status {f['verdict']['exit_status']}, process {proc.returncode}")
                    check = json.loads(suite.run(["--format", "json"] + needs.get(path, []) + [path]).stdout)
                    require(f["verdict"]["status"] == check["files"][0]["status"],
                            f"info says {f['verdict']['status']}, check says {check['files'][0]['status']}")
                    if path in real or path in valid_examples:
                        require(f["verdict"]["status"] == "pass", f"{path} must pass")
                        require(len(f["metadata"]) == f["container"]["kv_count"], "every pair is listed")
                        if extra:
                            require(len(f["tensors"].get("list", [])) == f["tensors"]["count"],
                                    "--full lists every tensor")
                            require(not any(m.get("elided") for m in f["metadata"]), "--full elides nothing")
                text = suite.run(["info"] + needs.get(path, []) + [path])
                require(text.returncode == proc.returncode, "text and JSON exit statuses differ")
                require(b"internal error" not in text.stderr, text.stderr.decode(errors="replace")[:300])
            suite.case(label, info_case)

        # The example in the README and docs/info.md is what `info` prints.
        def info_example():
            proc = subprocess.run([suite.exe, "info", "examples/valid/tiny-llama.gguf"],
                                  cwd=args.source, stdout=subprocess.PIPE, check=False)
            block = "$ ggufcheck info examples/valid/tiny-llama.gguf\n" + proc.stdout.decode()
            for doc in ("README.md", os.path.join("docs", "info.md")):
                with open(os.path.join(args.source, doc), encoding="utf-8") as f:
                    require(block in f.read(), f"{doc}: the info example is not what info prints")
        suite.case("info example in the docs", info_example)

        # Options that change severities (the catalogue no longer predicts them: plain=False).
        option_sets = [
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
        for options in option_sets:
            profile = options[options.index("--profile") + 1] if "--profile" in options else "strict"
            paths = gen_paths + [missing]
            suite.case("options " + " ".join(options),
                       lambda o=options, pr=profile, ps=paths: suite.check_run(
                           " ".join(o), o + ["--"] + ps, ps, profile=pr, plain=False, expect_rc=2))

        # A file name that is not valid UTF-8: JSON must still be produced (escaped), not exit 4.
        raw_name = os.path.join(os.fsencode(tmp), b"not-utf8-\xff\xfe.gguf")
        shutil.copyfile(generated[BOOL_BYTE], raw_name)

        def non_utf8_name():
            for fmt in ("json", "sarif"):
                proc = suite.run(["--format", fmt, raw_name])
                require(proc.returncode == 1,
                        f"--format {fmt} on a non-UTF-8 file name exited {proc.returncode} (expected 1); "
                        f"stderr: {proc.stderr.decode(errors='replace').strip()[:200]}")
                doc = json.loads(proc.stdout)
                if fmt == "json":
                    errors = list(suite.json_validator.iter_errors(doc))
                    require(not errors, suite.error_text(errors))
                else:
                    errors = list(suite.sarif_validator.iter_errors(doc))
                    require(not errors, suite.error_text(errors))
        suite.case("non-UTF-8 file name", non_utf8_name)

        # SARIF for code scanning: notifications, URIs in both modes, help.
        three = os.path.join(args.source, "examples", "broken", "three-problems.gguf")
        spaced = generated[SPACED]

        def dropped_findings():
            suite.check_run("dropped", ["--limit", "findings=1", three], [three], plain=False, expect_rc=1)
            inv = suite.last_sarif["runs"][0]["invocations"][0]
            notes = inv["toolExecutionNotifications"]
            require(inv["executionSuccessful"] is True, "a run with dropped findings is still successful")
            require(len(notes) == 1 and notes[0]["level"] == "warning"
                    and DROPPED_RE.match(notes[0]["message"]["text"])
                    and DROPPED_RE.match(notes[0]["message"]["text"]).group(2) == "1",
                    f"expected one dropped-findings warning with the limit 1: {notes}")
        suite.case("SARIF notification for dropped findings", dropped_findings)

        def unreadable_notification():
            suite.check_run("unreadable", [three, missing], [three, missing], expect_rc=2)
            inv = suite.last_sarif["runs"][0]["invocations"][0]
            notes = inv["toolExecutionNotifications"]
            require(inv["executionSuccessful"] is False and inv["exitCode"] == 2, f"invocation {inv}")
            require(len(notes) == 1 and notes[0]["level"] == "error"
                    and notes[0]["message"]["text"].startswith("cannot open ")
                    and notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["index"] == 1,
                    f"expected one error notification for the missing input: {notes}")
            rules = suite.last_sarif["runs"][0]["tool"]["driver"]["rules"]
            require(rules[notes[0]["associatedRule"]["index"]]["id"] == "GGUF0001", "associatedRule index")
        suite.case("SARIF notification for an unreadable input", unreadable_notification)

        def absolute_uris():
            suite.check_run("absolute", [spaced, missing], [spaced, missing], expect_rc=2)
            uri = suite.last_sarif["runs"][0]["artifacts"][0]["location"]["uri"]
            expected = "file://" + urllib.parse.quote(os.path.abspath(spaced), safe="/~")
            require(uri == expected, f"uri {uri!r}, expected {expected!r}")
            require("%20" in uri and "%23" in uri and "%25" in uri and "%3F" in uri and "%C3%BC" in uri,
                    f"space, #, %, ? and ü are not all percent-encoded in {uri!r}")
        suite.case("SARIF absolute file URIs", absolute_uris)

        def rooted_uris():
            outside = three
            run_paths = [spaced, generated[BOOL_BYTE], outside, missing]
            suite.check_run("rooted", run_paths, run_paths, sarif_root=tmp, expect_rc=2)
            run = suite.last_sarif["runs"][0]
            locations = [a["location"] for a in run["artifacts"]]
            require(locations[0] == {"uri": "model%20with%20spaces%20%231%20%2520%20%3Fx%3Dy%20%26%20%C3%BC.gguf",
                                     "uriBaseId": "SRCROOT"}, f"location {locations[0]}")
            require(locations[2].get("uri", "").startswith("file:///") and "uriBaseId" not in locations[2],
                    f"a file outside the root must have an absolute URI: {locations[2]}")
            require(locations[3] == {"uri": "does-not-exist.gguf", "uriBaseId": "SRCROOT"}, f"location {locations[3]}")
        suite.case("SARIF URIs relative to --sarif-root", rooted_uris)

        def relative_root():
            # The usual CI call: a repository-relative root, from the current directory.
            old = os.getcwd()
            os.chdir(args.source)
            try:
                rel = os.path.join("examples", "broken", "truncated.gguf")
                suite.check_run("relative root", ["./" + rel], ["./" + rel], sarif_root=".")
                location = suite.last_sarif["runs"][0]["artifacts"][0]["location"]
                require(location == {"uri": "examples/broken/truncated.gguf", "uriBaseId": "SRCROOT"}, f"location {location}")
            finally:
                os.chdir(old)
        suite.case("SARIF --sarif-root . from the repository", relative_root)

        def help_base():
            base = "https://example.org/ggufcheck/docs/"
            suite.check_run("help base", [three], [three], help_base=base, expect_rc=1)
            rules = suite.last_sarif["runs"][0]["tool"]["driver"]["rules"]
            require(rules and all(r["helpUri"].startswith(base) for r in rules), "helpUri does not use --sarif-help-base")
        suite.case("SARIF --sarif-help-base", help_base)

        # Text output: file names escaped as keys are, whatever bytes they hold.
        def escaped_names():
            tmpb = os.fsencode(tmp)
            cases = [
                (b"new\nline.gguf", b"new\\x0aline.gguf"),
                (b"esc\x1b[31mred.gguf", b"esc\\x1b[31mred.gguf"),
                (b"bad-\xff-utf8.gguf", b"bad-\\xff-utf8.gguf"),
                (b"csi-\xc2\x9b-c1.gguf", b"csi-\\xc2\\x9b-c1.gguf"),
                (b"back\\slash\x01.gguf", b"back\\\\slash\\x01.gguf"),
                (b"caf\xc3\xa9 ok.gguf", b"caf\xc3\xa9 ok.gguf"),
            ]
            for raw, shown in cases:
                path = os.path.join(tmpb, raw)
                shutil.copyfile(generated[BOOL_BYTE], path)
                try:
                    for argv in (["--color", "never", path], ["--color", "never", path + b".missing"]):
                        proc = suite.run(argv)
                        require(proc.returncode in (1, 2), f"text run on {raw!r} exited {proc.returncode}")
                        lines = proc.stdout.split(b"\n")
                        require(lines[-1] == b"", f"{raw!r}: output does not end with a newline")
                        for line in lines[:-1]:
                            require(not re.search(rb"[\x00-\x08\x0a-\x1f\x7f]", line),
                                    f"{raw!r}: a raw control byte reaches the terminal: {line!r}")
                            require(line.startswith(b"  ") or line.startswith(os.path.join(tmpb, shown)),
                                    f"{raw!r}: line {line!r} does not start with the escaped name {shown!r}")
                        if argv[-1].endswith(b".missing"):
                            require(os.path.join(tmpb, shown) + b".missing: No such file" in proc.stdout.replace(b"cannot open ", b""),
                                    f"{raw!r}: the GGUF0001 message does not show the escaped name: {proc.stdout!r}")
                finally:
                    os.unlink(path)
        suite.case("text output escapes file names", escaped_names)

        def total_line():
            valid = valid_examples[0]
            for color in ("never", "always"):
                proc = suite.run(["--color", color, valid, three, missing])
                require(proc.returncode == 2, f"exit status {proc.returncode}")
                last = proc.stdout.rstrip(b"\n").split(b"\n")[-1]
                require(ANSI_RE.sub(b"", last) == b"3 files: 1 passed, 1 failed, 1 unreadable",
                        f"--color {color}: total line {last!r}")
                require((ANSI_RE.search(last) is not None) == (color == "always"), f"--color {color}: total line {last!r}")
            proc = suite.run(["--color", "never", valid])
            require(b" files: " not in proc.stdout, f"a one-file run prints a total line: {proc.stdout!r}")
        suite.case("text total line of a run over several files", total_line)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{suite.passed} passed, {suite.failed} failed")
    if suite.failed:
        print("failed: " + "; ".join(suite.failures[:20]) + (" ..." if len(suite.failures) > 20 else ""))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

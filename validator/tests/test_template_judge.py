#!/usr/bin/python3
"""ggufcheck's chat-template checks (GGUF9001-9016) against an independent judge, Jinja2's sandbox.

Every template of the test set (validator/tests/templates/, described by its manifest.json) and
every template of the pinned llama.cpp (.deps/conformance/llama.cpp/models/templates/) is judged
by template_judge.py (Jinja2, as transformers renders chat templates, sandboxed, in a child
process), then written as tokenizer.chat_template into a minimal GGUF v3 file and checked with
`ggufcheck --format json`. It asserts:

 (i)   every template the sandbox refuses as an escape (security-error, refusal `escape`) gets at
       least one of GGUF9002/9003/9004;
 (ii)  every template Jinja2 cannot parse (syntax-error) gets GGUF9001, 9005 or 9008;
 (iii) every test-set template gets every code of its manifest `expect` and none of its `forbid`;
 (iv)  no llama.cpp template gets a 9xxx warning or error (notes, such as 9015, are allowed).

It prints the figures: templates, how many the sandbox refuses and how many of those ggufcheck
flags, how many Jinja2 cannot parse and how many of those are flagged, and the false positives on
the llama.cpp templates.

`--self-check` runs without ggufcheck: the manifest lists every .jinja of the set and nothing
else, its entries are consistent (what the sandbox refuses expects 9002/9003/9004, what Jinja2
cannot parse expects 9001/9005/9008, expect and forbid do not meet, benign templates forbid the
security codes), the files are what templates/generate.py writes, and the judge's verdict on every
test-set template is the manifest's `judge` (and `refusal`).

`--pinned` runs without the judge (and without jinja2): every chat template of the pinned llama.cpp
passes `ggufcheck --profile strict` with no GGUF9xxx warning or error, and is reported as known
(GGUF9015, a note): each of its vocabulary files models/ggml-vocab-*.gguf as it is (with every
tokenizer.chat_template and tokenizer.chat_template.<name> it holds: Cohere's tool_use and rag
among them), and each models/templates/*.jinja written as tokenizer.chat_template into a minimal
GGUF file. Without the tree it says so and exits 77 (skip).

Usage: /usr/bin/python3 test_template_judge.py --ggufcheck PATH --source REPO [--llama-cpp DIR]
       /usr/bin/python3 test_template_judge.py --self-check --source REPO
       /usr/bin/python3 test_template_judge.py --pinned --ggufcheck PATH --source REPO
Prints one line per failure and a final `N passed, M failed`; exits 1 on any failure, 77 (skip)
when this Python has no jinja2 (Debian: python3-jinja2, installed by scripts/setup.sh) or, with
--pinned, when there is no llama.cpp tree.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SET_DIR = os.path.join("validator", "tests", "templates")
LLAMA_CPP_DIR = os.path.join(".deps", "conformance", "llama.cpp")
ESCAPE_CODES = {"GGUF9002", "GGUF9003", "GGUF9004"}
PARSE_CODES = {"GGUF9001", "GGUF9005", "GGUF9008"}
VERDICTS = ("ok", "security-error", "syntax-error", "render-error", "timeout")
GGUF_STRING = 8
ALIGNMENT = 32

sys.path.insert(0, HERE)
import template_judge  # noqa: E402  (this folder)


# --- a minimal GGUF file -------------------------------------------------------------------------

def gguf_string(s):
    data = s if isinstance(s, bytes) else s.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def gguf_with_template(template_bytes):
    """GGUF v3, no tensors, two pairs: general.architecture = "llama" and tokenizer.chat_template
    = the template (a string: u64 length, the bytes), padded to the default alignment."""
    pairs = [("general.architecture", b"llama"), ("tokenizer.chat_template", template_bytes)]
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs))
    for key, value in pairs:
        out += gguf_string(key) + struct.pack("<I", GGUF_STRING) + gguf_string(value)
    out += b"\0" * (-len(out) % ALIGNMENT)
    return out


def ggufcheck_findings(ggufcheck, path):
    """[(code, severity)] of ggufcheck's findings on one file (the strict profile)."""
    p = subprocess.run([ggufcheck, "--profile", "strict", "--format", "json", path],
                       stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=dict(os.environ, NO_COLOR="1"), timeout=120)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"ggufcheck exited {p.returncode}: "
                           f"{p.stderr.decode('utf-8', 'replace').strip()}")
    document = json.loads(p.stdout)
    return [(f["code"], f["severity"]) for f in document["files"][0]["findings"]]


# --- the test set --------------------------------------------------------------------------------

def load_manifest(source):
    with open(os.path.join(source, SET_DIR, "manifest.json"), encoding="utf-8") as f:
        return json.load(f)["templates"]


class Checker:
    def __init__(self, source, llama_cpp, jobs, timeout):
        self.source = source
        self.set_dir = os.path.join(source, SET_DIR)
        self.llama_cpp = llama_cpp
        self.jobs = jobs
        self.timeout = timeout
        self.passed = 0
        self.failed = 0

    def check(self, condition, message):
        if condition:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {message}")

    def llama_cpp_templates(self):
        folder = os.path.join(self.llama_cpp, "models", "templates")
        if not os.path.isdir(folder):
            print(f"note: no llama.cpp tree at {self.llama_cpp} (conformance/setup fetches it): "
                  f"its templates are not checked")
            return []
        return template_judge.template_files(folder)

    # --- without ggufcheck -------------------------------------------------------------------

    def self_check(self):
        manifest = load_manifest(self.source)
        on_disk = {f for f in os.listdir(self.set_dir) if f.endswith(".jinja")}
        listed = [e["file"] for e in manifest]
        self.check(len(listed) == len(set(listed)), "manifest.json lists a file twice")
        for f in sorted(on_disk - set(listed)):
            self.check(False, f"{SET_DIR}/{f} is not in manifest.json")
        for f in sorted(set(listed) - on_disk):
            self.check(False, f"manifest.json lists {f}, which is not in {SET_DIR}")
        for e in manifest:
            self.check_entry(e)
        generator = os.path.join(self.set_dir, "generate.py")
        if os.path.isdir(os.path.join(self.llama_cpp, "models", "templates")):
            p = subprocess.run([sys.executable, generator, "--llama-cpp", self.llama_cpp, "--check"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            self.check(p.returncode == 0, f"the test set is not what templates/generate.py writes:\n"
                                          f"{p.stdout.decode('utf-8', 'replace')}")
        results = template_judge.judge_all([os.path.join(self.set_dir, e["file"]) for e in manifest],
                                           self.timeout, self.jobs)
        for e, r in zip(manifest, results):
            self.check(r["verdict"] == e["judge"] and r.get("refusal") == e.get("refusal"),
                       f"{e['file']}: the judge says {r['verdict']} {r.get('refusal') or ''}"
                       f"({r['detail']}), the manifest {e['judge']} {e.get('refusal') or ''}")
        llama = template_judge.judge_all(self.llama_cpp_templates(), self.timeout, self.jobs)
        self.figures(results, llama, None, None)

    def check_entry(self, e):
        name = e["file"]
        expect, forbid = set(e["expect"]), set(e["forbid"])
        codes_ok = all(c.startswith("GGUF9") and len(c) == 8 and c[4:].isdigit()
                       for c in expect | forbid)
        self.check(codes_ok, f"{name}: a code that is not GGUF9xxx in expect or forbid")
        self.check(not expect & forbid, f"{name}: {sorted(expect & forbid)} both expected and forbidden")
        self.check(e["judge"] in VERDICTS, f"{name}: judge '{e['judge']}' is no verdict")
        self.check(bool(e.get("what")), f"{name}: no 'what'")
        if e["judge"] == "security-error":
            self.check(e.get("refusal") in ("escape", "mutation"),
                       f"{name}: a security-error needs its refusal (escape or mutation)")
            if e.get("refusal") == "escape":
                self.check(expect & ESCAPE_CODES, f"{name}: the sandbox refuses it as an escape, "
                                                  f"so it must expect one of {sorted(ESCAPE_CODES)}")
        else:
            self.check("refusal" not in e, f"{name}: a refusal without a security-error")
        if e["judge"] == "syntax-error":
            self.check(expect & PARSE_CODES, f"{name}: Jinja2 cannot parse it, so it must expect "
                                             f"one of {sorted(PARSE_CODES)}")
        if not expect:
            self.check(ESCAPE_CODES <= forbid and "GGUF9001" in forbid,
                       f"{name}: a benign template forbids 9001-9004")

    # --- with ggufcheck ----------------------------------------------------------------------

    def run(self, ggufcheck):
        manifest = load_manifest(self.source)
        entries = {os.path.join(self.set_dir, e["file"]): e for e in manifest}
        set_files = list(entries)
        llama_files = self.llama_cpp_templates()
        results = template_judge.judge_all(set_files + llama_files, self.timeout, self.jobs)
        findings = {}
        with tempfile.TemporaryDirectory(prefix="ggufcheck-templates-") as work:
            for i, path in enumerate(set_files + llama_files):
                with open(path, "rb") as f:
                    template = f.read()
                gguf = os.path.join(work, f"{i:03d}.gguf")
                with open(gguf, "wb") as f:
                    f.write(gguf_with_template(template))
                try:
                    findings[path] = ggufcheck_findings(ggufcheck, gguf)
                except (RuntimeError, ValueError, KeyError, IndexError) as err:
                    self.check(False, f"{self.short(path)}: {err}")
                    findings[path] = []
        flagged_escapes = flagged_syntax = 0
        for r in results:
            path = r["file"]
            codes = {c for c, _ in findings[path]}
            name = self.short(path)
            if r["verdict"] == "security-error" and r.get("refusal") == "escape":
                hit = bool(codes & ESCAPE_CODES)
                flagged_escapes += hit
                self.check(hit, f"{name}: the sandbox refuses it ({r['detail']}) but ggufcheck "
                                f"reports none of {sorted(ESCAPE_CODES)} (it reports {sorted(codes)})")
            if r["verdict"] == "syntax-error":
                hit = bool(codes & PARSE_CODES)
                flagged_syntax += hit
                self.check(hit, f"{name}: Jinja2 cannot parse it ({r['detail']}) but ggufcheck "
                                f"reports none of {sorted(PARSE_CODES)} (it reports {sorted(codes)})")
            if path in entries:
                e = entries[path]
                for code in e["expect"]:
                    self.check(code in codes, f"{name}: expected {code}, ggufcheck reports "
                                              f"{sorted(codes)} ({e['what']})")
                for code in e["forbid"]:
                    self.check(code not in codes, f"{name}: {code} must not be reported ({e['what']})")
        false_positives = 0
        for path in llama_files:
            bad = sorted({f"{c} {s}" for c, s in findings[path]
                          if c.startswith("GGUF9") and int(c[4:]) < 9500 and s != "note"})
            false_positives += bool(bad)
            self.check(not bad, f"{self.short(path)}: a llama.cpp template, yet ggufcheck reports {bad}")
        n_set = len(set_files)
        self.figures(results[:n_set], results[n_set:], flagged_escapes, flagged_syntax,
                     false_positives)

    # --- the pinned tree under strict, without the judge ----------------------------------------

    def pinned(self, ggufcheck):
        """Every template of the pinned tree: no GGUF9xxx warning or error, and known."""
        sys.path.insert(0, os.path.join(self.source, "validator", "tools", "known_templates"))
        import generate  # noqa: E402  (the known-template table's generator: its GGUF reader)
        from pathlib import Path
        models = os.path.join(self.llama_cpp, "models")
        vocabularies = sorted(f for f in os.listdir(models)
                              if f.startswith("ggml-vocab-") and f.endswith(".gguf"))
        templates = template_judge.template_files(os.path.join(models, "templates"))
        self.check(len(vocabularies) > 0 and len(templates) > 0,
                   f"no vocabulary files or no templates in {models}")
        counted = 0
        with tempfile.TemporaryDirectory(prefix="ggufcheck-pinned-") as work:
            cases = []  # (what, file to check, templates in it)
            for name in vocabularies:
                path = os.path.join(models, name)
                count = len(generate.read_gguf_templates(Path(path)))
                cases.append((f"models/{name}", path, count))
            for i, path in enumerate(templates):
                gguf = os.path.join(work, f"{i:03d}.gguf")
                with open(path, "rb") as f, open(gguf, "wb") as out:
                    out.write(gguf_with_template(f.read()))
                cases.append((self.short(path), gguf, 1))
            for what, path, count in cases:
                counted += count
                try:
                    findings = ggufcheck_findings(ggufcheck, path)
                except (RuntimeError, ValueError, KeyError, IndexError) as err:
                    self.check(False, f"{what}: {err}")
                    continue
                bad = sorted({f"{c} {s}" for c, s in findings
                              if c.startswith("GGUF9") and s in ("warning", "error")})
                self.check(not bad, f"{what}: a template of the pinned llama.cpp, yet "
                                    f"`ggufcheck --profile strict` reports {bad}")
                known = sum(c == "GGUF9015" for c, _ in findings)
                self.check(known == count, f"{what}: {count} template(s), {known} reported as "
                                           f"known (GGUF9015)")
        print(f"pinned llama.cpp under --profile strict: {len(vocabularies)} vocabulary files and "
              f"{len(templates)} models/templates files, {counted} templates")

    def short(self, path):
        return os.path.relpath(path, self.source)

    def figures(self, set_results, llama_results, flagged_escapes, flagged_syntax,
                false_positives=None):
        everything = set_results + llama_results
        escapes = sum(r["verdict"] == "security-error" and r.get("refusal") == "escape"
                      for r in everything)
        mutations = sum(r.get("refusal") == "mutation" for r in everything)
        syntax = sum(r["verdict"] == "syntax-error" for r in everything)
        for label, rs in (("test set", set_results), ("llama.cpp", llama_results)):
            counts = template_judge.summary(rs)
            print(f"judge, {label}: {len(rs)} templates: " +
                  ", ".join(f"{counts[v]} {v}" for v in VERDICTS))
        print(f"templates: {len(everything)} ({len(set_results)} test set, "
              f"{len(llama_results)} llama.cpp)")
        line = f"refused by the sandbox as an escape: {escapes}"
        if flagged_escapes is not None:
            line += f", flagged by ggufcheck (9002/9003/9004): {flagged_escapes}"
        print(line + f"; refused only for mutating a list or dict: {mutations}")
        line = f"Jinja2 cannot parse: {syntax}"
        if flagged_syntax is not None:
            line += f", flagged by ggufcheck (9001/9005/9008): {flagged_syntax}"
        print(line)
        if false_positives is not None:
            print(f"llama.cpp templates with a 9xxx warning or error: {false_positives} "
                  f"of {len(llama_results)}")
        for r in llama_results:
            if r["verdict"] != "ok":
                print(f"llama.cpp {os.path.basename(r['file'])}: {r['verdict']} "
                      f"{r.get('refusal') or ''}({r['detail']})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ggufcheck")
    parser.add_argument("--source", required=True)
    parser.add_argument("--llama-cpp", help="the pinned llama.cpp tree "
                                            "(default: SOURCE/.deps/conformance/llama.cpp)")
    parser.add_argument("--self-check", action="store_true",
                        help="check the test set and the judge, without ggufcheck")
    parser.add_argument("--pinned", action="store_true",
                        help="every template of the pinned llama.cpp passes --profile strict "
                             "(no judge, no jinja2 needed)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=template_judge.DEFAULT_TIMEOUT)
    a = parser.parse_args()
    source = os.path.abspath(a.source)
    llama_cpp = os.path.abspath(a.llama_cpp or os.path.join(source, LLAMA_CPP_DIR))
    if a.pinned:
        if not a.ggufcheck:
            parser.error("--pinned needs --ggufcheck")
        if not os.path.isdir(os.path.join(llama_cpp, "models", "templates")):
            print(f"test_template_judge.py: skipped: no llama.cpp tree at {llama_cpp} "
                  f"(conformance/setup fetches it)")
            return 77
        checker = Checker(source, llama_cpp, a.jobs, a.timeout)
        checker.pinned(os.path.abspath(a.ggufcheck))
        print(f"{checker.passed} passed, {checker.failed} failed")
        return 1 if checker.failed else 0
    try:
        import jinja2  # noqa: F401
    except ImportError:
        print(f"test_template_judge.py: skipped: {sys.executable} has no jinja2 "
              f"(Debian: python3-jinja2; scripts/setup.sh installs it)")
        return 77
    checker = Checker(source, llama_cpp, a.jobs, a.timeout)
    if a.self_check:
        checker.self_check()
    else:
        if not a.ggufcheck:
            parser.error("--ggufcheck is required (or --self-check)")
        checker.run(os.path.abspath(a.ggufcheck))
    print(f"{checker.passed} passed, {checker.failed} failed")
    return 1 if checker.failed else 0


if __name__ == "__main__":
    sys.exit(main())

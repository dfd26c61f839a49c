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

The tests marked `self_check` run without ggufcheck: the manifest lists every .jinja of the set and nothing
else, its entries are consistent (what the sandbox refuses expects 9002/9003/9004, what Jinja2
cannot parse expects 9001/9005/9008, expect and forbid do not meet, benign templates forbid the
security codes), the files are what templates/generate.py writes, and the judge's verdict on every
test-set template is the manifest's `judge` (and `refusal`).

The tests marked `pinned` run without the judge (and without jinja2): every chat template of the pinned llama.cpp
passes `ggufcheck --profile strict` with no GGUF9xxx warning or error, and is reported as known
(GGUF9015, a note): each of its vocabulary files models/ggml-vocab-*.gguf as it is (with every
tokenizer.chat_template and tokenizer.chat_template.<name> it holds: Cohere's tool_use and rag
among them), and each models/templates/*.jinja written as tokenizer.chat_template into a minimal
GGUF file. Without the tree they skip, saying so.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_template_judge.py -m judge
           --ggufcheck PATH --source REPO [--llama-cpp DIR] [--jobs N] [--judge-timeout S]
       ... test_template_judge.py -m self_check --source REPO
       ... test_template_judge.py -m pinned --ggufcheck PATH --source REPO
The judge's and self_check's tests skip, saying so, when this Python has no jinja2 (Debian:
python3-jinja2, installed by scripts/setup.sh); the llama.cpp templates' cases without the tree.
The figures are shown after the results.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

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


class Judged:
    """Every template of the test set and of the pinned llama.cpp, judged by Jinja2 and (when
    ggufcheck is given) checked by ggufcheck: results by file, findings by file, and the
    ggufcheck errors that kept a file from being checked."""

    def __init__(self, source, llama_cpp, jobs, timeout):
        self.source = source
        self.set_dir = os.path.join(source, SET_DIR)
        self.llama_cpp = llama_cpp
        self.jobs = jobs
        self.timeout = timeout
        self.manifest = load_manifest(source)
        self.set_files = [os.path.join(self.set_dir, e["file"]) for e in self.manifest]
        self.llama_files = llama_cpp_templates(llama_cpp)

    def judge(self):
        results = template_judge.judge_all(self.set_files + self.llama_files, self.timeout, self.jobs)
        self.results = {r["file"]: r for r in results}
        return self

    def check(self, ggufcheck):
        self.findings, self.errors = {}, {}
        with tempfile.TemporaryDirectory(prefix="ggufcheck-templates-") as work:
            for i, path in enumerate(self.set_files + self.llama_files):
                with open(path, "rb") as f:
                    template = f.read()
                gguf = os.path.join(work, f"{i:03d}.gguf")
                with open(gguf, "wb") as f:
                    f.write(gguf_with_template(template))
                try:
                    self.findings[path] = ggufcheck_findings(ggufcheck, gguf)
                except (RuntimeError, ValueError, KeyError, IndexError) as err:
                    self.errors[path] = str(err)
                    self.findings[path] = []
        return self

    def codes(self, path):
        assert path not in self.errors, f"{short(path, self.source)}: {self.errors[path]}"
        return {c for c, _ in self.findings[path]}


def short(path, source):
    return os.path.relpath(path, source)


def llama_cpp_templates(llama_cpp):
    folder = os.path.join(llama_cpp, "models", "templates")
    return template_judge.template_files(folder) if os.path.isdir(folder) else []


def needs_jinja2():
    try:
        import jinja2  # noqa: F401
    except ImportError:
        pytest.skip(f"{sys.executable} has no jinja2 (Debian: python3-jinja2; scripts/setup.sh "
                    f"installs it)")


def options(config):
    source = os.path.abspath(config.getoption("--source") or os.path.join(HERE, "..", ".."))
    llama_cpp = os.path.abspath(config.getoption("--llama-cpp") or os.path.join(source, LLAMA_CPP_DIR))
    return source, llama_cpp


def pytest_generate_tests(metafunc):
    """The templates, by file: the test set's from its manifest, the pinned tree's when it is
    there (else one case that skips, saying so)."""
    source, llama_cpp = options(metafunc.config)
    no_tree = pytest.param(None, marks=pytest.mark.skip(
        reason=f"no llama.cpp tree at {llama_cpp} (conformance/setup fetches it): its templates "
               f"are not checked"))
    names = metafunc.fixturenames
    if "set_entry" in names:
        manifest = load_manifest(source)
        metafunc.parametrize("set_entry", manifest, ids=[e["file"] for e in manifest])
    if "llama_template" in names:
        files = llama_cpp_templates(llama_cpp)
        metafunc.parametrize("llama_template", files or [no_tree],
                             ids=[os.path.basename(f) for f in files] or ["no tree"])
    if "pinned_case" in names:
        cases = pinned_cases(llama_cpp) if os.path.isdir(os.path.join(llama_cpp, "models", "templates")) \
            else []
        metafunc.parametrize("pinned_case", cases or [no_tree],
                             ids=[c[0] for c in cases] or ["no tree"])


@pytest.fixture(scope="module")
def judge_options(pytestconfig):
    source, llama_cpp = options(pytestconfig)
    timeout = pytestconfig.getoption("--judge-timeout") or template_judge.DEFAULT_TIMEOUT
    return source, llama_cpp, pytestconfig.getoption("--jobs"), timeout


# --- with ggufcheck: the judge's verdicts against ggufcheck's findings -------------------------

@pytest.fixture(scope="module")
def judged(judge_options, ggufcheck, figures):
    needs_jinja2()
    judged = Judged(*judge_options).judge().check(ggufcheck)
    yield judged
    set_results = [judged.results[f] for f in judged.set_files]
    llama_results = [judged.results[f] for f in judged.llama_files]
    everything = set_results + llama_results
    flagged_escapes = sum(bool(judged.codes(r["file"]) & ESCAPE_CODES) for r in everything
                          if r["verdict"] == "security-error" and r.get("refusal") == "escape"
                          and r["file"] not in judged.errors)
    flagged_syntax = sum(bool(judged.codes(r["file"]) & PARSE_CODES) for r in everything
                         if r["verdict"] == "syntax-error" and r["file"] not in judged.errors)
    false_positives = sum(bool(llama_bad(judged, f)) for f in judged.llama_files
                          if f not in judged.errors)
    figures.extend(figure_lines(set_results, llama_results, flagged_escapes, flagged_syntax,
                                false_positives))


def llama_bad(judged, path):
    return sorted({f"{c} {s}" for c, s in judged.findings[path]
                   if c.startswith("GGUF9") and int(c[4:]) < 9500 and s != "note"})


def judge_against_ggufcheck(judged, path):
    """(i) a template the sandbox refuses as an escape gets one of 9002/9003/9004; (ii) one
    Jinja2 cannot parse gets one of 9001/9005/9008."""
    r = judged.results[path]
    codes = judged.codes(path)
    name = short(path, judged.source)
    if r["verdict"] == "security-error" and r.get("refusal") == "escape":
        assert codes & ESCAPE_CODES, (f"{name}: the sandbox refuses it ({r['detail']}) but ggufcheck "
                                      f"reports none of {sorted(ESCAPE_CODES)} (it reports {sorted(codes)})")
    if r["verdict"] == "syntax-error":
        assert codes & PARSE_CODES, (f"{name}: Jinja2 cannot parse it ({r['detail']}) but ggufcheck "
                                     f"reports none of {sorted(PARSE_CODES)} (it reports {sorted(codes)})")
    return codes


@pytest.mark.judge
def test_a_test_set_template(judged, set_entry):
    """(i), (ii), and (iii): every code of its manifest's `expect` and none of its `forbid`."""
    path = os.path.join(judged.set_dir, set_entry["file"])
    codes = judge_against_ggufcheck(judged, path)
    name = short(path, judged.source)
    for code in set_entry["expect"]:
        assert code in codes, f"{name}: expected {code}, ggufcheck reports {sorted(codes)} ({set_entry['what']})"
    for code in set_entry["forbid"]:
        assert code not in codes, f"{name}: {code} must not be reported ({set_entry['what']})"


@pytest.mark.judge
def test_a_llama_cpp_template(judged, llama_template):
    """(i), (ii), and (iv): no 9xxx warning or error (notes, such as 9015, are allowed)."""
    judge_against_ggufcheck(judged, llama_template)
    bad = llama_bad(judged, llama_template)
    assert not bad, f"{short(llama_template, judged.source)}: a llama.cpp template, yet ggufcheck reports {bad}"


# --- without ggufcheck: the test set and the judge ---------------------------------------------

@pytest.fixture(scope="module")
def set_judged(judge_options, figures):
    needs_jinja2()
    judged = Judged(*judge_options).judge()
    yield judged
    figures.extend(figure_lines([judged.results[f] for f in judged.set_files],
                                [judged.results[f] for f in judged.llama_files], None, None))


@pytest.mark.self_check
def test_the_manifest_lists_every_file_of_the_set_once(judge_options):
    source = judge_options[0]
    manifest = load_manifest(source)
    set_dir = os.path.join(source, SET_DIR)
    on_disk = {f for f in os.listdir(set_dir) if f.endswith(".jinja")}
    listed = [e["file"] for e in manifest]
    assert len(listed) == len(set(listed)), "manifest.json lists a file twice"
    unlisted = [f"{SET_DIR}/{f} is not in manifest.json" for f in sorted(on_disk - set(listed))]
    assert not unlisted, "\n".join(unlisted)
    missing = [f"manifest.json lists {f}, which is not in {SET_DIR}" for f in sorted(set(listed) - on_disk)]
    assert not missing, "\n".join(missing)


@pytest.mark.self_check
def test_a_manifest_entry_is_consistent(set_entry):
    e = set_entry
    name = e["file"]
    expect, forbid = set(e["expect"]), set(e["forbid"])
    codes_ok = all(c.startswith("GGUF9") and len(c) == 8 and c[4:].isdigit()
                   for c in expect | forbid)
    assert codes_ok, f"{name}: a code that is not GGUF9xxx in expect or forbid"
    assert not expect & forbid, f"{name}: {sorted(expect & forbid)} both expected and forbidden"
    assert e["judge"] in VERDICTS, f"{name}: judge '{e['judge']}' is no verdict"
    assert bool(e.get("what")), f"{name}: no 'what'"
    if e["judge"] == "security-error":
        assert e.get("refusal") in ("escape", "mutation"), \
            f"{name}: a security-error needs its refusal (escape or mutation)"
        if e.get("refusal") == "escape":
            assert expect & ESCAPE_CODES, (f"{name}: the sandbox refuses it as an escape, "
                                           f"so it must expect one of {sorted(ESCAPE_CODES)}")
    else:
        assert "refusal" not in e, f"{name}: a refusal without a security-error"
    if e["judge"] == "syntax-error":
        assert expect & PARSE_CODES, (f"{name}: Jinja2 cannot parse it, so it must expect "
                                      f"one of {sorted(PARSE_CODES)}")
    if not expect:
        assert ESCAPE_CODES <= forbid and "GGUF9001" in forbid, \
            f"{name}: a benign template forbids 9001-9004"


@pytest.mark.self_check
def test_the_set_is_what_its_generator_writes(judge_options):
    source, llama_cpp = judge_options[:2]
    if not os.path.isdir(os.path.join(llama_cpp, "models", "templates")):
        pytest.skip(f"no llama.cpp tree at {llama_cpp} (conformance/setup fetches it)")
    generator = os.path.join(source, SET_DIR, "generate.py")
    p = subprocess.run([sys.executable, generator, "--llama-cpp", llama_cpp, "--check"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode == 0, (f"the test set is not what templates/generate.py writes:\n"
                               f"{p.stdout.decode('utf-8', 'replace')}")


@pytest.mark.self_check
def test_the_judge_gives_the_manifests_verdict(set_judged, set_entry):
    e = set_entry
    r = set_judged.results[os.path.join(set_judged.set_dir, e["file"])]
    assert r["verdict"] == e["judge"] and r.get("refusal") == e.get("refusal"), \
        (f"{e['file']}: the judge says {r['verdict']} {r.get('refusal') or ''}"
         f"({r['detail']}), the manifest {e['judge']} {e.get('refusal') or ''}")


# --- the pinned tree under strict, without the judge -------------------------------------------

def pinned_cases(llama_cpp):
    """(what, the file to check or the template to write into one, templates in it): each
    vocabulary file of the pinned tree, each models/templates/*.jinja."""
    sys.path.insert(0, os.path.join(HERE, "..", "tools", "known_templates"))
    import generate  # noqa: E402  (the known-template table's generator: its GGUF reader)
    models = os.path.join(llama_cpp, "models")
    vocabularies = sorted(f for f in os.listdir(models)
                          if f.startswith("ggml-vocab-") and f.endswith(".gguf"))
    cases = []
    for name in vocabularies:
        path = os.path.join(models, name)
        cases.append((f"models/{name}", path, len(generate.read_gguf_templates(Path(path)))))
    for path in template_judge.template_files(os.path.join(models, "templates")):
        cases.append((f"models/templates/{os.path.basename(path)}", path, 1))
    return cases


@pytest.mark.pinned
def test_the_pinned_tree_has_vocabularies_and_templates(llama_cpp, figures):
    models = os.path.join(llama_cpp, "models")
    if not os.path.isdir(os.path.join(models, "templates")):
        pytest.skip(f"no llama.cpp tree at {llama_cpp} (conformance/setup fetches it)")
    cases = pinned_cases(llama_cpp)
    vocabularies = [c for c in cases if not c[1].endswith(".jinja")]
    templates = [c for c in cases if c[1].endswith(".jinja")]
    assert len(vocabularies) > 0 and len(templates) > 0, \
        f"no vocabulary files or no templates in {models}"
    figures.append(f"pinned llama.cpp under --profile strict: {len(vocabularies)} vocabulary files "
                   f"and {len(templates)} models/templates files, "
                   f"{sum(c[2] for c in cases)} templates")


@pytest.mark.pinned
def test_a_pinned_template_passes_strict(ggufcheck, pinned_case, tmp_path):
    """No GGUF9xxx warning or error, and each template reported as known (GGUF9015)."""
    what, path, count = pinned_case
    if path.endswith(".jinja"):
        gguf = os.path.join(tmp_path, "template.gguf")
        with open(path, "rb") as f, open(gguf, "wb") as out:
            out.write(gguf_with_template(f.read()))
        path = gguf
    try:
        findings = ggufcheck_findings(ggufcheck, path)
    except (RuntimeError, ValueError, KeyError, IndexError) as err:
        pytest.fail(f"{what}: {err}")
    bad = sorted({f"{c} {s}" for c, s in findings if c.startswith("GGUF9") and s in ("warning", "error")})
    assert not bad, f"{what}: a template of the pinned llama.cpp, yet `ggufcheck --profile strict` reports {bad}"
    known = sum(c == "GGUF9015" for c, _ in findings)
    assert known == count, f"{what}: {count} template(s), {known} reported as known (GGUF9015)"


# --- the figures -------------------------------------------------------------------------------

def figure_lines(set_results, llama_results, flagged_escapes, flagged_syntax, false_positives=None):
    everything = set_results + llama_results
    escapes = sum(r["verdict"] == "security-error" and r.get("refusal") == "escape"
                  for r in everything)
    mutations = sum(r.get("refusal") == "mutation" for r in everything)
    syntax = sum(r["verdict"] == "syntax-error" for r in everything)
    lines = []
    for label, rs in (("test set", set_results), ("llama.cpp", llama_results)):
        counts = template_judge.summary(rs)
        lines.append(f"judge, {label}: {len(rs)} templates: " +
                     ", ".join(f"{counts[v]} {v}" for v in VERDICTS))
    lines.append(f"templates: {len(everything)} ({len(set_results)} test set, "
                 f"{len(llama_results)} llama.cpp)")
    line = f"refused by the sandbox as an escape: {escapes}"
    if flagged_escapes is not None:
        line += f", flagged by ggufcheck (9002/9003/9004): {flagged_escapes}"
    lines.append(line + f"; refused only for mutating a list or dict: {mutations}")
    line = f"Jinja2 cannot parse: {syntax}"
    if flagged_syntax is not None:
        line += f", flagged by ggufcheck (9001/9005/9008): {flagged_syntax}"
    lines.append(line)
    if false_positives is not None:
        lines.append(f"llama.cpp templates with a 9xxx warning or error: {false_positives} "
                     f"of {len(llama_results)}")
    for r in llama_results:
        if r["verdict"] != "ok":
            lines.append(f"llama.cpp {os.path.basename(r['file'])}: {r['verdict']} "
                         f"{r.get('refusal') or ''}({r['detail']})")
    return lines

#!/usr/bin/python3
"""ggufcheck's code-execution checks against Jinja2 rendering unsandboxed (template_reach.py).

A differential test: every template below is rendered by template_reach.py with a PLAIN
jinja2.Environment under a tracing hook (what the render touches: a name starting with '_',
a module, module globals, a code object, a frame, an audit event such as import or
subprocess.Popen), written into a minimal GGUF file under the key an engine reads it from, and
checked with `ggufcheck --profile strict --format json`. The templates:

- payloads: each shape by which a chat template reaches a dunder without writing it where a
  scanner matching literals sees it: a variable index holding a name from the template's text
  (set, block set, tuple unpacking, a list item, a for target, a macro parameter and its
  default, a namespace attribute, a .split() result, a dict value, with, list.append, a
  macro's output, caller()), the attribute paths of map, selectattr, rejectattr, sort, groupby,
  sum, min, max, unique and join, map('attr', name), format strings (str.format, format_map,
  |format, %), and payloads under the keys llama.cpp and other engines read besides
  tokenizer.chat_template (a NUL-suffixed key, tokenizer.chat_templates as a string and as an
  array, a NUL-suffixed named template);
- their mutants: each payload in another host template, inside the message loop, under an if,
  with whitespace control, reaching another dunder, and a benign twin reading a harmless name;
- the pinned llama.cpp's chat templates (models/templates/*.jinja and those of its
  models/ggml-vocab-*.gguf) as they are, each with a payload put in front, and each that reads
  message['content'] rewritten to read it through a variable set to 'content'.

It asserts: every template whose render reached code, module globals or a dunder gets an error
GGUF9002, GGUF9003 or GGUF9004 (0 missed); none of the pinned templates, nor their benign
rewrites, gets one of those (0 false positives); the payload shapes all reach; and the counts
are exactly EXPECTED (the set is generated deterministically, so a change in either ggufcheck or
the judge shows as a change of a count). It shows the figures after the results; `pytest -v`
lists every template.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_template_reach.py
       --ggufcheck PATH --source REPO [--llama-cpp DIR] [--jobs N] [--judge-timeout S]
A test per template and per count; every test skips, saying so, without jinja2 or without the
pinned llama.cpp tree (ctest's skip: conftest.py).
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
sys.path.insert(0, HERE)
import template_reach  # noqa: E402

FLAG_CODES = {"GGUF9002", "GGUF9003", "GGUF9004"}
LLAMA_CPP_DIR = os.path.join(".deps", "conformance", "llama.cpp")

# The figures of the set (seedless: the set is the same on every run). Update them, with the
# reason, when a payload, a mutant, the judge or the checks change.
EXPECTED = {
    "templates": 514,
    "reached": 341,
    "flagged": 347,
    "flagged_reached": 341,
    "missed": 0,
    "pinned": 77,
    "pinned_flagged": 0,
    "benign_rewrites": 73,
    "benign_rewrites_flagged": 0,
    "benign_twins": 23,
    # block-set, macro-output, caller, loop-cycle (a name the template makes, though harmless),
    # map-attr-filter, attribute-variable (an attribute path that is no literal)
    "benign_twins_flagged": 6,
}

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}\n"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}\n")
LLAMA3 = (
    "{{- bos_token }}\n"
    "{%- for message in messages %}\n"
    "    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}\n"
    "    {{- message['content'] | trim + '<|eot_id|>' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
    "{%- endif %}\n")

# (name, payload, key): the payload reaches '__class__' of a string (or the globals of a Jinja
# global); key is where the GGUF file holds the template.
KEY = "tokenizer.chat_template"
PAYLOADS = [
    ("set-tilde", "{% set n = '__cla' ~ 'ss__' %}{{ ''[n] }}", KEY),
    ("set-literal", "{% set n = '__class__' %}{{ ''[n] }}", KEY),
    ("block-set", "{% set n %}__class__{% endset %}{{ ''[n] }}", KEY),
    ("tuple-set", "{% set a, b = '__class__', '__mro__' %}{{ ''[a][b] }}", KEY),
    ("list-item", "{% set names = ['__class__', '__mro__'] %}{{ ''[names[0]][names[1]] }}", KEY),
    ("for-target", "{% for a in ['__class__'] %}{{ ''[a] }}{% endfor %}", KEY),
    ("for-unpack-globals",
     "{% for a, b in [['__init__', '__globals__']] %}{{ cycler[a][b]['os'].getpid() }}{% endfor %}",
     KEY),
    ("macro-parameter", "{% macro get(o, n) %}{{ o[n] }}{% endmacro %}{{ get('', '__class__') }}",
     KEY),
    ("macro-default", "{% macro get(o, n='__class__') %}{{ o[n] }}{% endmacro %}{{ get('') }}",
     KEY),
    ("macro-keyword", "{% macro get(o, n) %}{{ o[n] }}{% endmacro %}{{ get(n='__class__', o='') }}",
     KEY),
    ("macro-as-value",
     "{% macro get(o, n) %}{{ o[n] }}{% endmacro %}{% set f = get %}{{ f('', '__class__') }}", KEY),
    ("macro-output", "{% macro n() %}__class__{% endmacro %}{{ ''[n()] }}", KEY),
    ("caller", "{% macro m() %}{{ ''[caller()] }}{% endmacro %}{% call m() %}__class__{% endcall %}",
     KEY),
    ("call-block-parameter",
     "{% macro m() %}{{ caller('__class__') }}{% endmacro %}{% call(n) m() %}{{ ''[n] }}{% endcall %}",
     KEY),
    ("namespace-constructor", "{% set ns = namespace(n='__class__') %}{{ ''[ns.n] }}", KEY),
    ("namespace-attribute",
     "{% set ns = namespace(n='') %}{% set ns.n = '__class__' %}{{ ''[ns.n] }}", KEY),
    ("split-result", "{% set p = 'a.__class__.__mro__'.split('.') %}{{ ''[p[1]][p[2]] }}", KEY),
    ("dict-value", "{% set d = {'k': '__class__'} %}{{ ''[d.k] }}{{ ''[d['k']] }}", KEY),
    ("dict-get", "{% set d = {'k': '__class__'} %}{{ ''[d.get('k')] }}", KEY),
    ("with", "{% with n = '__class__' %}{{ ''[n] }}{% endwith %}", KEY),
    ("list-append", "{% set l = [] %}{% if l.append('__class__') %}{% endif %}{{ ''[l[0]] }}", KEY),
    ("loop-cycle", "{% for m in [1] %}{{ ''[loop.cycle('__class__')] }}{% endfor %}", KEY),
    ("join-list", "{% set n = ['__', 'class', '__']|join %}{{ ''[n] }}", KEY),
    ("map-attribute", "{{ [[cycler]]|map(attribute='0.__init__.__globals__.os')|list }}", KEY),
    ("map-attr-filter", "{% set n = '__class__' %}{{ ['']|map('attr', n)|list }}", KEY),
    ("selectattr", "{{ [['x']]|selectattr('0.__class__')|list }}", KEY),
    ("rejectattr", "{{ [['x']]|rejectattr('0.__class__')|list }}", KEY),
    ("sort", "{{ [['x'], ['y']]|sort(attribute='0.__class__.__name__')|list }}", KEY),
    ("sort-positional", "{{ [['x'], ['y']]|sort(false, false, '0.__class__.__name__')|list }}", KEY),
    ("groupby", "{{ [['x']]|groupby('0.__class__.__name__')|list }}", KEY),
    ("sum", "{{ [['x']]|sum(attribute='0.__class__.__name__') }}", KEY),
    ("min", "{{ [['x'], ['y']]|min(attribute='0.__class__.__name__') }}", KEY),
    ("max", "{{ [['x'], ['y']]|max(attribute='0.__class__.__name__') }}", KEY),
    ("unique", "{{ [['x']]|unique(attribute='0.__class__')|list }}", KEY),
    ("join-attribute", "{{ [['x']]|join(attribute='0.__class__.__name__') }}", KEY),
    ("attribute-variable", "{% set p = '0.__class__' %}{{ [['x']]|selectattr(p)|list }}", KEY),
    ("str-format", "{{ '{0.__class__.__mro__}'.format('') }}", KEY),
    ("str-format-built", "{% set f = '{0.__cla' ~ 'ss__}' %}{{ f.format('') }}", KEY),
    ("str-format-map", "{{ '{x.__class__}'.format_map({'x': ''}) }}", KEY),
    ("format-filter", "{{ ''['%sclass%s'|format('__', '__')] }}", KEY),
    ("percent", "{{ ''['%sclass%s' % ('__', '__')] }}", KEY),
    ("generator-frame", "{{ (messages|map('string')).gi_frame.f_globals }}", KEY),
    ("nul-suffixed-key", "{{ cycler.__init__.__globals__.os.getpid() }}", KEY + "\0x"),
    ("named-nul-suffixed-key", "{{ cycler.__init__.__globals__.os.getpid() }}",
     KEY + ".tool_use\0x"),
    ("chat-templates-string", "{{ cycler.__init__.__globals__.os.getpid() }}",
     "tokenizer.chat_templates"),
    ("chat-templates-array", "{{ cycler.__init__.__globals__.os.getpid() }}",
     "tokenizer.chat_templates[]"),
]


def mutants(name, payload, key):
    """(name, template, key, benign) for one payload: itself and its mutants."""
    yield name, payload + "\n" + CHATML, key, False
    yield name + "/llama3", payload + "\n" + LLAMA3, key, False
    loop = CHATML.replace("{% for message in messages %}",
                          "{% for message in messages %}" + payload, 1)
    yield name + "/in-loop", loop, key, False
    yield name + "/under-if", "{% if messages %}" + payload + "{% endif %}\n" + CHATML, key, False
    yield (name + "/trimmed", (payload.replace("{%", "{%-").replace("{{", "{{-") + "\n" +
                               CHATML), key, False)
    if "__class__" in payload:
        yield name + "/doc", payload.replace("__class__", "__doc__") + "\n" + CHATML, key, False
        # the twin reading a harmless name (str.upper, or an item): nothing to reach
        twin = payload.replace("__class__", "upper").replace("'__cla' ~ 'ss__'", "'up' ~ 'per'")
        if "__" not in twin and "cycler" not in twin and "gi_frame" not in twin:
            yield name + "/benign-twin", twin + "\n" + CHATML, key, True


# --- a minimal GGUF file -------------------------------------------------------------------------

def gguf_string(data):
    data = data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape")
    return struct.pack("<Q", len(data)) + data


def gguf_with_template(template, key=KEY):
    """GGUF v3, no tensors: general.architecture = "llama" and the template under `key` (a key
    ending in [] holds it as an array of one string)."""
    out_pairs = b""
    if key.endswith("[]"):
        out_pairs += gguf_string(key[:-2]) + struct.pack("<IIQ", 9, 8, 1) + gguf_string(template)
    else:
        out_pairs += gguf_string(key) + struct.pack("<I", 8) + gguf_string(template)
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, 2)
    out += gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    out += out_pairs
    return out + b"\0" * (-len(out) % 32)


# --- the set -------------------------------------------------------------------------------------

def pinned_templates(source, llama_cpp):
    sys.path.insert(0, os.path.join(source, "validator", "tools", "known_templates"))
    import generate  # noqa: E402  (the known-template table's generator: its GGUF reader)
    models = os.path.join(llama_cpp, "models")
    out = []
    for f in sorted(os.listdir(os.path.join(models, "templates"))):
        if f.endswith(".jinja"):
            with open(os.path.join(models, "templates", f), encoding="utf-8",
                      errors="surrogateescape") as t:
                out.append((f"templates/{f}", t.read()))
    for f in sorted(os.listdir(models)):
        if f.startswith("ggml-vocab-") and f.endswith(".gguf"):
            for key, text in generate.read_gguf_templates(Path(os.path.join(models, f))):
                if isinstance(text, bytes):
                    text = text.decode("utf-8", "surrogateescape")
                out.append((f"{f}:{key}", text))
    return out


def benign_rewrite(text):
    """The template reading message['content'] through a variable set to 'content', or None."""
    for old in ("message['content']", 'message["content"]', "message.content"):
        if old in text:
            return "{%- set gc_key = 'content' -%}\n" + text.replace(old, "message[gc_key]", 1)
    return None


def build_set(source, llama_cpp):
    """[(kind, name, template, key)]; kind: payload, twin, pinned, pinned-payload, rewrite."""
    cases = []
    for name, payload, key in PAYLOADS:
        for mname, template, mkey, benign in mutants(name, payload, key):
            cases.append(("twin" if benign else "payload", mname, template, mkey))
    plain = [p for p in PAYLOADS if p[2] == KEY]
    for i, (name, text) in enumerate(pinned_templates(source, llama_cpp)):
        cases.append(("pinned", name, text, KEY))
        pname, payload, _ = plain[i % len(plain)]
        cases.append(("pinned-payload", f"{name}+{pname}", payload + "\n" + text, KEY))
        rewritten = benign_rewrite(text)
        if rewritten is not None:
            cases.append(("rewrite", f"{name}/gc_key", rewritten, KEY))
    return cases


def ggufcheck_findings(ggufcheck, folder, count):
    p = subprocess.run([ggufcheck, "--profile", "strict", "--format", "json", folder],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, NO_COLOR="1"), timeout=600)
    assert p.returncode in (0, 1), \
        f"ggufcheck exited {p.returncode}: {p.stderr.decode('utf-8', 'replace').strip()}"
    files = json.loads(p.stdout)["files"]
    assert len(files) == count, f"ggufcheck read {len(files)} files, not {count}"
    return [{(f["code"], f["severity"]) for f in entry["findings"]} for entry in files]


def options(config):
    source = os.path.abspath(config.getoption("--source") or os.path.join(HERE, "..", ".."))
    llama_cpp = os.path.abspath(config.getoption("--llama-cpp") or os.path.join(source, LLAMA_CPP_DIR))
    return source, llama_cpp


def no_tree_reason(llama_cpp):
    return f"no llama.cpp tree at {llama_cpp}"


def pytest_generate_tests(metafunc):
    """A case per template of the set (built from the pinned tree, so one case that skips,
    saying so, without it)."""
    if "case_index" in metafunc.fixturenames:
        source, llama_cpp = options(metafunc.config)
        if os.path.isdir(os.path.join(llama_cpp, "models", "templates")):
            cases = build_set(source, llama_cpp)
            metafunc.parametrize("case_index", range(len(cases)),
                                 ids=[f"{kind} {name}" for kind, name, _, _ in cases])
        else:
            metafunc.parametrize("case_index", [pytest.param(
                None, marks=pytest.mark.skip(reason=no_tree_reason(llama_cpp)))], ids=["no tree"])


class Reach:
    """The set, each template's verdict by the judge and ggufcheck's findings on it, and the
    counts of EXPECTED."""

    def __init__(self, ggufcheck, source, llama_cpp, jobs, timeout):
        self.cases = build_set(source, llama_cpp)
        with tempfile.TemporaryDirectory(prefix="ggufcheck-reach-") as work:
            jinja_files, gguf_dir = [], os.path.join(work, "gguf")
            os.mkdir(gguf_dir)
            for i, (_, _, template, key) in enumerate(self.cases):
                path = os.path.join(work, f"{i:04d}.jinja")
                with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
                    f.write(template)
                jinja_files.append(path)
                with open(os.path.join(gguf_dir, f"{i:04d}.gguf"), "wb") as f:
                    f.write(gguf_with_template(template.encode("utf-8", "surrogateescape"), key))
            self.verdicts = template_reach.judge_all(jinja_files, timeout, jobs)
            self.findings = ggufcheck_findings(ggufcheck, gguf_dir, len(self.cases))
        self.counts = dict.fromkeys(EXPECTED, 0)
        self.counts["templates"] = len(self.cases)
        for i, (kind, _, _, _) in enumerate(self.cases):
            flagged, reached = self.flagged(i), self.reached(i)
            self.counts["reached"] += reached
            self.counts["flagged"] += flagged
            self.counts["flagged_reached"] += reached and flagged
            self.counts["missed"] += reached and not flagged
            for counted, key in (("pinned", "pinned"), ("rewrite", "benign_rewrites"),
                                 ("twin", "benign_twins")):
                if kind == counted:
                    self.counts[key] += 1
                    self.counts[key + "_flagged"] += flagged

    def flagged(self, i):
        return any(code in FLAG_CODES and severity == "error" for code, severity in self.findings[i])

    def reached(self, i):
        return self.verdicts[i]["verdict"] == "reached"


@pytest.fixture(scope="module")
def reach(pytestconfig, ggufcheck, figures):
    try:
        import jinja2  # noqa: F401
    except ImportError:
        pytest.skip(f"{sys.executable} has no jinja2")
    source, llama_cpp = options(pytestconfig)
    if not os.path.isdir(os.path.join(llama_cpp, "models", "templates")):
        pytest.skip(no_tree_reason(llama_cpp))
    timeout = pytestconfig.getoption("--judge-timeout") or template_reach.DEFAULT_TIMEOUT
    reach = Reach(ggufcheck, source, llama_cpp, pytestconfig.getoption("--jobs"), timeout)
    counts = reach.counts
    figures.append(f"templates: {counts['templates']}; the render reached code, globals or a dunder: "
                   f"{counts['reached']}, flagged by ggufcheck (error 9002/9003/9004): "
                   f"{counts['flagged_reached']}, missed: {counts['missed']}")
    figures.append(f"pinned llama.cpp templates: {counts['pinned']}, flagged: {counts['pinned_flagged']}; "
                   f"their benign rewrites (message[gc_key]): {counts['benign_rewrites']}, flagged: "
                   f"{counts['benign_rewrites_flagged']}; benign twins of the payloads: "
                   f"{counts['benign_twins']}, flagged: {counts['benign_twins_flagged']}")
    figures.append(f"all flagged: {counts['flagged']}")
    return reach


def test_a_template(reach, case_index):
    kind, name, _, _ = reach.cases[case_index]
    verdict, found = reach.verdicts[case_index], reach.findings[case_index]
    flagged, reached = reach.flagged(case_index), reach.reached(case_index)
    assert not (reached and not flagged), (f"{name}: the render reached {verdict['detail']}, but "
                                           f"ggufcheck reports no error 9002/9003/9004 ({sorted(found)})")
    if kind == "payload":
        assert reached, (f"{name}: a payload the judge did not see reach anything "
                         f"({verdict['verdict']}: {verdict['detail']})")
    if kind == "pinned":
        assert not (flagged or reached), \
            f"{name}: a pinned template, yet {verdict['verdict']} and ggufcheck {sorted(found)}"
    if kind == "rewrite":
        assert not (flagged or reached), (f"{name}: message['content'] read through a variable set to "
                                          f"'content', yet {verdict['verdict']} and ggufcheck {sorted(found)}")
    if kind == "twin":
        assert not reached, f"{name}: a benign twin that reached {verdict['detail']}"


@pytest.mark.parametrize("key", EXPECTED)
def test_the_count_is_as_expected(reach, key):
    assert reach.counts[key] == EXPECTED[key], f"{key}: {reach.counts[key]}, expected {EXPECTED[key]}"

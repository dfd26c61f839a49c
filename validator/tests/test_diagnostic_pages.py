#!/usr/bin/python3
"""The per-diagnostic pages docs/diagnostics/GGUFnnnn.md against the catalogue and the CLI.

Checks, in both directions:

- every catalogue code (`ggufcheck list --format json`) has a page and every page names a
  catalogue code (no orphans); the title is `# GGUFnnnn name` with the catalogue's name, the
  file is named after the code, the summary and severity lines are the catalogue's;
- every page has the sections What it means / Why it matters / Example / How to fix ... in
  that order, and no TODO left;
- every page's example (a retired code, whose meaning starts with "retired:", has none): its
  file exists (corpus/codes/GGUFnnnn-<name>.gguf, or the folder
  corpus/codes/GGUFnnnn-<name>/ of a split-set code whose example is a set of files; GGUF0001's
  example is a path that must not exist), the `$ ggufcheck ...` line of its console block, run
  from the repository root, prints exactly the lines under it, nothing on stderr, with the
  exit status its output implies (2 unreadable, 1 an error, else 0), and the output reports the
  page's code with the catalogue's severity for the profile used; a tensor-data code (6xxx)
  comes only from the data check: its command passes --data (or --check-tensors), and the same
  command without it does not report the code;
- `ggufcheck explain CODE` and `ggufcheck explain NAME` print exactly the page;
- docs/diagnostics/README.md holds the index table of every code, in code order, exactly
  as generated from the catalogue.

Update mode (`--update` or GGUFCHECK_UPDATE_DOCS=1, used by scripts/update-diagnostic-pages)
rewrites the mechanical parts instead of comparing them: each page's title, summary and
severity lines, the output under each example command, and the index table. The prose is
never touched. A page whose example file does not exist yet fails, saying so. `explain` is
skipped in update mode: the binary embeds the old pages until it is rebuilt.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider test_diagnostic_pages.py
       --ggufcheck PATH --source REPO [--update]
One test per page, per page's explain, the orphans and the index.
"""

import json
import os
import re
import shlex
import subprocess

import pytest

PAGES_DIR = os.path.join("docs", "diagnostics")
SECTIONS = ["## What it means", "## Why it matters", "## Example"]
# The last section: for a writer's mistake how to fix the writer; for a hostile shape, the file
# or the reader.
LAST_SECTION_RE = re.compile(r"^## (How to fix the writer|How to fix the file|What a reader should do)$",
                             re.M)
TITLE_RE = re.compile(r"^# (GGUF[0-9]{4}) ([a-z0-9-]+)\n")
CONSOLE_RE = re.compile(r"^```console\n(.*?)^```$", re.M | re.S)
INDEX_BEGIN = "<!-- index: generated from the catalogue by scripts/update-diagnostic-pages -->"
INDEX_END = "<!-- end of index -->"
PROFILES = ["strict", "spec", "llama.cpp"]
# The line under the severities of a code that ends the reading ("fixed" in `ggufcheck list`).
FIXED_LINE = ("- fixed: an error in every profile that no option can disable or downgrade "
              "(`--disable` and `--severity` refuse it, exit 3)")
# The area of the codes that only the data check (check --data) reports.
DATA_AREA = "tensor-data"


def run(ggufcheck, args, cwd):
    p = subprocess.run([ggufcheck] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, NO_COLOR="1"), timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def load_catalogue(ggufcheck, source):
    status, out, err = run(ggufcheck, ["list", "--format", "json"], source)
    assert status == 0, f"ggufcheck list failed ({status}): {err}"
    return json.loads(out)["diagnostics"]


def example_path(entry, source):
    if entry["code"] == "GGUF0001":
        return "corpus/does-not-exist.gguf"
    # A split-set code whose fault needs several files: its example is the set, in a folder.
    folder = f"corpus/codes/{entry['code']}-{entry['name']}/"
    if os.path.isdir(os.path.join(source, folder)):
        return folder
    return f"corpus/codes/{entry['code']}-{entry['name']}.gguf"


def header(entry):
    """The mechanical top of a page: title, summary, one severity line per profile."""
    lines = [f"# {entry['code']} {entry['name']}", "", entry["meaning"], ""]
    lines += [f"- {p}: {entry['severity'][p]}" for p in PROFILES]
    if entry["ends_reading"]:
        lines += [FIXED_LINE]
    return "\n".join(lines) + "\n"


def split_header(text):
    """(header, rest): the header is everything before the first '## ' heading."""
    at = text.find("\n## ")
    assert at >= 0, "no '## ' section"
    return text[: at + 1], text[at + 1:]


def section(text, heading):
    start = text.find("\n" + heading + "\n")
    assert start >= 0, f"no section '{heading}'"
    start += len(heading) + 2
    end = text.find("\n## ", start)
    return text[start:] if end < 0 else text[start: end + 1]


def expected_status(code, out):
    if code == "GGUF0001":
        return 2
    return 1 if re.search(r"^\S+: error\[", out, re.M) else 0


def command_profile(args):
    for i, a in enumerate(args):
        if a == "--profile" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--profile="):
            return a.split("=", 1)[1]
    return "strict"


def index_table(catalogue):
    rows = ["| code | name | area | strict | spec | llama.cpp | meaning |",
            "|---|---|---|---|---|---|---|"]
    for e in catalogue:
        s = e["severity"]
        meaning = e["meaning"].replace("|", "\\|")
        rows.append(f"| [{e['code']}]({e['code']}.md) | `{e['name']}` | {e['area']} | "
                    f"{s['strict']} | {s['spec']} | {s['llama.cpp']} | {meaning} |")
    return "\n".join(rows) + "\n"


class Pages:
    """The pages against one ggufcheck; in update mode the generated parts are rewritten and
    the examples that could not be filled are collected in `unfilled`."""

    def __init__(self, ggufcheck, source, update):
        self.ggufcheck = ggufcheck
        self.source = source
        self.update = update
        self.unfilled = []  # (page, why): example blocks update mode could not fill

    def page_file(self, code):
        return os.path.join(self.source, PAGES_DIR, code + ".md")

    # --- one page -----------------------------------------------------------------------------

    def check_page(self, entry):
        code = entry["code"]
        path = self.page_file(code)
        assert os.path.isfile(path), (f"{PAGES_DIR}/{code}.md is missing: every catalogue code "
                                      f"has a page (write it, then scripts/update-diagnostic-pages)")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = TITLE_RE.match(text)
        assert m, f"{code}.md: the first line must be '# {code} {entry['name']}'"
        assert m.group(1) == code, f"{code}.md: the title names {m.group(1)}"
        assert m.group(2) == entry["name"], \
            f"{code}.md: the title names '{m.group(2)}', the catalogue '{entry['name']}'"
        top, rest = split_header(text)
        if self.update:
            top = header(entry) + "\n"
        assert top == header(entry) + "\n", \
            (f"{code}.md: title, summary and severity lines differ from the catalogue:\n"
             f"expected:\n{header(entry)}\ngot:\n{top}")
        # Sections in order, then the last one.
        position = 0
        for heading in SECTIONS:
            at = rest.find(heading + "\n", position)
            assert at >= 0, f"{code}.md: no section '{heading}' (in this order: {SECTIONS})"
            position = at
        last = LAST_SECTION_RE.search(rest, position)
        assert last, (f"{code}.md: no last section '## How to fix the writer' (or '## How to fix "
                      f"the file', '## What a reader should do') after '## Example'")
        assert "TODO" not in text, f"{code}.md: still says TODO"
        rest = self.check_example(entry, rest)
        new_text = top + rest
        if self.update and new_text != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new_text)
            print(f"updated {PAGES_DIR}/{code}.md")

    def check_example(self, entry, rest):
        code = entry["code"]
        example = section(rest, "## Example")
        if entry["meaning"].startswith("retired:"):
            # no file shows a retired code: its page says so and runs nothing
            assert not CONSOLE_RE.search(example), \
                f"{code}.md: a retired code's Example section has no console block"
            return rest
        want_path = example_path(entry, self.source)
        assert f"`{want_path}`" in example, \
            f"{code}.md: the Example section names its file as `{want_path}`"
        blocks = list(CONSOLE_RE.finditer(example))
        assert len(blocks) == 1, f"{code}.md: the Example section has one ```console block"
        body = blocks[0].group(1)
        first, _, shown = body.partition("\n")
        assert first.startswith("$ ggufcheck "), \
            f"{code}.md: the console block starts with '$ ggufcheck ...', not '{first}'"
        args = shlex.split(first[len("$ ggufcheck "):])
        assert want_path in args, f"{code}.md: the example command does not run {want_path}"
        data_flags = ("--data", "--check-tensors")
        if entry.get("area") == DATA_AREA:
            assert any(a in data_flags for a in args), \
                (f"{code}.md: a {DATA_AREA} code needs the data check: the example command "
                 f"passes --data")
        file_on_disk = os.path.join(self.source, want_path)
        if code == "GGUF0001":
            assert not os.path.exists(file_on_disk), f"{code}.md: {want_path} must not exist"
        elif not (os.path.isdir(file_on_disk) if want_path.endswith("/") else
                  os.path.isfile(file_on_disk)):
            if self.update:
                self.unfilled.append((code, f"{want_path} does not exist yet"))
                return rest
            pytest.fail(f"{code}.md: the example file {want_path} does not exist (the corpus "
                        f"generator writes corpus/codes/; fill the block with "
                        f"scripts/update-diagnostic-pages once it does)")
        status, out, err = run(self.ggufcheck, args, self.source)
        if self.update:
            block_start = rest.find(example) + blocks[0].start(1)
            block_end = rest.find(example) + blocks[0].end(1)
            rest = rest[:block_start] + first + "\n" + out + rest[block_end:]
            shown = out
        assert err == "", f"{code}.md: '{first}' printed on stderr: {err!r}"
        assert out == shown, (f"{code}.md: '{first}' prints\n{out}\nbut the page shows\n{shown}\n"
                              f"(scripts/update-diagnostic-pages rewrites the block)")
        want_status = expected_status(code, out)
        assert status == want_status, \
            f"{code}.md: '{first}' exits {status}, expected {want_status} for this output"
        tag = f"[{code} {entry['name']}]"
        assert tag in out, f"{code}.md: the example output does not report {tag}"
        if entry.get("area") == DATA_AREA:
            _, plain_out, _ = run(self.ggufcheck, [a for a in args if a not in data_flags],
                                  self.source)
            assert tag not in plain_out, \
                (f"{code}.md: without --data the example still reports {tag}: data findings "
                 f"must come from the data check only")
        if not any(a.startswith(("--severity", "--enable", "--disable", "--werror")) for a in args):
            profile = command_profile(args)
            severity = entry["severity"].get(profile)
            assert severity in ("error", "warning", "note"), \
                (f"{code}.md: {code} is {severity} in profile {profile}: pick a profile that "
                 f"reports it")
            assert f"{severity}{tag}" in out, \
                f"{code}.md: the output reports {code} but not as {severity} ({profile})"
        return rest

    def check_explain(self, entry):
        code = entry["code"]
        with open(self.page_file(code), encoding="utf-8") as f:
            text = f.read()
        for what in (code, entry["name"]):
            status, out, err = run(self.ggufcheck, ["explain", what], self.source)
            assert status == 0 and err == "", f"explain {what}: exit {status}, stderr {err!r}"
            assert out == text, (f"explain {what} does not print {PAGES_DIR}/{code}.md exactly "
                                 f"(rebuild ggufcheck after editing a page)")

    # --- the whole set ------------------------------------------------------------------------

    def check_no_orphans(self, catalogue):
        codes = {e["code"] for e in catalogue}
        pages = sorted(f for f in os.listdir(os.path.join(self.source, PAGES_DIR))
                       if f.endswith(".md") and f != "README.md")
        for f in pages:
            m = re.fullmatch(r"(GGUF[0-9]{4})\.md", f)
            assert m, f"{PAGES_DIR}/{f}: pages are named GGUFnnnn.md (README.md is the index)"
            assert m.group(1) in codes, \
                f"{PAGES_DIR}/{f}: an orphan page, {m.group(1)} is not in the catalogue"

    def check_index(self, catalogue):
        path = os.path.join(self.source, PAGES_DIR, "README.md")
        assert os.path.isfile(path), f"{PAGES_DIR}/README.md (the index) is missing"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        begin = text.find(INDEX_BEGIN)
        end = text.find(INDEX_END)
        assert begin >= 0 and end > begin, \
            f"{PAGES_DIR}/README.md: no index between '{INDEX_BEGIN}' and '{INDEX_END}'"
        table = index_table(catalogue)
        current = text[begin + len(INDEX_BEGIN) + 1: end]
        if self.update and current != table:
            text = text[: begin + len(INDEX_BEGIN) + 1] + table + text[end:]
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"updated {PAGES_DIR}/README.md")
            current = table
        assert current == table, (f"{PAGES_DIR}/README.md: the index table differs from the "
                                  f"catalogue (scripts/update-diagnostic-pages rewrites it)")
        for e in catalogue:
            assert f"[{e['code']}]({e['code']}.md)" in current, \
                f"{PAGES_DIR}/README.md: the index does not link {e['code']}"


def pytest_generate_tests(metafunc):
    """A test per catalogue code (`ggufcheck list --format json`)."""
    if "entry" in metafunc.fixturenames:
        ggufcheck = metafunc.config.getoption("--ggufcheck")
        if not ggufcheck:
            raise pytest.UsageError("--ggufcheck is required: the built ggufcheck command")
        source = metafunc.config.getoption("--source") or \
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        catalogue = load_catalogue(os.path.abspath(ggufcheck), os.path.abspath(source))
        metafunc.parametrize("entry", catalogue, ids=[e["code"] for e in catalogue])


@pytest.fixture(scope="module")
def pages(pytestconfig, ggufcheck, source):
    return Pages(ggufcheck, source, pytestconfig.getoption("--update"))


@pytest.fixture(scope="module")
def catalogue(pages):
    return load_catalogue(pages.ggufcheck, pages.source)


def test_no_orphan_pages(pages, catalogue):
    pages.check_no_orphans(catalogue)


def test_index(pages, catalogue):
    pages.check_index(catalogue)


def test_page(pages, entry):
    pages.check_page(entry)
    unfilled = [f"not filled: {PAGES_DIR}/{code}.md: {why}" for code, why in pages.unfilled
                if code == entry["code"]]
    assert not unfilled, "\n".join(unfilled)


def test_explain(pages, entry):
    if pages.update:
        pytest.skip("update mode: the binary embeds the old pages until it is rebuilt")
    pages.check_explain(entry)

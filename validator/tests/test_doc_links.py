#!/usr/bin/python3
"""The documentation stands alone: nothing a user reads points outside the repository.

Checked texts:

- every Markdown file git tracks (every *.md of the tree when it is not a git checkout);
- `ggufcheck --help` and the `--help` of each subcommand (check, list, explain, dump, hash,
  verify);
- every page `ggufcheck explain CODE` prints, for each code of `ggufcheck list --format json`;
- `conformance/run --help`.

A text fails when it

- names `../shared` or `shared/docs` (the design notes beside the checkout, which a clone does
  not have);
- has a relative Markdown link, `[text](target)` or `[label]: target`, whose target (without
  its `#fragment`) does not exist: relative to the Markdown file's directory, or for the CLI's
  texts to the repository root (explain pages: to docs/diagnostics/, where they live);
- names a Markdown file, `something.md`, that does not exist. A name with a `/` must resolve
  from the text's directory or from the repository root; a bare name (`dump.md`) must be the
  name of some file of the repository. URLs are left out (an upstream page is not a file of
  the checkout), and so are templates (`GGUFnnnn.md`, `<parser>.md`, `*.md`).

Before the real texts, the checks are run on a few texts that must fail and a few that must
pass, so that a broken pattern cannot make the test pass vacuously.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider test_doc_links.py --source REPO
       [--ggufcheck PATH]
One test per text; a failure lists its problems, `FILE:LINE: ...`. Without --ggufcheck only the
Markdown files (and conformance/run's help) are checked.
"""

import json
import os
import re
import subprocess
import sys

import pytest

FORBIDDEN = ("../shared", "shared/docs")
URL_RE = re.compile(r"<?\b[a-z][a-z0-9+.-]*://[^\s<>()\]]*(?:\([^\s()]*\)[^\s<>()\]]*)*>?", re.I)
INLINE_LINK_RE = re.compile(r"\]\(\s*<?([^()\s<>]+(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK_RE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
# A token ending in .md; the extra characters let templates be recognised and skipped whole.
MD_NAME_RE = re.compile(r"(?<![A-Za-z0-9_./@<>{}*%-])([A-Za-z0-9_./@<>{}*%-]*[A-Za-z0-9_<>{}*%-]\.md)\b")
TEMPLATE_RE = re.compile(r"[<>{}*%]|nnnn|NNNN|XXXX")


class Repo:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.files = self._files()
        self.basenames = {os.path.basename(path) for path in self.files}

    def _files(self):
        try:
            out = subprocess.run(["git", "-C", self.root, "ls-files", "-z"], check=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
            return [p for p in out.decode("utf-8", "replace").split("\0") if p]
        except (OSError, subprocess.CalledProcessError):
            found = []
            for base, dirs, names in os.walk(self.root):
                dirs[:] = [d for d in dirs if d not in (".git", ".deps", "build")]
                for name in names:
                    found.append(os.path.relpath(os.path.join(base, name), self.root))
            return sorted(found)

    def markdown_files(self):
        return [p for p in self.files if p.endswith(".md") and
                os.path.isfile(os.path.join(self.root, p))]

    def exists(self, base_dir, target):
        """Whether target names a path inside the repository that exists."""
        path = os.path.realpath(os.path.join(self.root, base_dir, target))
        inside = path == self.root or path.startswith(self.root + os.sep)
        return inside and os.path.exists(path)


def line_of(text, index):
    return text.count("\n", 0, index) + 1


def problems_in(text, base_dir, repo):
    """(line, message) for each problem of one text whose relative paths start at base_dir
    (relative to the repository root)."""
    found = []
    for needle in FORBIDDEN:
        for match in re.finditer(re.escape(needle), text):
            found.append((line_of(text, match.start()),
                          f"names {needle!r}: a path outside the repository"))

    targets = [(m.start(1), m.group(1)) for m in INLINE_LINK_RE.finditer(text)]
    targets += [(m.start(1), m.group(1)) for m in REFERENCE_LINK_RE.finditer(text)]
    for index, target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue                                   # a URL, mailto:, or an anchor here
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path and not repo.exists(base_dir, path):
            found.append((line_of(text, index),
                          f"link to {target!r}: no such file in the repository"))

    blanked = URL_RE.sub(lambda m: " " * len(m.group(0)), text)
    for match in MD_NAME_RE.finditer(blanked):
        name = match.group(1)
        if TEMPLATE_RE.search(name):
            continue
        if "/" in name:
            ok = repo.exists(base_dir, name) or repo.exists("", name)
        else:
            ok = name in repo.basenames or repo.exists(base_dir, name)
        if not ok:
            found.append((line_of(text, match.start(1)),
                          f"names {name!r}: no such Markdown file in the repository"))
    return sorted(set(found))


# The checks on texts with a known answer: a pattern that matches nothing fails here.
MUST_FAIL = [
    "see `../shared/docs/gguf-format.md`",
    "the design is shared/docs/conformance.md",
    "rows of threats.md",
    "[the format](no-such-page.md)",
    "[the format](../../no-such-dir/README.md#x)",
    "[x]: missing/page.md",
    "what docs/gguf.md requires",
    "from conformance.md and protocol.md:",
]
MUST_PASS = [
    "[dump](docs/dump.md), [index](docs/diagnostics/README.md#index) and README.md",
    "a page `GGUFnnnn.md`, files `<parser>.<profile>.txt`, pages `docs/diagnostics/*.md`",
    "upstream: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md.",
    "[spec](https://github.com/ggml-org/ggml/blob/master/docs/gguf.md) [top](#layout)",
]
SUBCOMMANDS = ("check", "list", "explain", "dump", "hash", "verify")


def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=dict(os.environ, NO_COLOR="1"), timeout=60)
    assert p.returncode == 0, (f"{' '.join(argv)} exits {p.returncode}: "
                               f"{p.stderr.decode('utf-8', 'replace')[:300]}")
    return p.stdout.decode("utf-8", "replace")


def option(config, name):
    value = config.getoption(name)
    return os.path.abspath(value) if value else None


def pytest_generate_tests(metafunc):
    """The texts, named as the failures name them: each Markdown file git tracks, the CLI's
    help and explain pages (with --ggufcheck), conformance/run's help."""
    if "text_name" not in metafunc.fixturenames:
        return
    root = option(metafunc.config, "--source") or os.path.join(os.path.dirname(__file__), "..", "..")
    repo = Repo(root)
    names = list(repo.markdown_files())
    ggufcheck = option(metafunc.config, "--ggufcheck")
    if ggufcheck:
        names.append("ggufcheck --help")
        names += [f"ggufcheck {sub} --help" for sub in SUBCOMMANDS]
        catalogue = json.loads(run([ggufcheck, "list", "--format", "json"], repo.root))
        names += [f"ggufcheck explain {entry['code']}" for entry in catalogue["diagnostics"]]
    if os.path.isfile(os.path.join(repo.root, "conformance", "run")):
        names.append("conformance/run --help")
    metafunc.parametrize("text_name", names)


@pytest.fixture(scope="module")
def repo(source):
    return Repo(source)


@pytest.mark.parametrize("text", MUST_FAIL)
def test_self_test_finds_the_problem(repo, text):
    assert problems_in(text, "", repo), f"self-test: no problem found in {text!r}"


@pytest.mark.parametrize("text", MUST_PASS)
def test_self_test_finds_nothing(repo, text):
    found = problems_in(text, "", repo)
    assert not found, f"self-test: {text!r} gives {found}"


def text_of(name, repo, ggufcheck):
    """(text, the directory its relative paths start from) of one named text."""
    if name == "conformance/run --help":
        return run([sys.executable, os.path.join(repo.root, "conformance", "run"), "--help"],
                   repo.root), ""
    if name.startswith("ggufcheck explain "):
        return run([ggufcheck, "explain", name.split()[-1]], repo.root), \
            os.path.join("docs", "diagnostics")
    if name.startswith("ggufcheck "):
        return run([ggufcheck] + name.split()[1:], repo.root), ""
    with open(os.path.join(repo.root, name), encoding="utf-8", errors="replace") as handle:
        return handle.read(), os.path.dirname(name)


def test_text_points_inside_the_repository(repo, pytestconfig, text_name):
    text, base_dir = text_of(text_name, repo, option(pytestconfig, "--ggufcheck"))
    problems = [f"{text_name}:{line}: {message}" for line, message in problems_in(text, base_dir, repo)]
    assert not problems, "\n".join(problems)

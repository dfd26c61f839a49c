#!/usr/bin/python3
"""Every fenced code block of the project's Markdown closes.

A fence that is never closed swallows the rest of its document (or of the list item or block
quote it sits in): GitHub then shows the following headings, lists and prose as code. The
texts are parsed as CommonMark by markdown-it-py (Debian's python3-markdown-it, installed by
scripts/setup.sh), so what counts as a fence, an info string or a closing line is the
specification's, not a pattern's.

A fence is closed when the last line of its block is its closing line: the fence character
repeated at least as many times as in the opening, nothing after it but spaces. markdown-it gives
an unclosed fence the lines up to the end of its container. A fence left open before another
block's opening line is caught too: a closing fence has no info string, so a "```console" inside
a "```" block opens nothing, and the closing line meant for it closes the block left open; every
block after that is inside out, while the fences still pair up. The message says where the fence
opened and names the first heading it swallowed.

Checked texts: README.md, CHANGELOG.md, SECURITY.md and every *.md under docs/.

Before the real texts, the check is run on texts that must fail and texts that must pass, so
that it cannot pass vacuously.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_markdown_fences.py --source REPO
One test per text and per self-test case; a failure lists its problems, `FILE:LINE: ...`. Every
test skips with the reason when markdown-it-py is not installed (ctest's skip: conftest.py), and
fails instead under CI=true, where scripts/setup.sh has installed it.
"""

import os
import re

import pytest

HEADING_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def container_stripped(line):
    """The line without the indentation and block-quote markers of its container."""
    text = line.lstrip(" \t")
    while text.startswith(">"):
        text = text[1:].lstrip(" \t")
    return text


def is_closing(line, markup):
    text = container_stripped(line).rstrip(" \t\r\n")
    char = markup[0]
    return len(text) >= len(markup) and text == char * len(text)


def is_opening_with_info(line, markup):
    """Whether the line opens a fence that `markup` would close: the same character, at least
    as many, then an info string (which no closing line has)."""
    text = container_stripped(line).rstrip(" \t\r\n")
    char = markup[0]
    run = len(text) - len(text.lstrip(char))
    info = text[run:].strip()
    # The info string of a backtick fence has no backtick (CommonMark 4.5).
    return run >= len(markup) and info != "" and not (char == "`" and "`" in info)


def unclosed_fences(text, parser):
    """The fences that do not close where their author meant, as (opening line, line, why),
    1-based:

    - a fence with no closing line (it runs to the end of its document or container);
    - a fence whose content holds an opening line of the same fence (```` ```console ````
      inside a ```` ``` ```` block): the block before it was left open, and the closing line
      meant for the new block closes the old one, so every block after it is inside out.
    """
    lines = text.splitlines()
    problems = []
    for token in parser.parse(text):
        if token.type != "fence" or token.map is None:
            continue
        start, end = token.map  # [opening line, line after the block)
        closed = end - 1 > start and is_closing(lines[end - 1], token.markup)
        content_end = end - 1 if closed else end
        opening = next(
            (n for n in range(start + 1, content_end) if is_opening_with_info(lines[n],
                                                                             token.markup)),
            None,
        )
        if closed and opening is None:
            continue
        stop = opening if opening is not None else content_end
        heading = next(
            (n + 1 for n in range(start + 1, stop) if HEADING_RE.match(container_stripped(lines[n]))),
            None,
        )
        if opening is not None:
            why = (f"line {opening + 1} opens another block inside it, so the block was left open "
                   "before it")
        else:
            why = "it is never closed: the rest of its document or list item is shown as code"
        if heading is not None:
            why += f"; it swallows the heading on line {heading}"
        problems.append((start + 1, why))
    return problems


MUST_FAIL = {
    "never closed": "# A\n\n```\ncode\n## B\ntext\n",
    "a second opening is not a closing": "```\nout\n```console\n$ more\n",
    "shorter closing": "````\ncode\n```\n",
    "other character": "```\ncode\n~~~\n",
    "in a list item": "- item\n\n  ```console\n  $ x\n\n- next\n",
    "in a block quote": "> ```\n> code\n\nafter\n",
    "closing with an info string": "```\ncode\n``` text\n",
    "an opening inside (README's info example)": (
        "```\n$ ggufcheck info m.gguf\nm.gguf: pass\n### Hashing\n\n```console\n$ x\n```\n"
    ),
}
MUST_PASS = {
    "closed": "```sh\nmake\n```\n\n## B\n",
    "longer closing": "```\ncode\n`````\n",
    "tilde": "~~~\n```\n~~~\n",
    "in a list item": "- item\n\n  ```console\n  $ x\n  ```\n- next\n",
    "in a block quote": "> ```\n> code\n> ```\n",
    "indented code is no fence": "    ```\n    code\n",
    "inline code is no fence": "text ```not a fence``` text\n",
    "trailing spaces": "```\ncode\n```   \n",
    "a shorter opening inside a longer fence": "````markdown\n```console\n$ x\n```\n````\n",
    "a backtick opening inside a tilde fence": "~~~\n```console\n~~~\n",
    "a heading-like comment in code": "```sh\n# install\nmake\n```\n",
    "inline code at a line's start in code": "```\n```x``` is inline\n```\n",
}


@pytest.fixture(scope="module")
def parser():
    try:
        from markdown_it import MarkdownIt
    except ImportError:
        reason = ("markdown-it-py is not installed (Debian: python3-markdown-it; scripts/setup.sh "
                  "installs it)")
        if os.environ.get("CI") == "true":  # a gate that skips in CI checks nothing
            pytest.fail(reason)
        pytest.skip(reason)
    return MarkdownIt("commonmark")


@pytest.mark.parametrize("name", MUST_FAIL)
def test_self_test_flags(parser, name):
    text = MUST_FAIL[name]
    assert unclosed_fences(text, parser), f"self-test: not flagged: {name}: {text!r}"


@pytest.mark.parametrize("name", MUST_PASS)
def test_self_test_passes(parser, name):
    text = MUST_PASS[name]
    assert not unclosed_fences(text, parser), f"self-test: flagged: {name}: {text!r}"


def test_self_test_names_the_opening_and_the_swallowed_heading(parser):
    never_closed = unclosed_fences(MUST_FAIL["never closed"], parser)
    assert [line for line, _ in never_closed] == [3] and "heading on line 5" in never_closed[0][1], \
        f"self-test: the opening line or the swallowed heading is wrong: {never_closed}"


def test_self_test_places_the_opening_inside(parser):
    inside = unclosed_fences(MUST_FAIL["an opening inside (README's info example)"], parser)
    assert [line for line, _ in inside] == [1] and "line 6 opens" in inside[0][1] and \
        "heading on line 4" in inside[0][1], f"self-test: the opening inside is misplaced: {inside}"


def texts(source):
    found = [os.path.join(source, name) for name in ("README.md", "CHANGELOG.md", "SECURITY.md")]
    for root, dirs, files in os.walk(os.path.join(source, "docs")):
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".md"))
    return [path for path in found if os.path.isfile(path)]


def pytest_generate_tests(metafunc):
    if "text" in metafunc.fixturenames:
        source = metafunc.config.getoption("--source") or \
            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        source = os.path.abspath(source)
        found = [os.path.relpath(path, source) for path in texts(source)]
        # None found: --source is not the repository's root, which must fail, not pass.
        metafunc.parametrize("text", found or [None])


def test_fences_close_where_meant(parser, source, text):
    assert text is not None, "no text found: is --source the repository's root?"
    with open(os.path.join(source, text), encoding="utf-8") as f:
        content = f.read()
    problems = [f"{text}:{line}: this code fence does not close where meant: {why}"
                for line, why in unclosed_fences(content, parser)]
    assert not problems, "\n".join(problems)

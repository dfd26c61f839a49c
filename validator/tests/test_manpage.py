#!/usr/bin/python3
"""The man page and the shell completions (validator/tools/manpage/generate.py, written by the
build into BUILD/share/) against the command's own help.

The help is read here on its own terms (every option row's spellings, every subcommand), not
with the generator's parser, and each artefact must hold all of it:

- the man page: a subsection per subcommand (.SS), each option spelling of that subcommand's
  help in an option tag (.TP) of its subsection, the top level's in some tag; `groff -man -ww -z`
  and `man --warnings -l` print nothing (when groff and man are installed); the .gz is the page;
- bash: `bash -n`, then the completion function itself, run in bash: `ggufcheck ''` offers every
  subcommand, `ggufcheck SUB SPELLING` offers every spelling of SUB's help, `ggufcheck ch` gives
  check, `ggufcheck check --for` gives --format, files are offered *.gguf first, a value's
  choices are offered and each one is accepted by the command (not a usage error);
- zsh: each spelling in an _arguments spec of its subcommand's function, each subcommand in the
  list; `zsh -n` when zsh is installed;
- fish: each spelling in a `complete` line of its subcommand, each subcommand offered first;
  `fish -n` when fish is installed.

The checks are also run on copies of the artefacts without --werror, which must fail: a test
that cannot see a dropped option would pass anything.

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_manpage.py --ggufcheck PATH
       --share BUILD/share --source REPO
A check whose tool (groff, man, zsh, fish) is not installed skips, saying so.
"""

import gzip
import os
import re
import shutil
import subprocess

import pytest

OPTION_ROW_RE = re.compile(r"^  (-[^\s]+)")
SUBCOMMAND_ROW_RE = re.compile(r"^  ([a-z][\w-]*)\s")
# The option every copy of the artefacts loses for the negative controls.
DROPPED = "--werror"


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, check=False, **kwargs)


def spellings(help_text):
    """Every option spelling of the option rows of one --help ("-j,--jobs,--threads N": -j,
    --jobs, --threads; "--progress,--no-progress{false}": --progress, --no-progress)."""
    found = []
    for line in help_text.splitlines():
        match = OPTION_ROW_RE.match(line)
        if match:
            found += [re.sub(r"\{.*\}$", "", name) for name in match.group(1).split(",")]
    return found


def subcommand_names(help_text):
    names, inside = [], False
    for line in help_text.splitlines():
        if not line.startswith(" "):
            inside = line.strip() == "Subcommands:"
            continue
        match = SUBCOMMAND_ROW_RE.match(line)
        if inside and match:
            names.append(match.group(1))
    return names


def read_help(ggufcheck):
    top = run([ggufcheck, "--help"]).stdout
    subs = subcommand_names(top)
    return top, {sub: run([ggufcheck, sub, "--help"]).stdout for sub in subs}


# ---------------------------------------------------------------------------------------------
# The man page

def deroff(text):
    text = re.sub(r"\\f[BIRP]", "", text)
    return text.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")


def roff_bold(option):
    """An option as the page's tags spell it: \\fB\\-\\-werror\\fR."""
    return "\\fB" + option.replace("-", "\\-") + "\\fR"


def man_tags(page):
    """{subsection or "": [the spellings of its option tags]}."""
    tags = {}
    section = ""
    lines = page.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SS "):
            section = line[4:].strip().strip('"')
        elif line.startswith(".SH "):
            section = ""
        elif line == ".TP" and i + 1 < len(lines):
            tag = deroff(lines[i + 1])
            tags.setdefault(section, []).extend(re.findall(r"(?<![\w-])-{1,2}[\w][\w.-]*", tag))
    return tags


def check_manpage(page, top, helps):
    failures = []
    tags = man_tags(page)
    every_tag = {t for values in tags.values() for t in values}
    for sub, text in helps.items():
        if sub not in tags and f".SS {sub}" not in page:
            failures.append(f"man page: no subsection for {sub}")
        for name in spellings(text):
            if name not in tags.get(sub, []):
                failures.append(f"man page: {sub} {name} is in no option tag of .SS {sub}")
    for name in spellings(top):
        if name not in every_tag:
            failures.append(f"man page: {name} (ggufcheck --help) is in no option tag")
    return failures


# ---------------------------------------------------------------------------------------------
# bash: the completion function, run

BASH_DRIVER = r"""
source "$1" || exit 3
shift
# Each query: the words of a command line, the last one the word being completed; the replies
# on one line, separated by the unit separator.
while IFS=$'\x1f' read -r -a words; do
  COMP_WORDS=("${words[@]}")
  COMP_CWORD=$((${#words[@]} - 1))
  COMP_LINE="${words[*]}"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _ggufcheck
  (IFS=$'\x1f'; printf '%s\n' "${COMPREPLY[*]}")
done
"""


def bash_complete(completion, queries, cwd):
    """The replies to each query (a list of words), from one bash."""
    stdin = "".join("\x1f".join(q) + ("\x1f" if q[-1] == "" else "") + "\n" for q in queries)
    done = run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "driver", completion],
               input=stdin, cwd=cwd)
    replies = done.stdout.split("\n")[:len(queries)]
    if done.returncode != 0 or len(replies) != len(queries):
        return None, done.stderr.strip()
    return [set(r.split("\x1f")) - {""} for r in replies], ""


def check_bash(completion, top, helps, scratch, ggufcheck, fixture):
    failures = []
    done = run(["bash", "-n", completion])
    if done.returncode != 0:
        return [f"bash -n {completion}: {done.stderr.strip()}"]
    queries = [["ggufcheck", ""], ["ggufcheck", "ch"], ["ggufcheck", "check", "--for"],
               ["ggufcheck", "check", ""], ["ggufcheck", "verify", ""],
               ["ggufcheck", "check", "--format", ""]]
    expected = [
        (set(helps), "ggufcheck '' offers every subcommand"),
        ({"check"}, "ggufcheck ch gives check"),
        ({"--format"}, "ggufcheck check --for gives --format"),
        ({"model.gguf", "models"}, "ggufcheck check '' offers *.gguf and directories"),
        ({"manifest.json"}, "ggufcheck verify '' offers the JSON manifest"),
        ({"json", "sarif"}, "ggufcheck check --format '' offers the formats"),
    ]
    exact = {1, 2}  # queries whose reply must be exactly the expected one
    named = []
    for sub, text in helps.items():
        for name in spellings(text):
            queries.append(["ggufcheck", sub, name])
            named.append(f"ggufcheck {sub} {name}")
    for name in spellings(top):
        queries.append(["ggufcheck", name])
        named.append(f"ggufcheck {name}")
    # Every option's value: what is offered (and no file where none is wanted).
    valued = []
    for sub, text in helps.items():
        for line in text.splitlines():
            match = OPTION_ROW_RE.match(line)
            rest = line[match.end():] if match else ""
            if match and re.match(r" [A-Z]", rest):
                name = match.group(1).split(",")[-1]
                queries.append(["ggufcheck", sub, name, ""])
                valued.append((sub, name))
    replies, error = bash_complete(completion, queries, scratch)
    if replies is None:
        return [f"bash: the completion function failed: {error}"]
    for i, (want, what) in enumerate(expected):
        got = replies[i]
        ok = got == want if i in exact else want <= got
        if not ok:
            failures.append(f"bash: {what}: got {sorted(got)}")
    if "notes.txt" in replies[3]:
        failures.append("bash: ggufcheck check '' offers notes.txt beside model.gguf")
    offset = len(expected)
    for i, what in enumerate(named):
        name = what.split()[-1]
        if name not in replies[offset + i]:
            failures.append(f"bash: {what} does not complete to {name}")
    offset += len(named)
    for i, (sub, name) in enumerate(valued):
        got = replies[offset + i]
        files = got & {"model.gguf", "notes.txt", "manifest.json"}
        if not got or files or "models" in got:
            continue  # no choices (a number, a code) or a path: nothing to run
        for choice in sorted(got):
            args = [ggufcheck, sub, name, choice]
            usage = helps[sub].split("Usage:", 1)[-1].split("\n", 1)[0]
            if re.search(r"\bpaths\b|\bfile\b", usage):  # a subcommand that reads a file
                args.append(fixture)
            status = run(args).returncode
            if status == 3:
                failures.append(f"bash: {sub} {name} offers {choice}, which ggufcheck rejects "
                                f"(exit 3)")
    return failures


# ---------------------------------------------------------------------------------------------
# zsh and fish: where each spelling is

def zsh_function(text, name):
    match = re.search(rf"^{re.escape(name)}\(\) \{{\n(.*?)^\}}", text, re.M | re.S)
    return match.group(1) if match else ""


def zsh_spec_names(body):
    # The descriptions ([...]) can name other options: only the specs count.
    specs = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", body)
    return set(re.findall(r"(?<![\w-])(-{1,2}[\w][\w.-]*?)(?=[=+,}']|$)", specs, re.M))


def check_zsh(text, top, helps):
    failures = []
    every = set()
    for sub, help_text in helps.items():
        names = zsh_spec_names(zsh_function(text, f"_ggufcheck_command_{sub}"))
        every |= names
        if f"'{sub}:" not in text:
            failures.append(f"zsh: subcommand {sub} is not in the list")
        for name in spellings(help_text):
            if name not in names:
                failures.append(f"zsh: {sub} {name} is in no spec of _ggufcheck_command_{sub}")
    every |= zsh_spec_names(zsh_function(text, "_ggufcheck"))
    for name in spellings(top):
        if name not in every:
            failures.append(f"zsh: {name} (ggufcheck --help) is in no spec")
    return failures


def fish_spellings(text, condition):
    names = set()
    for line in text.splitlines():
        if line.startswith("complete ") and condition in line:
            names |= {f"-{s}" for s in re.findall(r" -s (\S+)", line)}
            names |= {f"--{s}" for s in re.findall(r" -l (\S+)", line)}
    return names


def check_fish(text, top, helps):
    failures = []
    every = fish_spellings(text, "-n __ggufcheck_first")
    for sub, help_text in helps.items():
        names = fish_spellings(text, f"-n '__ggufcheck_using {sub}'")
        every |= names
        if not re.search(rf"^complete -c ggufcheck -n __ggufcheck_first -a {sub} ", text, re.M):
            failures.append(f"fish: subcommand {sub} is not offered first")
        for name in spellings(help_text):
            if name not in names:
                failures.append(f"fish: {sub} {name} is in no complete line of {sub}")
    for name in spellings(top):
        if name not in every:
            failures.append(f"fish: {name} (ggufcheck --help) is in no complete line")
    return failures


# ---------------------------------------------------------------------------------------------

def without(text, spelled):
    """The artefact without an option: a dropped option, which the checks must see."""
    return re.sub(rf"(?<![\w\\-]){re.escape(spelled)}(?![\w\\-])", "", text)


ENVIRONMENT_VARIABLES = ("HF_TOKEN", "NO_COLOR")
MAN_SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "SEE ALSO")


class Artefacts:
    """The built artefacts' paths and texts, the help they are checked against, and a scratch
    directory for the bash completion (model.gguf, notes.txt, manifest.json, models/)."""

    def __init__(self, ggufcheck, share, source, scratch):
        self.ggufcheck, self.source, self.scratch = ggufcheck, source, scratch
        self.page_path = os.path.join(share, "man", "man1", "ggufcheck.1")
        self.bash_path = os.path.join(share, "bash-completion", "completions", "ggufcheck")
        self.zsh_path = os.path.join(share, "zsh", "vendor-completions", "_ggufcheck")
        self.fish_path = os.path.join(share, "fish", "vendor_completions.d", "ggufcheck.fish")
        for path in (self.page_path, self.page_path + ".gz", self.bash_path, self.zsh_path,
                     self.fish_path):
            assert os.path.isfile(path), f"{path} is missing (built by the ggufcheck_manpage target)"
        texts = {}
        for path in (self.page_path, self.bash_path, self.zsh_path, self.fish_path):
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        self.page, self.bash = texts[self.page_path], texts[self.bash_path]
        self.zsh, self.fish = texts[self.zsh_path], texts[self.fish_path]
        self.top, self.helps = read_help(ggufcheck)
        self.fixture = os.path.join(source, "examples", "valid", "tiny-llama.gguf")
        for name in ("model.gguf", "notes.txt", "manifest.json"):
            open(os.path.join(scratch, name), "w").close()
        os.mkdir(os.path.join(scratch, "models"))


@pytest.fixture(scope="module")
def built(pytestconfig, ggufcheck, source, tmp_path_factory):
    share = pytestconfig.getoption("--share")
    assert share, "--share is required: the build's share/ directory"
    # The bash completion runs in the scratch directory: every path absolute.
    return Artefacts(ggufcheck, os.path.abspath(share), source,
                     str(tmp_path_factory.mktemp("completion")))


def test_the_help_is_ggufchecks(built):
    assert len(built.helps) >= 2 and len(spellings(built.top)) >= 3, \
        (f"the help lists {len(built.helps)} subcommands and {len(spellings(built.top))} top-level "
         f"options: is {built.ggufcheck} ggufcheck?")


def test_the_gz_is_the_page(built):
    with gzip.open(built.page_path + ".gz", "rt", encoding="utf-8") as f:
        assert f.read() == built.page, "ggufcheck.1.gz is not ggufcheck.1"


def test_the_page_names_the_version(built):
    version = run([built.ggufcheck, "--version"]).stdout.split()[1]  # ggufcheck 0.1.0 (git ...)
    assert re.search(rf'^\.TH GGUFCHECK 1 "[^"]*" "ggufcheck {re.escape(version)}"', built.page,
                     re.M) is not None, f"man page: .TH does not name version {version}"


@pytest.mark.parametrize("section", MAN_SECTIONS)
def test_the_page_has_the_section(built, section):
    assert f".SH {section}\n" in built.page, f"man page: no section {section}"


@pytest.mark.parametrize("variable", ENVIRONMENT_VARIABLES)
def test_environment_variables_the_help_names_are_in_environment(built, variable):
    if not re.search(rf"\b{variable}\b", built.top + "".join(built.helps.values())):
        pytest.skip(f"the help does not name {variable}")
    assert re.search(rf"^\.SH ENVIRONMENT\n(?:.*\n)*?.*\\fB{variable}\\fR", built.page, re.M) \
        is not None, f"man page: {variable} is not in ENVIRONMENT"


def test_the_page_holds_every_option(built):
    failures = check_manpage(built.page, built.top, built.helps)
    assert not failures, "\n".join(failures)


def test_groff_does_not_warn(built):
    if not shutil.which("groff"):
        pytest.skip("groff is not installed (Debian: groff-base)")
    done = run(["groff", "-man", "-ww", "-z", built.page_path])
    assert done.returncode == 0 and not done.stderr, f"groff -man -ww -z warns: {done.stderr.strip()}"


def test_man_does_not_warn(built):
    if not shutil.which("man"):
        pytest.skip("man is not installed (Debian: man-db)")
    done = run(["man", "--warnings", "-l", built.page_path], env={**os.environ, "MANWIDTH": "80"})
    assert done.returncode == 0 and not done.stderr, f"man --warnings -l warns: {done.stderr.strip()}"


def test_the_bash_completion_completes(built):
    failures = check_bash(built.bash_path, built.top, built.helps, built.scratch, built.ggufcheck,
                          built.fixture)
    assert not failures, "\n".join(failures)


def dropped_failures(built, what):
    """The failures of one check on a copy of its artefact without DROPPED."""
    if what == "man page":
        return check_manpage(built.page.replace(roff_bold(DROPPED), ""), built.top, built.helps)
    if what == "bash":
        dropped_bash = os.path.join(built.scratch, "dropped.bash")
        with open(dropped_bash, "w", encoding="utf-8") as f:
            f.write(without(built.bash, DROPPED))
        return check_bash(dropped_bash, built.top, built.helps, built.scratch, built.ggufcheck,
                          built.fixture)
    if what == "zsh":
        return check_zsh(without(built.zsh, DROPPED), built.top, built.helps)
    return check_fish(built.fish.replace(f" -l {DROPPED[2:]}", ""), built.top, built.helps)


@pytest.mark.parametrize("what", ("man page", "bash", "zsh", "fish"))
def test_the_check_sees_a_dropped_option(built, what):
    """The negative controls: each check must see the dropped option."""
    failures = dropped_failures(built, what)
    assert any(DROPPED in failure for failure in failures), \
        f"{what}: the check does not see {DROPPED} dropped"


def test_the_zsh_completion_holds_every_option(built):
    failures = check_zsh(built.zsh, built.top, built.helps)
    assert not failures, "\n".join(failures)


def test_the_fish_completion_holds_every_option(built):
    failures = check_fish(built.fish, built.top, built.helps)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("shell", ("zsh", "fish"))
def test_the_shell_reads_its_completion(built, shell):
    if not shutil.which(shell):
        pytest.skip(f"{shell} -n ({shell} is not installed)")
    path = built.zsh_path if shell == "zsh" else built.fish_path
    done = run([shell, "-n", path])
    assert done.returncode == 0, f"{shell} -n {path}: {done.stderr.strip()}"

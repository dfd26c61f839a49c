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

Usage: /usr/bin/python3 test_manpage.py --ggufcheck PATH --share BUILD/share --source REPO
Prints one line per failure and a final `N passed, M failed`; exits 1 on any failure.
"""

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

OPTION_ROW_RE = re.compile(r"^  (-[^\s]+)")
SUBCOMMAND_ROW_RE = re.compile(r"^  ([a-z][\w-]*)\s")
# The option every copy of the artefacts loses for the negative controls.
DROPPED = "--werror"


class Results:
    def __init__(self):
        self.passed = 0
        self.failures = []

    def all(self, failures):
        """A group of checks: one pass, or a line per failure."""
        for failure in failures:
            self.check(False, failure)
        if not failures:
            self.passed += 1

    def check(self, condition, message):
        if condition:
            self.passed += 1
        else:
            self.failures.append(message)
            print(f"FAIL: {message}")


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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ggufcheck", required=True)
    parser.add_argument("--share", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    # The bash completion runs in a scratch directory.
    args.ggufcheck, args.share, args.source = map(os.path.abspath,
                                                  (args.ggufcheck, args.share, args.source))
    results = Results()
    page_path = os.path.join(args.share, "man", "man1", "ggufcheck.1")
    bash_path = os.path.join(args.share, "bash-completion", "completions", "ggufcheck")
    zsh_path = os.path.join(args.share, "zsh", "vendor-completions", "_ggufcheck")
    fish_path = os.path.join(args.share, "fish", "vendor_completions.d", "ggufcheck.fish")
    for path in (page_path, page_path + ".gz", bash_path, zsh_path, fish_path):
        if not os.path.isfile(path):
            print(f"FAIL: {path} is missing (built by the ggufcheck_manpage target)")
            return 1
    texts = {}
    for path in (page_path, bash_path, zsh_path, fish_path):
        with open(path, encoding="utf-8") as f:
            texts[path] = f.read()
    page, zsh_text, fish_text = texts[page_path], texts[zsh_path], texts[fish_path]

    top, helps = read_help(args.ggufcheck)
    results.check(len(helps) >= 2 and len(spellings(top)) >= 3,
                  f"the help lists {len(helps)} subcommands and {len(spellings(top))} top-level "
                  f"options: is {args.ggufcheck} ggufcheck?")
    fixture = os.path.join(args.source, "examples", "valid", "tiny-llama.gguf")

    with gzip.open(page_path + ".gz", "rt", encoding="utf-8") as f:
        results.check(f.read() == page, "ggufcheck.1.gz is not ggufcheck.1")
    version = run([args.ggufcheck, "--version"]).stdout.split()[1]  # ggufcheck 0.1.0 (git ...)
    results.check(re.search(rf'^\.TH GGUFCHECK 1 "[^"]*" "ggufcheck {re.escape(version)}"', page,
                            re.M) is not None, f"man page: .TH does not name version {version}")
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "SEE ALSO"):
        results.check(f".SH {section}\n" in page, f"man page: no section {section}")
    mentions = set(re.findall(r"\b(?:HF_TOKEN|NO_COLOR)\b", top + "".join(helps.values())))
    for variable in sorted(mentions):
        results.check(re.search(rf"^\.SH ENVIRONMENT\n(?:.*\n)*?.*\\fB{variable}\\fR", page, re.M)
                      is not None, f"man page: {variable} is not in ENVIRONMENT")

    results.all(check_manpage(page, top, helps))
    if shutil.which("groff"):
        done = run(["groff", "-man", "-ww", "-z", page_path])
        results.check(done.returncode == 0 and not done.stderr,
                      f"groff -man -ww -z warns: {done.stderr.strip()}")
    else:
        print("skipped: groff is not installed (Debian: groff-base)")
    if shutil.which("man"):
        done = run(["man", "--warnings", "-l", page_path], env={**os.environ, "MANWIDTH": "80"})
        results.check(done.returncode == 0 and not done.stderr,
                      f"man --warnings -l warns: {done.stderr.strip()}")

    with tempfile.TemporaryDirectory() as scratch:
        for name in ("model.gguf", "notes.txt", "manifest.json"):
            open(os.path.join(scratch, name), "w").close()
        os.mkdir(os.path.join(scratch, "models"))
        results.all(check_bash(bash_path, top, helps, scratch, args.ggufcheck, fixture))

        # The negative controls: each check must see the dropped option.
        dropped_bash = os.path.join(scratch, "dropped.bash")
        with open(dropped_bash, "w", encoding="utf-8") as f:
            f.write(without(texts[bash_path], DROPPED))
        controls = {
            "man page": check_manpage(page.replace(roff_bold(DROPPED), ""), top, helps),
            "bash": check_bash(dropped_bash, top, helps, scratch, args.ggufcheck, fixture),
            "zsh": check_zsh(without(zsh_text, DROPPED), top, helps),
            "fish": check_fish(fish_text.replace(f" -l {DROPPED[2:]}", ""), top, helps),
        }
        for what, failures in controls.items():
            results.check(any(DROPPED in failure for failure in failures),
                          f"{what}: the check does not see {DROPPED} dropped")

    results.all(check_zsh(zsh_text, top, helps))
    results.all(check_fish(fish_text, top, helps))
    for shell, path in (("zsh", zsh_path), ("fish", fish_path)):
        if shutil.which(shell):
            done = run([shell, "-n", path])
            results.check(done.returncode == 0, f"{shell} -n {path}: {done.stderr.strip()}")
        else:
            print(f"skipped: {shell} -n ({shell} is not installed)")

    print(f"{results.passed} passed, {len(results.failures)} failed")
    return 1 if results.failures else 0


if __name__ == "__main__":
    sys.exit(main())

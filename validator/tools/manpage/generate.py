#!/usr/bin/python3
"""ggufcheck's man page and its bash, zsh and fish completions, written from the command's own
help, so that they cannot drift from it.

    generate.py --ggufcheck PATH --output-dir DIR [--docs-url URL]

Runs `PATH --version`, `PATH --help` and `PATH SUBCOMMAND --help` for every subcommand the help
lists, parses CLI11's help format and writes, under DIR (laid out as share/ is installed):

    man/man1/ggufcheck.1 and man/man1/ggufcheck.1.gz   roff man page (the .gz is reproducible)
    bash-completion/completions/ggufcheck              bash
    zsh/vendor-completions/_ggufcheck                  zsh
    fish/vendor_completions.d/ggufcheck.fish           fish

What the help says is all there is to know: a value's choices are read from its description
("text (default), json or sarif"), a value is a file when its placeholder names one (FILE, PATH,
MANIFEST, MODEL; DIR a directory), the environment variables are the NAME_LIKE_THIS words the help
mentions, the default subcommand is the one whose help the top-level help embeds. --docs-url
turns the help's repository paths (docs/remote.md) into links in SEE ALSO.

Python 3 standard library only. Exit status 0, or 1 with one line on stderr saying what failed.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field


class GenerateError(Exception):
    """An expected failure (the command cannot be run, its help cannot be parsed)."""


# ---------------------------------------------------------------------------------------------
# The help, parsed

# Placeholders that name a file or a directory (CLI11's type_name of the option).
FILE_PLACEHOLDERS = {"FILE", "FILES", "PATH", "PATHS", "MANIFEST", "MODEL"}
DIR_PLACEHOLDERS = {"DIR", "DIRECTORY"}
# A positional's name that names a file, when its placeholder is CLI11's generic TEXT.
FILE_NAMES = {"file", "files", "path", "paths", "manifest"}


@dataclass
class Value:
    """What an option's or a positional's value is, for the completions."""
    kind: str                  # "choices", "file", "dir" or "none"
    choices: list[str] = field(default_factory=list)
    suffix: str = ""           # for "file": the suffix offered first ("gguf", "json"), or none


@dataclass
class Option:
    names: list[str]           # every spelling: ["-j", "--jobs", "--threads"]
    placeholder: str           # "N", "NAME=VALUE"; empty for a flag
    description: str
    multiple: bool = False     # "..." after the placeholder
    value: Value = field(default_factory=lambda: Value("none"))

    @property
    def takes_value(self) -> bool:
        return bool(self.placeholder)

    @property
    def repeatable(self) -> bool:
        return self.multiple or re.search(r"\brepeatable\b", self.description) is not None

    @property
    def exits(self) -> bool:
        """--help and --version: print and exit, nothing else on the line matters."""
        return re.search(r"\band exit$", self.description) is not None


@dataclass
class Positional:
    name: str
    placeholder: str
    description: str
    multiple: bool = False
    required: bool = False
    value: Value = field(default_factory=lambda: Value("none"))


@dataclass
class Subcommand:
    name: str
    description: str


@dataclass
class Help:
    """One `--help` text: the top level's or a subcommand's."""
    description: list[str]     # paragraphs before the usage line
    usage: str                 # "ggufcheck check [OPTIONS] [paths...]"
    options: list[Option]
    positionals: list[Positional]
    subcommands: list[Subcommand]  # the top level only
    notes: list[str]           # paragraphs after the option list (CLI11's footer)
    embedded_usage: str = ""   # the usage line of a second help printed after this one


@dataclass
class Command:
    name: str
    summary: str
    help: Help


@dataclass
class Program:
    name: str
    version: str
    top: Help
    commands: list[Command]
    default: str               # the subcommand a bare `ggufcheck FILE` runs, or ""

    def command(self, name: str) -> Command:
        return next(c for c in self.commands if c.name == name)


SECTION_RE = re.compile(r"^(\S[^:]*):$")
# An option row: "  -j,--jobs,--threads N    Threads..." (the spellings, CLI11's "{false}" on a
# flag that sets false, a placeholder, "..." for several values, then the description).
OPTION_ROW_RE = re.compile(
    r"^  (?P<names>-[^\s]+)"
    r"(?: (?P<placeholder>[A-Z][A-Z0-9_=|<>-]*(?::\{[^}]*\})?))?"
    r"(?P<multiple> \.\.\.)?"
    r"(?: REQUIRED)?$")
POSITIONAL_ROW_RE = re.compile(
    r"^  (?P<name>[a-z][\w-]*)"
    r"(?: (?P<placeholder>[A-Z][A-Z0-9_=|<>-]*(?::\{[^}]*\})?))?"
    r"(?P<multiple> \.\.\.)?"
    r"(?P<required> REQUIRED)?$")
SUBCOMMAND_ROW_RE = re.compile(r"^  (?P<name>[a-z][\w-]*)$")
# Where a row's description starts: where most rows' descriptions start (CLI11's column width;
# a name one short of it is followed by a single space, a longer one by a line break).
DESCRIPTION_START_RE = re.compile(r"^  \S.*?\s{2,}(?=\S)")
# A paragraph of the free text starts with a label such as "Exit status:" or "Example:".
LABEL_RE = re.compile(r"^[A-Z][A-Za-z ]*: ")


def paragraphs(lines: list[str]) -> list[str]:
    """Free text as paragraphs: blank lines and labelled lines start one, other lines continue."""
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        text = line.strip()
        if not text or LABEL_RE.match(text):
            if current:
                out.append(" ".join(current))
            current = [text] if text else []
        else:
            current.append(text)
    if current:
        out.append(" ".join(current))
    return out


def parse_help(text: str, where: str) -> Help:
    lines = text.splitlines()
    usage_rows = [i for i, line in enumerate(lines) if line.startswith("Usage: ")]
    if not usage_rows:
        raise GenerateError(f"{where}: no 'Usage:' line; is this CLI11's help?")
    first = usage_rows[0]
    end = len(lines)
    embedded_usage = ""
    if len(usage_rows) > 1:
        # The top level prints the default subcommand's help after its own (after a blank line).
        second = usage_rows[1]
        embedded_usage = lines[second][len("Usage: "):].strip()
        end = max(i for i in range(first, second) if not lines[i].strip())
    help_ = Help(description=paragraphs(lines[:first]), usage=lines[first][len("Usage: "):].strip(),
                 options=[], positionals=[], subcommands=[], notes=[],
                 embedded_usage=embedded_usage)
    starts = [len(m.group(0)) for m in map(DESCRIPTION_START_RE.match, lines[first + 1:end]) if m]
    column = max(sorted(set(starts)), key=starts.count) if starts else 30
    section = ""
    last = None  # the row a wrapped description line continues
    notes: list[str] = []
    for number, line in enumerate(lines[first + 1:end], start=first + 2):
        if not line.strip():
            last = None
            continue
        header = SECTION_RE.match(line)
        if header and not notes:  # "Options:", "Positionals:", "Subcommands:", a group's name
            section = header.group(1)
            last = None
            continue
        if line.startswith("   ") and last is not None:
            last.description = f"{last.description} {line.strip()}".strip()
            continue
        if line.startswith("  ") and section and not notes:
            row = parse_row(section, line, column)
            if row is None:
                raise GenerateError(f"{where}, line {number}: cannot read {section} row {line!r}")
            if isinstance(row, Subcommand):
                help_.subcommands.append(row)
            elif isinstance(row, Option):
                help_.options.append(row)
            else:
                help_.positionals.append(row)
            last = row
            continue
        # Text after the rows: CLI11's footer.
        section = ""
        last = None
        notes.append(line)
    help_.notes = paragraphs(notes)
    for option in help_.options:
        option.value = option_value(option)
    for positional in help_.positionals:
        positional.value = positional_value(positional)
    return help_


def parse_row(section: str, line: str, column: int):
    if len(line) > column and line[column - 1] == " ":
        line, description = line[:column].rstrip(), line[column:].strip()
    else:
        line, description = line.rstrip(), ""
    if section == "Subcommands":
        match = SUBCOMMAND_ROW_RE.match(line)
        return Subcommand(match.group("name"), description) if match else None
    if section == "Positionals":
        match = POSITIONAL_ROW_RE.match(line)
        if not match:
            return None
        return Positional(name=match.group("name"), placeholder=match.group("placeholder") or "",
                          description=description,
                          multiple=bool(match.group("multiple")),
                          required=bool(match.group("required")))
    match = OPTION_ROW_RE.match(line)
    if not match:
        return None
    # "--progress,--no-progress{false}": CLI11 marks the spelling that sets false.
    names = [re.sub(r"\{[^}]*\}$", "", name) for name in match.group("names").split(",")]
    if not all(re.fullmatch(r"-[A-Za-z0-9]|--[A-Za-z0-9][\w.-]*", name) for name in names):
        return None
    return Option(names=names, placeholder=match.group("placeholder") or "",
                  description=description, multiple=bool(match.group("multiple")))


def without_parentheses(text: str) -> str:
    out = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    return "".join(out)


CHOICE_RE = re.compile(r"[a-z0-9][a-z0-9.+_-]*")


def choices_in(description: str) -> list[str]:
    """The values a description enumerates: "Output: text (default), json or sarif" gives
    text, json, sarif. A clause (between ';' and '.') whose words after its last ':' are two or
    more single words separated by ',' and 'or' is an enumeration; the first one found wins."""
    for clause in re.split(r"[;.](?:\s|$)", without_parentheses(description)):
        listed = clause.rsplit(":", 1)[-1].strip()
        items = [item for item in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", listed) if item]
        if len(items) >= 2 and all(CHOICE_RE.fullmatch(item) for item in items):
            return items
    return []


def file_value(description: str, positional: bool) -> Value:
    # The model files are *.gguf; a manifest of `hash --format json` is JSON.
    if re.search(r"\bJSON\b", description):
        return Value("file", suffix="json")
    if positional or re.search(r"\bGGUF\b", description):
        return Value("file", suffix="gguf")
    return Value("file")


def option_value(option: Option) -> Value:
    if not option.takes_value:
        return Value("none")
    placeholder, _, validator = option.placeholder.partition(":")
    if validator.startswith("{"):  # CLI11's IsMember: "TEXT:{a,b}"
        listed = [choice.strip() for choice in validator[1:-1].split(",")]
        return Value("choices", choices=[choice for choice in listed if choice])
    if placeholder in FILE_PLACEHOLDERS:
        return file_value(option.description, positional=False)
    if placeholder in DIR_PLACEHOLDERS:
        return Value("dir")
    if "=" not in placeholder:  # NAME=VALUE lists names, not whole values
        choices = choices_in(option.description)
        if choices:
            return Value("choices", choices=choices)
    return Value("none")


def positional_value(positional: Positional) -> Value:
    if positional.placeholder in FILE_PLACEHOLDERS or positional.name in FILE_NAMES:
        return file_value(positional.description, positional=True)
    if positional.placeholder in DIR_PLACEHOLDERS:
        return Value("dir")
    choices = choices_in(positional.description)
    return Value("choices", choices=choices) if choices else Value("none")


def run(binary: str, *args: str) -> str:
    try:
        done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=60,
                              check=False)
    except OSError as e:
        raise GenerateError(f"cannot run {binary}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise GenerateError(f"{binary} {' '.join(args)} did not finish in 60 s") from None
    if done.returncode != 0:
        raise GenerateError(f"{binary} {' '.join(args)} exited {done.returncode}: "
                            f"{done.stderr.strip()[:200]}")
    return done.stdout


def read_program(binary: str) -> Program:
    version_line = (run(binary, "--version").splitlines() or [""])[0].strip()
    top = parse_help(run(binary, "--help"), "--help")
    if not top.subcommands:
        raise GenerateError("--help lists no subcommand")
    name = top.usage.split()[0]
    # "ggufcheck 0.1.0 (git 80b97e1feac3)": the word after the name.
    words = version_line.split()
    version = words[1] if len(words) >= 2 else ""
    if not version:
        raise GenerateError("--version printed nothing")
    commands = [Command(sub.name, sub.description,
                        parse_help(run(binary, sub.name, "--help"), f"{sub.name} --help"))
                for sub in top.subcommands]
    default = ""
    if top.embedded_usage:
        words = top.embedded_usage.split()
        if len(words) > 1 and words[0] == name and words[1] in {c.name for c in commands}:
            default = words[1]
    return Program(name=name, version=version, top=top, commands=commands, default=default)


def top_only_options(program: Program) -> list[Option]:
    """The top level's own options (--version), not those it shares with the default command."""
    shared = set()
    if program.default:
        shared = {n for o in program.command(program.default).help.options for n in o.names}
    return [o for o in program.top.options if not set(o.names) & shared]


# ---------------------------------------------------------------------------------------------
# The man page

def roff_text(text: str, line_start: bool = True) -> str:
    """Plain text for a roff line: backslashes, hyphens (as in help2man: '\\-' so that options
    and file names copy as typed) and, at the start of a line, a control character escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if line_start and text[:1] in {".", "'"}:
        text = "\\&" + text
    return text


def bold(text: str) -> str:
    return f"\\fB{roff_text(text)}\\fR"


def italic(text: str) -> str:
    return f"\\fI{roff_text(text)}\\fR"


def usage_roff(usage: str) -> str:
    """A usage line: the command words bold, placeholders and positionals italic."""
    out = []
    words = usage.split()
    command_words = True
    for word in words:
        if command_words and re.fullmatch(r"[a-z][\w.-]*", word):
            out.append(bold(word))
            continue
        command_words = False
        core = re.match(r"^(\[?)([^\[\].]+)((?:\.\.\.)?\]?)$", word)
        if core:
            out.append(f"{roff_text(core.group(1))}{italic(core.group(2))}"
                       f"{roff_text(core.group(3), line_start=False)}")
        else:
            out.append(roff_text(word))
    return " ".join(out)


def option_tag(option: Option) -> str:
    tag = ", ".join(bold(name) for name in option.names)
    if option.placeholder:
        tag += " " + italic(option.placeholder)
        if option.multiple:
            tag += " ..."
    return tag


def positional_tag(positional: Positional) -> str:
    tag = italic(positional.name)
    if positional.multiple:
        tag += " ..."
    return tag


def exit_statuses(text: str) -> tuple[list[tuple[str, str]], str]:
    """"Exit status: 0 no error, 1 errors found ...; with several files the worst wins." as
    [(code, meaning)] and the remark after the list."""
    body = text[len("Exit status:"):].strip()
    body, _, remark = body.partition(";")
    items = re.split(r",\s+(?=\d+ )", without_trailing_period(body))
    pairs = []
    for item in items:
        match = re.fullmatch(r"(\d+) (.+)", item.strip())
        if not match:
            return [], text
        pairs.append((match.group(1), match.group(2)))
    remark = remark.strip()
    return pairs, (remark[0].upper() + remark[1:]) if remark else ""


def without_trailing_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


ENV_RE = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")
DOC_PATH_RE = re.compile(r"\bdocs/[\w./-]*[\w/]")


def environment(program: Program) -> list[tuple[list[str], str, str]]:
    """The variables the help mentions: ([names], the text that mentions them, where): the
    sentence, or when that is long the clause (a parenthesis or a part between ';')."""
    found: list[tuple[list[str], str, str]] = []
    seen: set[str] = set()

    def visit(text: str, where: str) -> None:
        for sentence in re.split(r"(?<=\.)\s+", text):
            parts = [sentence] if len(sentence) <= 160 else re.split(r"[;()]", sentence)
            for part in parts:
                names = [n for n in dict.fromkeys(ENV_RE.findall(part)) if n not in seen]
                if names:
                    seen.update(names)
                    found.append((names, part.strip(), where))

    for command in program.commands:
        for option in command.help.options:
            visit(option.description, f"{program.name} {command.name} {option.names[-1]}")
        for positional in command.help.positionals:
            visit(positional.description, f"{program.name} {command.name} {positional.name}")
        for text in command.help.description + command.help.notes:
            visit(text, f"{program.name} {command.name}")
    for text in program.top.description + program.top.notes:
        visit(text, program.name)
    return found


def doc_paths(program: Program) -> list[str]:
    texts = list(program.top.description) + list(program.top.notes)
    for command in program.commands:
        texts += command.help.description + command.help.notes + [command.summary]
        texts += [o.description for o in command.help.options]
        texts += [p.description for p in command.help.positionals]
    return sorted({path for text in texts for path in DOC_PATH_RE.findall(text)})


def manpage(program: Program, docs_url: str) -> str:
    name = program.name
    lines = [
        f'.\\" The man page of {name} {program.version}, generated from its --help by',
        '.\\" validator/tools/manpage/generate.py: do not edit, change the help text instead.',
    ]
    date = ""
    if os.environ.get("SOURCE_DATE_EPOCH", "").isdigit():
        date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ["SOURCE_DATE_EPOCH"])))
    lines.append(f'.TH {name.upper()} 1 "{date}" "{name} {program.version}" "User Commands"')

    description = list(program.top.description)
    summary = description.pop(0) if description else name
    summary = without_trailing_period(re.sub(rf"^{re.escape(name)}:\s*", "", summary))
    lines += [".SH NAME", f"{name} \\- {roff_text(summary)}"]

    lines.append(".SH SYNOPSIS")
    lines += [".nf", usage_roff(program.top.usage)]
    if program.default:
        default_usage = program.command(program.default).help.usage.split()
        lines.append(usage_roff(" ".join([name] + default_usage[2:])))
    for command in program.commands:
        lines.append(usage_roff(command.help.usage))
    for option in top_only_options(program):
        lines.append(f"{bold(name)} {bold(option.names[-1])}")
    lines.append(".fi")

    exit_paragraphs = [p for p in description + program.top.notes if p.startswith("Exit status:")]
    lines += [".SH DESCRIPTION", roff_text(summary[0].upper() + summary[1:]) + "."]
    for text in description + program.top.notes:
        if text not in exit_paragraphs:
            lines += [".PP", roff_text(text)]
    lines += [".PP", "The subcommands:"]
    for command in program.commands:
        lines += [".TP", bold(command.name), roff_text(command.summary)]

    lines.append(".SH OPTIONS")
    lines.append("Before a subcommand:")
    for option in top_only_options(program) or program.top.options:
        lines += [".TP", option_tag(option), roff_text(option.description)]
    lines += [".PP", "Each subcommand's own options follow its name (below, \\fBCOMMANDS\\fR)."]

    lines.append(".SH COMMANDS")
    for command in program.commands:
        help_ = command.help
        lines += [f".SS {command.name}", usage_roff(help_.usage)]
        for text in help_.description:
            lines += [".PP", roff_text(text)]
        if help_.positionals:
            lines += [".PP", "Arguments:"]
            for positional in help_.positionals:
                lines += [".TP", positional_tag(positional), roff_text(positional.description)]
        if help_.options:
            lines += [".PP", "Options:"]
            for option in help_.options:
                lines += [".TP", option_tag(option), roff_text(option.description)]
        for text in help_.notes:
            lines += [".PP", roff_text(text)]

    command_exits = [(command, text) for command in program.commands
                     for text in command.help.notes if text.startswith("Exit status:")]
    if exit_paragraphs or command_exits:
        lines.append(".SH EXIT STATUS")
    for text in exit_paragraphs:
        pairs, remark = exit_statuses(text)
        if not pairs:
            lines += [".PP", roff_text(text)]
            continue
        for code, meaning in pairs:
            lines += [".TP", bold(code), roff_text(meaning[0].upper() + meaning[1:])]
        if remark:
            lines += [".PP", roff_text(remark if remark.endswith(".") else remark + ".")]
    for command, text in command_exits:
        lines += [".PP", f"{bold(name + ' ' + command.name)}: {roff_text(text)}"]

    variables = environment(program)
    if variables:
        lines.append(".SH ENVIRONMENT")
        for names, clause, where in variables:
            clause = clause[0].upper() + clause[1:]
            lines += [".TP", ", ".join(bold(n) for n in names),
                      f"{roff_text(without_trailing_period(clause))} (see {bold(where)})."]

    lines += [".SH SEE ALSO", f"{bold(name + ' list')} lists every diagnostic; "
              f"{bold(name + ' explain')} {italic('CODE')} prints its page."]
    paths = doc_paths(program)
    if docs_url and paths:
        # The URL on a line of its own, unfilled: a URL cannot be broken or adjusted.
        listed = ", ".join(italic(path) for path in paths)
        lines += [".PP", f"The documentation the help refers to ({listed}) is at", ".nf",
                  roff_text(docs_url.rstrip("/") + "/"), ".fi"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# The completions

def brief(description: str, limit: int = 80) -> str:
    """A completion's one-line description: up to the first '. ' or '; ' outside parentheses,
    at most `limit` characters."""
    depth = 0
    text = description
    for i, char in enumerate(description):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ".;" and description[i + 1:i + 2] == " ":
            text = description[:i]
            break
    if len(text) > limit:
        text = text[:limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return text


def sh_quote(text: str) -> str:
    """Single quotes, for bash and zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


def value_words(value: Value) -> str:
    """A value kind for the bash completion: "choices a b", "file gguf", "dir", "none"."""
    if value.kind == "choices":
        return "choices " + " ".join(value.choices)
    if value.kind == "file":
        return f"file {value.suffix}".strip()
    return value.kind


def bash_completion(program: Program) -> str:
    name = program.name
    fn = "_" + re.sub(r"\W", "_", name)
    subcommands = " ".join(c.name for c in program.commands)
    out = [
        f"# bash completion for {name} {program.version}, generated from its --help by",
        "# validator/tools/manpage/generate.py: do not edit, change the help text instead.",
        "",
        "# Files: those ending in .$2 and the directories, or every file when none ends so.",
        f"{fn}_files() {{",
        "  local cur=$1 suffix=$2 IFS=$'\\n'",
        "  local -a files=()",
        '  [[ -n $suffix ]] && files=($(compgen -f -X "!*.$suffix" -- "$cur"))',
        "  if ((${#files[@]})); then",
        '    files+=($(compgen -d -- "$cur"))',
        "  else",
        '    files=($(compgen -f -- "$cur"))',
        "  fi",
        "  compopt -o filenames 2>/dev/null",
        '  COMPREPLY+=("${files[@]}")',
        "}",
        "",
        "# Completes $cur as a value of the kind given: choices WORD..., file [SUFFIX], dir, none.",
        f"{fn}_value() {{",
        "  case $1 in",
        '    choices) COMPREPLY+=($(compgen -W "${*:2}" -- "$cur")) ;;',
        f'    file) {fn}_files "$cur" "$2" ;;',
        "    dir)",
        "      compopt -o filenames 2>/dev/null",
        '      local IFS=$\'\\n\'',
        '      COMPREPLY+=($(compgen -d -- "$cur"))',
        "      ;;",
        "  esac",
        "}",
        "",
        "# The options of subcommand $1.",
        f"{fn}_options() {{",
        "  case $1 in",
    ]
    for command in program.commands:
        names = " ".join(n for o in command.help.options for n in o.names)
        out.append(f"    {command.name}) echo {sh_quote(names)} ;;")
    out += [
        "  esac",
        "}",
        "",
        "# The kind of value option $2 of subcommand $1 takes; fails for a flag.",
        f"{fn}_option_value() {{",
        '  case "$1 $2" in',
    ]
    for command in program.commands:
        for option in command.help.options:
            if option.takes_value:
                patterns = "|".join(sh_quote(f"{command.name} {n}") for n in option.names)
                out.append(f"    {patterns}) echo {sh_quote(value_words(option.value))} ;;")
    out += [
        "    *) return 1 ;;",
        "  esac",
        "}",
        "",
        "# The kind of positional argument $2 (from 0) of subcommand $1.",
        f"{fn}_positional() {{",
        "  case $1 in",
    ]
    for command in program.commands:
        positionals = command.help.positionals
        if not positionals:
            continue
        out.append(f"    {command.name})")
        for index, positional in enumerate(positionals):
            last = index == len(positionals) - 1
            test = f"(($2 >= {index}))" if last and positional.multiple else f"(($2 == {index}))"
            keyword = "if" if index == 0 else "elif"
            kind = sh_quote(value_words(positional.value))
            out.append(f"      {keyword} {test}; then echo {kind}")
        out += ["      fi", "      ;;"]
    top_options = " ".join(n for o in top_only_options(program) for n in o.names)
    out += [
        "  esac",
        "  return 0",
        "}",
        "",
        f"{fn}() {{",
        "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} option=",
        "  COMPREPLY=()",
        "  # bash splits --option=value at '=' (COMP_WORDBREAKS): --format=| and --format=js|",
        "  if [[ $cur == = ]]; then",
        "    option=$prev cur=",
        "  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then",
        "    option=${COMP_WORDS[COMP_CWORD - 2]}",
        "  elif [[ $prev == -* ]]; then",
        "    option=$prev",
        "  fi",
        "",
        f"  local subcommand={program.default} first=1",
        "  if ((COMP_CWORD > 1)); then",
        "    case ${COMP_WORDS[1]} in",
        f"      {subcommands.replace(' ', '|')}) subcommand=${{COMP_WORDS[1]}} first=2 ;;",
        "    esac",
        "  fi",
        "",
        "  local kind",
        f'  if [[ -n $option ]] && kind=$({fn}_option_value "$subcommand" "$option"); then',
        f"    {fn}_value $kind",
        "    return 0",
        "  fi",
        "",
        "  if [[ $cur == -* ]]; then",
        f'    local options="$({fn}_options "$subcommand")"',
        f"    ((COMP_CWORD == 1)) && options+={sh_quote(' ' + top_options)}",
        '    COMPREPLY=($(compgen -W "$options" -- "$cur"))',
        "    return 0",
        "  fi",
        "",
        "  # The positional arguments before this one: not options, not their values.",
        "  local count=0 index=$first word dashdash=",
        "  while ((index < COMP_CWORD)); do",
        "    word=${COMP_WORDS[index]}",
        "    if [[ -z $dashdash && $word == -- ]]; then",
        "      dashdash=1",
        "    elif [[ -z $dashdash && $word == -* ]]; then",
        "      if [[ ${COMP_WORDS[index + 1]} == = ]]; then",
        "        ((index += 2))",
        f'      elif {fn}_option_value "$subcommand" "$word" >/dev/null; then',
        "        ((index += 1))",
        "      fi",
        "    else",
        "      ((count += 1))",
        "    fi",
        "    ((index += 1))",
        "  done",
        "  if ((COMP_CWORD == 1)); then",
        f'    COMPREPLY=($(compgen -W {sh_quote(subcommands)} -- "$cur"))',
        "  fi",
        "  [[ -n $subcommand ]] || return 0",
        f'  kind=$({fn}_positional "$subcommand" "$count")',
        f"  [[ -n $kind ]] && {fn}_value $kind",
        "  return 0",
        "}",
        f"complete -F {fn} {name}",
    ]
    return "\n".join(out) + "\n"


def zsh_action(value: Value, message: str) -> str:
    """An _arguments action after ':message:'."""
    message = message.replace(":", "\\:")
    if value.kind == "choices":
        return f"{message}:({' '.join(value.choices)})"
    if value.kind == "file":
        glob = f' -g "*.{value.suffix}(-.)"' if value.suffix else ""
        return f"{message}:_files{glob}"
    if value.kind == "dir":
        return f"{message}:_files -/"
    return f"{message}: "


def zsh_description(text: str) -> str:
    return brief(text).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def zsh_option_spec(option: Option) -> str:
    names = []
    for spelling in option.names:
        if option.takes_value:
            # -j4 or -j 4; --jobs=4 or --jobs 4 (CLI11 takes both).
            spelling += "+" if len(spelling) == 2 else "="
        names.append(spelling)
    exclusions = ""
    if option.exits:
        exclusions = "(- *)"
    elif len(option.names) > 1 and not option.repeatable:
        exclusions = f"({' '.join(option.names)})"
    repeat = "*" if option.repeatable else ""
    rest = f"[{zsh_description(option.description)}]"
    if option.takes_value:
        rest += ":" + zsh_action(option.value, option.placeholder.lower())
    if len(names) == 1:
        return sh_quote(f"{exclusions}{repeat}{names[0]}{rest}")
    return f"{sh_quote(exclusions + repeat)}{{{','.join(names)}}}{sh_quote(rest)}"


def zsh_positional_spec(positional: Positional, index: int, last: bool) -> str:
    position = "*" if last and positional.multiple else str(index + 1)
    optional = "" if positional.required or position == "*" else ":"
    return sh_quote(f"{position}{optional}:{zsh_action(positional.value, positional.name)}")


def zsh_completion(program: Program) -> str:
    name = program.name
    fn = "_" + re.sub(r"\W", "_", name)
    out = [
        f"#compdef {name}",
        f"# zsh completion for {name} {program.version}, generated from its --help by",
        "# validator/tools/manpage/generate.py: do not edit, change the help text instead.",
        "",
    ]
    for command in program.commands:
        specs = [zsh_option_spec(o) for o in command.help.options]
        positionals = command.help.positionals
        specs += [zsh_positional_spec(p, i, i == len(positionals) - 1)
                  for i, p in enumerate(positionals)]
        out.append(f"# {name} {command.name}; further specs (the top level's options) in $@.")
        out.append(f"{fn}_command_{command.name}() {{")
        out.append("  _arguments -s -S \\")
        out += [f"    {spec} \\" for spec in specs]
        out += ['    "$@"', "}", ""]
    top_specs = [zsh_option_spec(o) for o in top_only_options(program)]
    subcommands = [sh_quote(f"{c.name}:{brief(c.summary)}") for c in program.commands]
    out += [f"{fn}() {{", "  local -a subcommands top", "  subcommands=("]
    out += [f"    {entry}" for entry in subcommands]
    out += ["  )", "  top=("]
    out += [f"    {spec}" for spec in top_specs]
    out += [
        "  )",
        "  case ${words[2]} in",
        f"    ({'|'.join(c.name for c in program.commands)})",
        "      if ((CURRENT > 2)); then",
        "        # The subcommand's own line: its name is the command _arguments sees.",
        "        shift words",
        "        ((CURRENT--))",
        f"        {fn}_command_${{words[1]}}",
        "        return",
        "      fi",
        "      ;;",
        "  esac",
        "  local ret=1",
        "  if ((CURRENT == 2)) && [[ $PREFIX != -* ]]; then",
        "    _describe -t subcommands 'subcommand' subcommands && ret=0",
        "  fi",
    ]
    if program.default:
        out += [
            f"  # Without a subcommand: {program.default}'s arguments and the top level's "
            "options.",
            f"  {fn}_command_{program.default} \"${{top[@]}}\" && ret=0",
        ]
    else:
        out += ["  ((CURRENT == 2)) && _arguments \"${top[@]}\" && ret=0"]
    out += ["  return ret", "}", "", f'{fn} "$@"']
    return "\n".join(out) + "\n"


def fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_value_args(value: Value) -> str:
    if value.kind == "choices":
        return f"-x -a {fish_quote(' '.join(value.choices))}"
    if value.kind == "file":
        if value.suffix:
            # -k keeps __fish_complete_suffix's order: the files with the suffix first.
            return f"-x -k -a {fish_quote(f'(__fish_complete_suffix .{value.suffix})')}"
        return "-r -F"
    if value.kind == "dir":
        return "-x -a '(__fish_complete_directories)'"
    return "-x"


def fish_option_lines(prefix: str, option: Option) -> list[str]:
    """One line per long spelling (the first carries the short one); the same value and
    description on each."""
    shorts = [n[1:] for n in option.names if len(n) == 2]
    longs = [n[2:] for n in option.names if n.startswith("--")]
    value = fish_value_args(option.value) if option.takes_value else ""
    described = f"-d {fish_quote(brief(option.description))}"
    lines = []
    for i, long in enumerate(longs or [""]):
        spellings = []
        if i == 0:
            spellings += [f"-s {s}" for s in shorts]
        if long:
            spellings.append(f"-l {long}")
        lines.append(" ".join(part for part in [prefix, *spellings, value, described] if part))
    return lines


def fish_completion(program: Program) -> str:
    name = program.name
    fn = "__" + re.sub(r"\W", "_", name)
    subcommands = " ".join(c.name for c in program.commands)
    out = [
        f"# fish completion for {name} {program.version}, generated from its --help by",
        "# validator/tools/manpage/generate.py: do not edit, change the help text instead.",
        "",
        f"set -g {fn}_subcommands {subcommands}",
        "",
        f"# The subcommand of the command line: the word after {name} when it names one, else "
        f"{program.default or 'none'}.",
        f"function {fn}_subcommand",
        "    set -l words (commandline -opc)",
        f"    if set -q words[2]; and contains -- $words[2] ${fn}_subcommands",
        "        echo $words[2]",
        "    else",
        f"        echo {program.default or '-'}",
        "    end",
        "end",
        "",
        f"function {fn}_using",
        f"    test ({fn}_subcommand) = $argv[1]",
        "end",
        "",
        "# Nothing after the command name yet: the place of a subcommand.",
        f"function {fn}_first",
        "    test (count (commandline -opc)) -eq 1",
        "end",
        "",
        "# The options of subcommand $argv[1] that take a value.",
        f"function {fn}_valued",
        "    switch $argv[1]",
    ]
    for command in program.commands:
        valued = [n for o in command.help.options if o.takes_value for n in o.names]
        if valued:
            out += [f"        case {command.name}",
                    f"            printf '%s\\n' {' '.join(valued)}"]
    out += [
        "    end",
        "end",
        "",
        "# True when the word being completed is positional argument $argv[2] (from 0) of",
        "# subcommand $argv[1], or a later one with a third argument 'more'.",
        f"function {fn}_argument",
        f"    {fn}_using $argv[1]; or return 1",
        "    set -l words (commandline -opc)",
        "    set -e words[1]",
        f"    set -q words[1]; and contains -- $words[1] ${fn}_subcommands; and set -e words[1]",
        f"    set -l valued ({fn}_valued $argv[1])",
        "    set -l count 0",
        "    set -l skip 0",
        "    for word in $words",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $word",
        "            case '--*=*'",
        "            case '-*'",
        "                contains -- $word $valued; and set skip 1",
        "            case '*'",
        "                set count (math $count + 1)",
        "        end",
        "    end",
        "    test $skip = 0; or return 1",
        "    if set -q argv[3]",
        "        test $count -ge $argv[2]",
        "    else",
        "        test $count -eq $argv[2]",
        "    end",
        "end",
        "",
        "# No file unless an argument or a value is one.",
        f"complete -c {name} -f",
    ]
    for command in program.commands:
        out.append(f"complete -c {name} -n {fn}_first -a {command.name} "
                   f"-d {fish_quote(brief(command.summary))}")
    for option in top_only_options(program):
        out += fish_option_lines(f"complete -c {name} -n {fn}_first", option)
    for command in program.commands:
        out += ["", f"# {name} {command.name}"]
        condition = fish_quote(f"{fn}_using {command.name}")
        for option in command.help.options:
            out += fish_option_lines(f"complete -c {name} -n {condition}", option)
        positionals = command.help.positionals
        for index, positional in enumerate(positionals):
            if positional.value.kind == "none":
                continue
            more = " more" if index == len(positionals) - 1 and positional.multiple else ""
            where = fish_quote(f"{fn}_argument {command.name} {index}{more}")
            value = fish_value_args(positional.value).replace("-x ", "").replace("-r ", "")
            out.append(f"complete -c {name} -n {where} {value} "
                       f"-d {fish_quote(brief(positional.description, 40))}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------

def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def write_gzip(path: str, text: str) -> None:
    # No name and no time in the header: the same page gives the same bytes (reproducible).
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=buffer, mtime=0) as f:
        f.write(text.encode("utf-8"))
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ggufcheck", required=True, help="the built ggufcheck command")
    parser.add_argument("--output-dir", required=True, help="where share/'s files are written")
    parser.add_argument("--docs-url", default="",
                        help="the URL of the repository's docs/ (links in SEE ALSO)")
    args = parser.parse_args(argv[1:])
    try:
        program = read_program(args.ggufcheck)
        page = manpage(program, args.docs_url)
        out = args.output_dir
        name = program.name
        write(os.path.join(out, "man", "man1", f"{name}.1"), page)
        write_gzip(os.path.join(out, "man", "man1", f"{name}.1.gz"), page)
        write(os.path.join(out, "bash-completion", "completions", name), bash_completion(program))
        write(os.path.join(out, "zsh", "vendor-completions", f"_{name}"), zsh_completion(program))
        write(os.path.join(out, "fish", "vendor_completions.d", f"{name}.fish"),
              fish_completion(program))
    except GenerateError as e:
        print(f"generate.py: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"generate.py: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Expected-failure lists: conformance/expected-failures/<parser>.<profile>.txt.

One entry per line, `case_id outcome  # optional reason`; `#` starts a comment; blank lines
are ignored. outcome is one of the failing outcomes (accepted_invalid, rejected_valid,
value_mismatch, crash, timeout, oom), or several joined by `|` (`timeout|oom`) for a case
whose failure depends on the machine's load. A case that fails with a listed outcome is an
expected failure ("xfail"). An entry is stale, and fails the run, when its case now passes,
fails with another outcome, is skipped, or is not in the manifest. A failure that is not
listed fails the run. --fix rewrites the lists of the parsers and profiles that ran: entries
whose outcome is unchanged keep their reason, stale ones go, new failures are added without
a reason, and entries of cases that did not run (--run/--skip, unavailable) stay as they are.
"""
import os
import re

from . import SetupError
from .judge import FAILING
from .registry import safe_name

HEADER = ("# Expected failures of {parser} in the {profile} profile: `case_id outcome  # reason`\n"
          "# (see README.md). Regenerate with `conformance/run --fix`.\n")
_LINE = re.compile(r"\s*(\S+)\s+(\S+)\s*(?:#\s?(.*))?\Z")


class Entry:
    __slots__ = ("case", "outcome", "reason", "line")

    def __init__(self, case, outcome, reason=None, line=None):
        self.case, self.outcome, self.reason, self.line = case, outcome, reason, line

    @property
    def allowed(self):
        """The outcomes the entry accepts: one, or several written a|b."""
        return set(self.outcome.split("|"))


def list_path(directory, parser, profile):
    return os.path.join(directory, f"{safe_name(parser)}.{profile}.txt")


def read_list(path):
    """{case_id: Entry}; {} when the file does not exist. SetupError on a bad line."""
    entries = {}
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except FileNotFoundError:
        return entries
    except OSError as error:
        raise SetupError(f"cannot read {path}: {error.strerror}") from None
    for number, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        match = _LINE.match(text)
        if not match:
            raise SetupError(f"{path}:{number}: expected `case_id outcome  # reason`, got "
                             f"{text.strip()!r}")
        case_id, outcome, reason = match.groups()
        for one in outcome.split("|"):
            if one not in FAILING:
                raise SetupError(f"{path}:{number}: {one!r} is not a failing outcome "
                                 f"({', '.join(FAILING)})")
        if case_id in entries:
            raise SetupError(f"{path}:{number}: {case_id} is listed twice")
        entries[case_id] = Entry(case_id, outcome, (reason or "").strip() or None, number)
    return entries


def status(outcome, entry):
    """(status, stale detail or None): status pass, fail, xfail, stale or skipped."""
    failing = outcome in FAILING
    if entry is None:
        return ("fail" if failing else "skipped" if outcome == "skipped" else "pass"), None
    if outcome in entry.allowed:
        return "xfail", None
    now = "skipped" if outcome == "skipped" else f"now {outcome}"
    return "stale", f"listed as {entry.outcome}, {now}"


def write_list(path, parser, profile, old_entries, ran, outcomes, order):
    """Rewrites one list. ran: ids of the cases that ran; outcomes: {id: outcome} of those;
    order: {id: position in the manifest}. Returns (added, removed) counts."""
    kept = {}
    for case_id, entry in old_entries.items():
        if case_id not in ran and case_id in order:
            kept[case_id] = entry
    for case_id in ran:
        outcome = outcomes.get(case_id)
        if outcome in FAILING:
            old = old_entries.get(case_id)
            kept[case_id] = old if old and outcome in old.allowed else Entry(case_id, outcome)
    added = sum(1 for case_id, entry in kept.items()
                if case_id not in old_entries or old_entries[case_id] is not entry)
    removed = sum(1 for case_id, entry in old_entries.items()
                  if case_id not in kept or kept[case_id] is not entry)
    if not kept:
        if os.path.exists(path):
            os.unlink(path)
        return added, removed
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    width = max(len(f"{e.case} {e.outcome}") for e in kept.values())
    lines = [HEADER.format(parser=parser, profile=profile)]
    for entry in sorted(kept.values(), key=lambda e: (order.get(e.case, len(order)), e.case)):
        text = f"{entry.case} {entry.outcome}"
        if entry.reason:
            text = f"{text.ljust(width)}  # {entry.reason}"
        lines.append(text + "\n")
    partial = path + ".tmp"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    os.replace(partial, path)
    return added, removed

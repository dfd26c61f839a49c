"""The outcome of one (case, parser, profile), as conformance/adapters/PROTOCOL.md
("Outcomes") documents it:

  expected accept + accepted, values equal at the level   accepted          pass
  expected accept + accepted, values differ               value_mismatch    fail
  expected accept + rejected                              rejected_valid    fail
  expected reject + rejected                              rejected          pass
  expected reject + accepted                              accepted_invalid  fail
  either + accepted (values compared when canonical)      either_accepted   pass
                                      (values differ)     value_mismatch    fail
  either + rejected                                       either_rejected   pass
  crash, timeout, oom                                     that outcome      fail, always
  expected accept or either, and the case's GGUF version or endianness not among the
  parser's capabilities                                   skipped           (not counted)

The data column (judge_data) has the same outcomes for `ADAPTER --data FILE`: accept or
reject from the case's "data" verdict; a rejection of a case to be rejected must name the
tensor the case declares ("tensor"), else it is a value_mismatch on the path "tensor".

The model column (judge_model) is the same for `ADAPTER --model FILE`, accept or reject from
the case's "model" verdict, with nothing to compare: a load is accepted, a refusal (an abort of
llama.cpp's loader included, which the adapter reports as one) rejected.
"""
import json

from . import compare
from .execute import TOO_DEEP

PASSING = ("accepted", "rejected", "either_accepted", "either_rejected")
FAILING = ("accepted_invalid", "rejected_valid", "value_mismatch", "crash", "timeout", "oom")
OUTCOMES = PASSING + FAILING + ("skipped",)


def is_skipped(case, parser, profile):
    return case.expected.get(profile) in ("accept", "either") and not parser.supports(case)


def judge(case, profile, raw, level, canonical):
    """(outcome, diff or None, detail). diff is (path, expected, actual)."""
    expected = case.expected.get(profile)
    if raw.kind in ("crash", "timeout", "oom"):
        return raw.kind, None, raw.error or raw.kind
    if raw.kind == "rejected":
        detail = f"rejected: {raw.error}" if raw.error else "rejected"
        if expected == "accept":
            return "rejected_valid", None, detail
        return ("either_rejected" if expected == "either" else "rejected"), None, detail
    if expected == "reject":
        return "accepted_invalid", None, "accepted"
    if canonical is not None and compare.level_number(level) > 0 and \
            raw.doc.get(TOO_DEEP):
        return ("value_mismatch", ("", "(the canonical output)", "(an output nested too deeply "
                                   "to read)"), "the output is nested too deeply to compare")
    if canonical is not None and compare.level_number(level) > 0:
        diff = compare.compare(canonical, raw.doc, level)
        if diff:
            path, want, got = diff
            return "value_mismatch", diff, f"{path}: expected {_short(want)}, got {_short(got)}"
    return ("either_accepted" if expected == "either" else "accepted"), None, "accepted"


def _short(value, width=60):
    text = repr(value) if value is compare.MISSING else json.dumps(value)
    return text if len(text) <= width else text[:width] + "..."


def judge_model(case, raw):
    """The model column: (outcome, None, detail) of `ADAPTER --model FILE`."""
    expected = case.expected.get("model")
    if raw.kind in ("crash", "timeout", "oom"):
        return raw.kind, None, raw.error or raw.kind
    if raw.kind == "accepted":
        return ("accepted_invalid" if expected == "reject" else "accepted"), None, "accepted"
    detail = f"rejected: {raw.error}" if raw.error else "rejected"
    return ("rejected_valid" if expected == "accept" else "rejected"), None, detail


def judge_data(case, raw):
    """The data column: (outcome, diff or None, detail) of `ADAPTER --data FILE`."""
    expected = case.expected.get("data")
    if raw.kind in ("crash", "timeout", "oom"):
        return raw.kind, None, raw.error or raw.kind
    if raw.kind == "accepted":
        if expected == "reject":
            return "accepted_invalid", None, "accepted"
        return "accepted", None, "accepted"
    detail = f"rejected: {raw.error}" if raw.error else "rejected"
    if expected == "accept":
        return "rejected_valid", None, detail
    want = (case.data or {}).get("tensor")
    got = (raw.doc or {}).get("tensor", compare.MISSING)
    if want is not None and got != want:
        return ("value_mismatch", ("tensor", want, got),
                f"tensor: expected {_short(want)}, got {_short(got)}")
    return "rejected", None, detail

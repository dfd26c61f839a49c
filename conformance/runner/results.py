"""The results of a run as one JSON document (--json, results.json), and the scores.

{"suite", "suite_version", "runner_version", "date", "options": {...},
 "parsers": [{name, command, batch, profiles, capabilities, capabilities_source, level,
              level_capped, ...}],
 "unavailable_parsers": [{"name", "reason"}], "unavailable_cases": [{"id", "reason"}],
 "cases": [{id, area, rule, error_class, level, tags, gguf_version, endianness, expected}],
 "columns": [{"parser", "profile", "level"}],
 "results": [{"case", "parser", "profile", "level", "expected", "verdict", "outcome",
              "status", "exit", "signal", "duration_s", "peak_rss_bytes", "error", "detail",
              "diff": {"path", "expected", "actual", "missing"} | null, "xfail_reason", "stale"}],
 "stale_entries": [{"parser", "profile", "case", "detail"}],   # entries of unknown cases
 "scores": [{"parser", "profile", "level", "level_capped", "passed", "total",
             "required": {"passed", "total"}, "recommended": {...}, "counts": {outcome: n},
             "xfail", "skipped", "stale", "areas": {area: {"passed", "total"}}}],
 "totals": {"passed", "failed", "xfail", "skipped", "unavailable_cases",
            "unavailable_parsers"}}

outcome: accepted, rejected, either_accepted, either_rejected (passing), accepted_invalid,
rejected_valid, value_mismatch, crash, timeout, oom (failing), skipped. status: pass, fail,
xfail (listed with that outcome), stale (listed, but the outcome differs), skipped.
A diff's "missing" is null, "expected" or "actual" (that side has no such key or element,
its value is then null). Scores count outcomes (an xfail is not passed); the run's totals
count statuses.
"""
import json

from .judge import FAILING, PASSING

COUNTED = FAILING


def scores(results, parsers, profiles):
    by_column = {}
    for record in results:
        by_column.setdefault((record["parser"], record["profile"]), []).append(record)
    table = []
    for parser in parsers:
        for profile in profiles:
            records = by_column.get((parser.name, profile))
            if records is None:
                continue
            score = {"parser": parser.name, "profile": profile, "level": parser.level,
                     "level_capped": parser.capped, "passed": 0, "total": 0,
                     "required": {"passed": 0, "total": 0},
                     "recommended": {"passed": 0, "total": 0},
                     "counts": {outcome: 0 for outcome in COUNTED},
                     "xfail": 0, "skipped": 0, "stale": 0, "areas": {}}
            for record in records:
                if record["status"] == "xfail":
                    score["xfail"] += 1
                if record["status"] == "stale":
                    score["stale"] += 1
                if record["outcome"] == "skipped":
                    score["skipped"] += 1
                    continue
                passed = record["outcome"] in PASSING
                grade = score["recommended" if record["case_level"] == "recommended"
                              else "required"]
                area = score["areas"].setdefault(record["area"], {"passed": 0, "total": 0})
                for bucket in (score, grade, area):
                    bucket["total"] += 1
                    bucket["passed"] += passed
                if record["outcome"] in score["counts"]:
                    score["counts"][record["outcome"]] += 1
            table.append(score)
    return table


def totals(results, stale_entries, unavailable_cases, unavailable_parsers):
    count = {"pass": 0, "fail": 0, "xfail": 0, "stale": 0, "skipped": 0}
    for record in results:
        count[record["status"]] += 1
    return {"passed": count["pass"], "failed": count["fail"] + count["stale"] + len(stale_entries),
            "xfail": count["xfail"], "skipped": count["skipped"],
            "stale": count["stale"] + len(stale_entries),
            "unavailable_cases": len(unavailable_cases),
            "unavailable_parsers": len(unavailable_parsers)}


def public(record):
    """A result record as written (without the runner's helper fields)."""
    return {key: value for key, value in record.items() if key not in ("case_level", "area")}


def document(meta, parsers, unavailable_parsers, cases, unavailable_cases, results,
             stale_entries, profiles):
    table = scores(results, parsers, profiles)
    columns = [{"parser": s["parser"], "profile": s["profile"], "level": s["level"]}
               for s in table]
    return dict(meta,
                parsers=[parser.summary() for parser in parsers],
                unavailable_parsers=unavailable_parsers,
                cases=[case.summary() for case in cases],
                unavailable_cases=unavailable_cases,
                columns=columns,
                results=[public(record) for record in results],
                stale_entries=stale_entries,
                scores=table,
                totals=totals(results, stale_entries, unavailable_cases, unavailable_parsers))


def dump(doc, handle):
    json.dump(doc, handle, indent=1, ensure_ascii=False)
    handle.write("\n")

"""summary.md: per profile (and for the data and model columns) a table of the parsers' scores and
failure counts, a table per area, and the failing case ids of each parser."""
from .limits import format_size
from .suite import area_key

COUNT_HEADERS = (("accepted_invalid", "accepted invalid"), ("rejected_valid", "rejected valid"),
                 ("crash", "crashes"), ("timeout", "timeouts"), ("oom", "OOM"),
                 ("value_mismatch", "value mismatches"))


def _ratio(bucket):
    return f"{bucket['passed']}/{bucket['total']}"


def _percent(bucket):
    return f" ({100 * bucket['passed'] / bucket['total']:.0f}%)" if bucket["total"] else ""


def _row(cells):
    return "| " + " | ".join(str(cell).replace("|", "\\|") for cell in cells) + " |"


def render(doc):
    options = doc["options"]
    cap = format_size(options["memory_cap_bytes"]) if options["memory_cap_bytes"] else "none"
    lines = ["# GGUF conformance results", "",
             f"Suite {doc.get('suite')} {doc.get('suite_version')}, runner "
             f"{doc['runner_version']}, {doc['date']}. Level {options['level']}, timeout "
             f"{options['timeout_s']:g} s (hostile {options['hostile_timeout_s']:g} s, big "
             f"{options.get('big_timeout_s', options['timeout_s']):g} s), memory "
             f"cap {cap}. "
             f"{doc['totals']['passed']} passed, {doc['totals']['failed']} failed, "
             f"{doc['totals']['xfail']} expected failures, {doc['totals']['skipped']} skipped.",
             ""]
    if doc["unavailable_parsers"]:
        lines += ["Not available: " + "; ".join(f"{p['name']} ({p['reason']})"
                                                for p in doc["unavailable_parsers"]) + ".", ""]
    if doc["unavailable_cases"]:
        lines += ["Unavailable (not counted): "
                  + ", ".join(c["id"] for c in doc["unavailable_cases"]) + ".", ""]

    profiles = [p for p in doc["options"]["profiles"]
                if any(s["profile"] == p for s in doc["scores"])]
    for profile in profiles:
        title = f"Profile {profile}" if profile not in ("data", "model") else \
            "Data check (column data: llama.cpp's tensor data check on the data cases)" \
            if profile == "data" else \
            "Model check (column model: llama.cpp's model loader on the model and split cases)"
        lines += [f"## {title}", "",
                  _row(["parser", "level", "score", "required", "recommended"]
                       + [title for _, title in COUNT_HEADERS] + ["xfail", "skipped"]),
                  _row(["---"] * (5 + len(COUNT_HEADERS) + 2))]
        for score in doc["scores"]:
            if score["profile"] != profile:
                continue
            level = score["level"] + (" (cap)" if score["level_capped"] else "")
            lines.append(_row([score["parser"], level, _ratio(score) + _percent(score),
                               _ratio(score["required"]), _ratio(score["recommended"])]
                              + [score["counts"][key] for key, _ in COUNT_HEADERS]
                              + [score["xfail"], score["skipped"]]))
        lines.append("")
        if profile == "data" and options.get("without_data"):
            lines += ["No data column (they do not declare the data check): "
                      + ", ".join(options["without_data"]) + ".", ""]
        if profile == "model" and options.get("without_model"):
            lines += ["No model column (they do not declare the model check): "
                      + ", ".join(options["without_model"]) + ".", ""]

    areas = sorted({area for score in doc["scores"] for area in score["areas"]}, key=area_key)
    if areas and doc["scores"]:
        lines += ["## By area", "", "Passed / total per area, for each parser and profile.", "",
                  _row(["area"] + [f"{s['parser']} ({s['profile']})" for s in doc["scores"]]),
                  _row(["---"] * (1 + len(doc["scores"])))]
        for area in areas:
            lines.append(_row([area] + [_ratio(s["areas"][area]) if area in s["areas"] else "-"
                                        for s in doc["scores"]]))
        lines.append("")

    lines += ["## Failing cases", "",
              "Per parser and profile, by outcome; (x) marks an expected failure, (stale) a "
              "stale entry of the expected-failure list.", ""]
    failing = {}
    for record in doc["results"]:
        if record["status"] in ("fail", "xfail", "stale"):
            failing.setdefault(record["parser"], {}).setdefault(record["profile"], {}) \
                .setdefault(record["outcome"], []).append(record)
    if not failing and not doc["stale_entries"]:
        lines.append("None.")
    for parser, per_profile in failing.items():
        parts = []
        for profile, per_outcome in per_profile.items():
            groups = []
            for outcome, records in per_outcome.items():
                ids = ", ".join(f"`{r['case']}`" + {"xfail": " (x)", "stale": " (stale)"}
                                .get(r["status"], "") for r in records)
                groups.append(f"{outcome}: {ids}")
            parts.append(f"*{profile}* " + "; ".join(groups))
        lines.append(f"- **{parser}** " + ". ".join(parts))
    for entry in doc["stale_entries"]:
        lines.append(f"- **{entry['parser']}** *{entry['profile']}* `{entry['case']}` (stale "
                     f"entry: {entry['detail']})")
    lines.append("")
    return "\n".join(lines)

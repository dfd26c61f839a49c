"""index.html: the results page, one self-contained file (inline CSS and JS, no network),
rendered here in Python, with a small script for the pruned-view toggle and the filter.

  #scores          per profile (and for the data and model columns), a table of parser rows: level,
                   score, required, recommended, and the failure counts
  #matrix          rows = cases grouped by area (area header rows), columns = parser x
                   profile, each cell coloured by outcome, a tooltip with the detail
  #matrix-pruned   the same without the rows in which, profile by profile, every parser has
                   the same outcome; a row per area says how many were collapsed
  #diffs           every value mismatch: case, parser, profile, first differing path, both
                   values

Stable attributes for tests and scripts: case rows `tr[data-case]`, area rows
`tr[data-area].area`, column headers `th[data-column]` ("parser/profile"), cells
`td[data-column][data-outcome]`, collapsed rows `tr[data-collapsed]`, diff rows
`tr[data-diff]`, score rows `tr[data-score]`; `body[data-ready="1"]` once the script ran.
"""
import html
import json

from .limits import format_size
from .suite import area_key

LEGEND = (
    ("accepted", "expected accept, accepted", ""),
    ("rejected", "expected reject, rejected", ""),
    ("either_accepted", "either, accepted", ""),
    ("either_rejected", "either, rejected", ""),
    ("rejected_valid", "should have accepted", "R"),
    ("accepted_invalid", "should have rejected", "A"),
    ("value_mismatch", "value mismatch", "V"),
    ("crash", "crash", "C"),
    ("timeout", "timeout", "T"),
    ("oom", "out of memory", "M"),
    ("skipped", "skipped (unsupported)", "-"),
)
MARKS = {outcome: mark for outcome, _, mark in LEGEND}
TITLES = {outcome: title for outcome, title, _ in LEGEND}

CSS = """
:root { --border: #c8c8c8; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
body { margin: 1.5em; color: #1d1d1d; background: #fff; font-size: 14px; }
h1 { font-size: 1.5em; margin: 0 0 .3em; } h2 { font-size: 1.2em; margin: 1.6em 0 .5em; }
h3 { font-size: 1em; margin: 1.2em 0 .4em; }
nav a { margin-right: 1em; } p.meta { color: #555; margin: .2em 0; }
table { border-collapse: collapse; }
table.scores td, table.scores th, table.list td, table.list th {
  border: 1px solid var(--border); padding: 3px 8px; text-align: right; }
table.scores td:first-child, table.list td, table.list th { text-align: left; }
td.v i { color: #777; }
table.scores td:first-child { white-space: nowrap; }
table.scores th, table.list th { background: #f2f2f2; }
td.bad { background: #fde2e0; } td.num { font-variant-numeric: tabular-nums; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: .6em 0; }
.legend span { display: inline-flex; align-items: center; gap: 5px; }
.swatch { display: inline-block; width: 16px; height: 16px; border: 1px solid #888;
  text-align: center; font-size: 10px; line-height: 16px; font-weight: bold; }
table.matrix { font-size: 12px; }
table.matrix th.col { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap;
  padding: 4px 2px; font-weight: normal; vertical-align: bottom; }
table.matrix th.col b { font-weight: 600; }
table.matrix td { border: 1px solid #fff; }
table.matrix td.cell { width: 18px; min-width: 18px; height: 16px; text-align: center;
  font-size: 10px; font-weight: bold; cursor: default; }
table.matrix td.id { font-family: ui-monospace, Menlo, Consolas, monospace; padding: 0 8px 0 2px;
  white-space: nowrap; }
table.matrix td.exp { font-family: ui-monospace, monospace; color: #666; padding: 0 6px;
  white-space: nowrap; }
table.matrix tr.area th { text-align: left; background: #eef1f5; padding: 4px 6px;
  border-top: 2px solid #9aa5b5; }
table.matrix tr.collapsed td { color: #666; font-style: italic; padding: 2px 6px;
  background: #fafafa; }
table.matrix tr:hover td.id { background: #fff4c2; }
.o-accepted { background: #5cb85c; } .o-rejected { background: #2f7f73; color: #fff; }
.o-either_accepted { background: #b5e09c; } .o-either_rejected { background: #9fd0c8; }
.o-rejected_valid { background: #f3ca2a; } .o-accepted_invalid { background: #f08a24; }
.o-value_mismatch { background: #a066c9; color: #fff; }
.o-crash { background: #d9302c; color: #fff; }
.o-timeout { background: #7a4b2a; color: #fff; } .o-oom { background: #1f1f1f; color: #fff; }
.o-skipped { background: #dcdcdc; color: #555; }
td.xf, .swatch.xf { background-image: repeating-linear-gradient(45deg, rgba(255,255,255,.55) 0 2px,
  transparent 2px 5px); }
td.stale { outline: 2px solid #d9302c; outline-offset: -2px; }
button { font: inherit; padding: 3px 10px; margin-right: .6em; }
input[type=search] { font: inherit; padding: 2px 6px; width: 16em; }
table.list td.v { font-family: ui-monospace, monospace; max-width: 36em; overflow-wrap: anywhere; }
[hidden] { display: none !important; }
"""

SCRIPT = """
(function () {
  var full = document.getElementById('matrix'), pruned = document.getElementById('matrix-pruned');
  var button = document.getElementById('toggle-pruned'), filter = document.getElementById('filter');
  var status = document.getElementById('matrix-status');
  function visibleRows(table) {
    return table.querySelectorAll('tr[data-case]:not([hidden])').length;
  }
  function show(prune) {
    full.hidden = prune; pruned.hidden = !prune;
    button.textContent = prune ? 'Show all rows' : 'Prune identical rows';
    button.setAttribute('aria-pressed', prune ? 'true' : 'false');
    var table = prune ? pruned : full;
    status.textContent = visibleRows(table) + ' rows shown' + (prune ? ', ' +
      pruned.getAttribute('data-collapsed-total') + ' identical rows collapsed' : '');
  }
  button.addEventListener('click', function () {
    var prune = full.hidden === false;
    history.replaceState(null, '', prune ? '#pruned' : '#matrix-section');
    show(prune);
  });
  filter.addEventListener('input', function () {
    var text = filter.value.trim().toLowerCase();
    [full, pruned].forEach(function (table) {
      table.querySelectorAll('tr[data-case]').forEach(function (row) {
        row.hidden = text !== '' && row.getAttribute('data-case').indexOf(text) < 0;
      });
    });
    show(full.hidden);
  });
  window.addEventListener('hashchange', function () {
    if (location.hash === '#pruned') {
      show(true); document.getElementById('matrix-section').scrollIntoView();
    }
  });
  show(location.hash === '#pruned');
  if (location.hash === '#pruned') document.getElementById('matrix-section').scrollIntoView();
  document.body.setAttribute('data-ready', '1');
})();
"""


def _e(value):
    return html.escape(str(value), quote=True)


def _value(value, width=300):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width] + " ..."


def _shown(value, missing):
    """A differing value as HTML: JSON (strings quoted), a missing one in italics."""
    if missing:
        return "<i>(missing)</i>"
    return _e(_value(json.dumps(value, ensure_ascii=False)))


def _ratio(bucket):
    if not bucket["total"]:
        return "-"
    return f"{bucket['passed']}/{bucket['total']}"


def _scores(doc):
    parts = ['<section id="scores"><h2>Scores</h2>']
    counts = (("accepted_invalid", "should have rejected"),
              ("rejected_valid", "should have accepted"), ("crash", "crashes"),
              ("timeout", "timeouts"), ("oom", "OOM"), ("value_mismatch", "value mismatches"))
    for profile in doc["options"]["profiles"]:
        rows = [s for s in doc["scores"] if s["profile"] == profile]
        if not rows:
            continue
        heading = (f"Profile {_e(profile)}" if profile not in ("data", "model") else
                   "Data check <small>(column data: llama.cpp's tensor data check on the data "
                   "cases)</small>" if profile == "data" else
                   "Model check <small>(column model: llama.cpp's model loader on the model "
                   "and split cases)</small>")
        parts.append(f'<h3>{heading}</h3>'
                     f'<table class="scores" data-profile="{_e(profile)}">'
                     '<tr><th>parser</th><th>level</th><th>score</th><th>required</th>'
                     '<th>recommended</th>' + "".join(f"<th>{_e(t)}</th>" for _, t in counts)
                     + "<th>xfail</th><th>skipped</th></tr>")
        for score in rows:
            percent = f" ({100 * score['passed'] / score['total']:.0f}%)" if score["total"] else ""
            level = _e(score["level"]) + (' <span title="capped at the highest level the parser '
                                          'declares">(cap)</span>' if score["level_capped"] else "")
            cells = [f'<td>{_e(score["parser"])}</td>', f"<td>{level}</td>",
                     f'<td class="num">{_ratio(score)}{percent}</td>',
                     f'<td class="num">{_ratio(score["required"])}</td>',
                     f'<td class="num">{_ratio(score["recommended"])}</td>']
            for key, _ in counts:
                value = score["counts"][key]
                cells.append(f'<td class="num{" bad" if value else ""}">{value}</td>')
            cells += [f'<td class="num">{score["xfail"]}</td>',
                      f'<td class="num">{score["skipped"]}</td>']
            parts.append(f'<tr data-score="{_e(score["parser"])}">' + "".join(cells) + "</tr>")
        parts.append("</table>")
        if profile == "data" and doc["options"].get("without_data"):
            parts.append('<p class="meta">No data column (they do not declare the data check): '
                         + _e(", ".join(doc["options"]["without_data"])) + "</p>")
        if profile == "model" and doc["options"].get("without_model"):
            parts.append('<p class="meta">No model column (they do not declare the model '
                         'check): ' + _e(", ".join(doc["options"]["without_model"])) + "</p>")
    parts.append("</section>")
    return "".join(parts)


def _legend():
    items = []
    for outcome, title, mark in LEGEND:
        items.append(f'<span><i class="swatch o-{outcome}">{_e(mark)}</i>{_e(title)}</span>')
    items.append('<span><i class="swatch o-crash xf">x</i>expected failure (listed)</span>')
    items.append('<span><i class="swatch o-accepted" style="outline:2px solid #d9302c;'
                 'outline-offset:-2px">!</i>stale entry</span>')
    return '<div class="legend">' + "".join(items) + "</div>"


def _cell_title(case_id, column, record):
    parts = [f"{case_id}: {column['parser']} ({column['profile']}, {record['level']})",
             TITLES.get(record["outcome"], record["outcome"])]
    if record["status"] == "xfail":
        parts.append("expected failure" + (f": {record['xfail_reason']}"
                                           if record["xfail_reason"] else ""))
    if record["status"] == "stale":
        parts.append(f"stale entry: {record['stale']}")
    if record["detail"]:
        parts.append(_value(record["detail"], 400))
    facts = []
    if record["exit"] is not None:
        facts.append(f"exit {record['exit']}")
    if record["signal"]:
        facts.append(record["signal"])
    if record["duration_s"] is not None:
        facts.append(f"{record['duration_s']:.3f} s")
    if record["peak_rss_bytes"]:
        facts.append(f"peak {format_size(record['peak_rss_bytes'])}")
    if facts:
        parts.append(", ".join(facts))
    return "\n".join(parts)


def _matrix_rows(doc, columns, cell_of, pruned):
    cases_by_area = {}
    for case in doc["cases"]:
        cases_by_area.setdefault(case["area"] or "other", []).append(case)
    width = 2 + len(columns)
    rows, collapsed_total = [], 0
    for area in sorted(cases_by_area, key=area_key):
        cases = cases_by_area[area]
        rows.append(f'<tr class="area" data-area="{_e(area)}"><th colspan="{width}">'
                    f'{_e(area)} <small>({len(cases)} cases)</small></th></tr>')
        collapsed = 0
        for case in cases:
            cells = [cell_of.get((case["id"], c["parser"], c["profile"])) for c in columns]
            if pruned and _uniform(columns, cells):
                collapsed += 1
                continue
            # "-": no verdict in that column (the data column of a case without data)
            expected = " ".join({"accept": "A", "reject": "R", "either": "E"}.get(
                case["expected"].get(p), "-") for p in doc["options"]["profiles"])
            out = [f'<tr data-case="{_e(case["id"])}" data-area="{_e(area)}">',
                   f'<td class="id" title="{_e(case.get("rule") or "")}">{_e(case["id"])}</td>',
                   '<td class="exp" title="expected: '
                   + _e(", ".join(f"{p} {case['expected'].get(p) or '-'}"
                                  for p in doc["options"]["profiles"]))
                   + f'">{_e(expected)}</td>']
            for column, record in zip(columns, cells):
                key = f'{column["parser"]}/{column["profile"]}'
                if record is None:
                    out.append(f'<td class="cell" data-column="{_e(key)}" data-outcome="none"></td>')
                    continue
                classes = ["cell", "o-" + record["outcome"]]
                mark = MARKS.get(record["outcome"], "?")
                if record["status"] == "xfail":
                    classes.append("xf")
                    mark = "x"
                elif record["status"] == "stale":
                    classes.append("stale")
                    mark = "!"
                out.append(f'<td class="{" ".join(classes)}" data-column="{_e(key)}" '
                           f'data-outcome="{_e(record["outcome"])}" data-status="{_e(record["status"])}" '
                           f'title="{_e(_cell_title(case["id"], column, record))}">{_e(mark)}</td>')
            rows.append("".join(out) + "</tr>")
        if pruned and collapsed:
            rows.append(f'<tr class="collapsed" data-area="{_e(area)}" data-collapsed="{collapsed}">'
                        f'<td colspan="{width}">{collapsed} of {len(cases)} rows collapsed: every '
                        'parser has the same outcome, profile by profile</td></tr>')
        collapsed_total += collapsed
    return rows, collapsed_total


def _uniform(columns, cells):
    by_profile = {}
    for column, record in zip(columns, cells):
        by_profile.setdefault(column["profile"], set()).add(record["outcome"] if record else None)
    return all(len(outcomes) == 1 for outcomes in by_profile.values())


def _matrix(doc):
    columns = doc["columns"]
    cell_of = {(r["case"], r["parser"], r["profile"]): r for r in doc["results"]}
    head = ['<tr><th class="col">case</th><th class="col" title="expected verdicts: '
            + _e(", ".join(doc["options"]["profiles"])) + '">expected</th>']
    for column in columns:
        key = f'{column["parser"]}/{column["profile"]}'
        head.append(f'<th class="col" data-column="{_e(key)}" title="{_e(key)} at {_e(column["level"])}">'
                    f'<b>{_e(column["parser"])}</b> {_e(column["profile"])}</th>')
    head.append("</tr>")
    head = "<thead>" + "".join(head) + "</thead>"
    full_rows, _ = _matrix_rows(doc, columns, cell_of, pruned=False)
    pruned_rows, collapsed = _matrix_rows(doc, columns, cell_of, pruned=True)
    return ('<section id="matrix-section"><h2>Matrix</h2>'
            '<p class="meta">Rows are cases grouped by area; columns are parser and profile. '
            'Expected verdicts: A accept, R reject, E either, per profile ('
            + _e(", ".join(doc["options"]["profiles"])) + '). Hover a cell for the detail.</p>'
            + _legend()
            + '<p><button id="toggle-pruned" type="button">Prune identical rows</button>'
            '<input id="filter" type="search" placeholder="filter case ids" '
            'aria-label="filter case ids"> '
            '<span id="matrix-status" class="meta"></span></p>'
            f'<table id="matrix" class="matrix" data-rows="{len(doc["cases"])}" '
            f'data-columns="{len(columns)}">' + head + "<tbody>" + "".join(full_rows)
            + "</tbody></table>"
            f'<table id="matrix-pruned" class="matrix" hidden data-collapsed-total="{collapsed}" '
            f'data-columns="{len(columns)}">' + head + "<tbody>" + "".join(pruned_rows)
            + "</tbody></table></section>")


def _diffs(doc):
    mismatches = [r for r in doc["results"] if r["diff"]]
    parts = ['<section id="diffs"><h2>Value differences</h2>']
    if not mismatches:
        parts.append('<p class="meta">No value mismatches.</p></section>')
        return "".join(parts)
    parts.append(f'<p class="meta">{len(mismatches)} value mismatches: the first differing key or '
                 'element of each, against the canonical output.</p>'
                 '<table class="list" id="diff-table"><tr><th>case</th><th>parser</th>'
                 '<th>profile</th><th>path</th><th>expected</th><th>actual</th></tr>')
    for record in mismatches:
        diff = record["diff"]
        expected = _shown(diff["expected"], diff.get("missing") == "expected")
        actual = _shown(diff["actual"], diff.get("missing") == "actual")
        xf = " (expected failure)" if record["status"] == "xfail" else ""
        parts.append(f'<tr data-diff="{_e(record["case"])}" data-column="{_e(record["parser"])}/'
                     f'{_e(record["profile"])}"><td>{_e(record["case"])}</td>'
                     f'<td>{_e(record["parser"])}{_e(xf)}</td><td>{_e(record["profile"])}</td>'
                     f'<td class="v">{_e(diff["path"])}</td><td class="v">{expected}</td>'
                     f'<td class="v">{actual}</td></tr>')
    parts.append("</table></section>")
    return "".join(parts)


def _parsers(doc):
    parts = ['<section id="parsers"><h2>Parsers</h2><table class="list"><tr><th>parser</th>'
             '<th>profiles</th><th>level</th><th>declared</th><th>mode</th><th>command</th></tr>']
    for parser in doc["parsers"]:
        caps = parser["capabilities"] or {}
        declared = (f'levels {" ".join(caps.get("levels", []))}; versions '
                    f'{" ".join(caps.get("gguf_versions", []))}; {" ".join(caps.get("endianness", []))}'
                    f' endian{"; data check" if caps.get("data") else ""}'
                    f'{"; model check" if caps.get("model") else ""}'
                    f' ({parser["capabilities_source"]})')
        parts.append(f'<tr><td>{_e(parser["name"])}<br><small>{_e(parser.get("description") or "")}'
                     f'</small></td><td>{_e(" ".join(parser["profiles"]))}</td>'
                     f'<td>{_e(parser["level"])}</td><td>{_e(declared)}</td>'
                     f'<td>{"batch" if parser["batch"] else "one-shot"}</td>'
                     f'<td class="v">{_e(" ".join(parser["command"]))}</td></tr>')
    parts.append("</table>")
    for entry in doc["unavailable_parsers"]:
        parts.append(f'<p class="meta">Not available: {_e(entry["name"])}: '
                     f'{_e(entry["reason"])}</p>')
    if doc["unavailable_cases"]:
        parts.append(f'<p class="meta">{len(doc["unavailable_cases"])} cases unavailable (not '
                     'counted): ' + _e(", ".join(c["id"] for c in doc["unavailable_cases"])) + "</p>")
    parts.append("</section>")
    return "".join(parts)


def render(doc):
    options, totals = doc["options"], doc["totals"]
    cap = format_size(options["memory_cap_bytes"]) if options["memory_cap_bytes"] else "none"
    title = f"GGUF conformance results: suite {doc.get('suite_version')}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{CSS}</style></head>"
            '<body data-ready="0">'
            f"<h1>{_e(title)}</h1>"
            f'<p class="meta">{_e(doc.get("suite"))} {_e(doc.get("suite_version"))}, runner '
            f'{_e(doc["runner_version"])}, {_e(doc["date"])}; level {_e(options["level"])}, '
            f'timeout {options["timeout_s"]:g} s (hostile {options["hostile_timeout_s"]:g} s, big '
            f'{options.get("big_timeout_s", options["timeout_s"]):g} s), '
            f'memory cap {_e(cap)}.</p>'
            f'<p class="meta" id="totals">{totals["passed"]} passed, {totals["failed"]} failed, '
            f'{totals["xfail"]} expected failures, {totals["skipped"]} skipped, '
            f'{len(doc["cases"])} cases, {len(doc["columns"])} parser/profile columns.</p>'
            '<nav><a href="#scores">Scores</a><a href="#matrix-section">Matrix</a>'
            '<a href="#pruned">Pruned matrix</a><a href="#diffs">Value differences</a>'
            '<a href="#parsers">Parsers</a></nav>'
            + _scores(doc) + _matrix(doc) + _diffs(doc) + _parsers(doc)
            + f"<script>{SCRIPT}</script></body></html>\n")

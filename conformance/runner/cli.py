"""conformance/run: options, the run as a whole, the console report."""
import argparse
import datetime
import os
import queue
import shutil
import signal
import sys
import tempfile
import threading
import time

from . import SetupError, VERSION
from . import execute, judge, limits, registry, results, suite, xfail
from .compare import LEVELS, MISSING

DESCRIPTION = """\
Runs GGUF parsers (adapters) on the conformance suite and scores them per profile.

A parser author runs their own adapter with:
  conformance/run --adapter 'python3 my_adapter.py'

Output: one line per unexpected failure, `FAIL parser profile case outcome: detail`, a score
line per parser and profile, and last `N passed, N failed`. Exit status 0 when nothing failed
unexpectedly and no expected-failure entry is stale, 1 otherwise, 2 for a usage or setup
error."""

EPILOG = """\
timeouts: hostile cases get --hostile-timeout (default 2 s) when it is below --timeout.
memory: RLIMIT_DATA plus a watch of the resident memory of the adapter's process tree
  (runner/limits.py); 0 = no cap.
expected failures: <expected-failures dir>/<parser>.<profile>.txt (README.md there).
Docs: conformance/README.md (the suite), conformance/adapters/PROTOCOL.md (the adapter
  protocol), docs/dump.md (the canonical JSON)."""


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def size(text):
    try:
        return limits.parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def level(text):
    upper = text.upper()
    if upper.isdigit():
        upper = "L" + upper
    if upper not in LEVELS:
        raise argparse.ArgumentTypeError(f"not a level: {text!r} (L0, L1, L2 or L3)")
    return upper


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def build_arguments(default_suite):
    parser = argparse.ArgumentParser(
        prog="conformance/run", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add = parser.add_argument
    add("--parser", action="append", default=[], metavar="NAME",
        help="a parser of the registry (repeatable; default: all that are available, or none "
             "when --adapter is given)")
    add("--adapter", action="append", default=[], metavar="'CMD ARGS'",
        help="an ad-hoc adapter not in the registry, scored in both profiles (repeatable)")
    add("--name", action="append", default=[], metavar="NAME",
        help="the name of the --adapter of the same position (default: its --capabilities "
             "name, else its file name)")
    add("--run", action="append", default=[], metavar="GLOB",
        help="only cases whose id matches (repeatable)")
    add("--skip", action="append", default=[], metavar="GLOB",
        help="not the cases whose id matches (repeatable)")
    add("--profile", action="append", choices=registry.COLUMNS, default=[],
        help="spec, llama.cpp, data (llama.cpp's tensor data check on the data cases) or "
             "model (llama.cpp's model loader on the model and split cases), the last two for "
             "the parsers that declare them (repeatable; default all four)")
    add("--level", type=level, default="L2",
        help="L0 verdicts, L1 header values, L2 metadata and tensor infos (default), L3 data "
             "hashes; each parser is capped at its highest declared level")
    add("-j", "--jobs", type=positive_int, default=cpu_count(), metavar="N",
        help="parallel adapter processes (default: the number of CPUs, %(default)s)")
    add("--timeout", type=positive_float, default=5.0, metavar="S",
        help="seconds per case (default 5)")
    add("--hostile-timeout", type=positive_float, default=2.0, metavar="S",
        help="seconds per case tagged hostile (default 2, at most --timeout)")
    add("--big-timeout", type=positive_float, default=30.0, metavar="S",
        help="seconds per case tagged big, the real files of up to 16 MB (default 30, at "
             "least --timeout): a pure-Python reader needs 10 s for one")
    add("--memory", type=size, default=1 << 30, metavar="SIZE",
        help="memory cap per adapter process, bytes or K/M/G (default 1G; 0 = none)")
    add("--no-batch", action="store_true", help="run batch-mode parsers one-shot")
    add("--json", metavar="FILE", help="write the results as JSON to FILE (- = stdout; the "
        "report then goes to stderr)")
    add("--results", metavar="DIR", help="write results.json, summary.md and index.html to DIR")
    add("--fix", action="store_true",
        help="rewrite the expected-failure lists of the parsers and profiles that ran")
    add("--expected-failures", metavar="DIR",
        help="the expected-failure lists (default: SUITE/expected-failures)")
    add("--suite", metavar="DIR", default=default_suite,
        help="the suite directory: manifest.json, cases/, expected/, adapters/ (default: "
             "%(default)s)")
    add("--root", metavar="DIR", help="{root}, the repository (default: the suite's parent)")
    add("--deps", metavar="DIR", help="{deps} (default: ROOT/.deps/conformance)")
    add("--build", metavar="DIR", help="{build}, the CMake build directory (default: "
        "ROOT/build/dev)")
    add("--list", action="store_true", help="list the parsers and whether they are available")
    add("--version", action="version", version=f"conformance runner {VERSION}")
    return parser


def diff_record(diff):
    """A value difference as written: a missing side is null and named by "missing"."""
    if not diff:
        return None
    path, expected, actual = diff
    missing = "expected" if expected is MISSING else "actual" if actual is MISSING else None
    return {"path": path, "expected": None if missing == "expected" else expected,
            "actual": None if missing == "actual" else actual, "missing": missing}


class Reporter:
    """The console: report lines to out (stdout, or stderr under --json -), progress to
    stderr when it is a terminal."""

    def __init__(self, out):
        self.out = out
        self.tty = sys.stderr.isatty()
        self.lock = threading.Lock()
        self.progress_shown = False

    def line(self, text):
        self.clear()
        print(text.replace("\n", " "), file=self.out, flush=True)

    def progress(self, done, total, label):
        if not self.tty:
            return
        with self.lock:
            width = shutil.get_terminal_size((80, 20)).columns - 1
            text = f"[{done}/{total}] {label}"
            sys.stderr.write("\r" + text[:width].ljust(width))
            sys.stderr.flush()
            self.progress_shown = True

    def clear(self):
        if self.progress_shown:
            with self.lock:
                sys.stderr.write("\r" + " " * (shutil.get_terminal_size((80, 20)).columns - 1)
                                 + "\r")
                sys.stderr.flush()
                self.progress_shown = False


class Run:
    def __init__(self, args):
        self.args = args
        suite_dir = os.path.abspath(args.suite)
        root = os.path.abspath(args.root) if args.root else os.path.dirname(suite_dir)
        self.places = suite.Places(
            suite_dir, root,
            os.path.abspath(args.deps) if args.deps else os.path.join(root, ".deps", "conformance"),
            os.path.abspath(args.build) if args.build else os.path.join(root, "build", "dev"))
        self.xfail_dir = os.path.abspath(args.expected_failures) if args.expected_failures \
            else os.path.join(suite_dir, "expected-failures")
        self.profiles = [p for p in registry.COLUMNS if not args.profile or p in args.profile]
        self.without_data = []       # parsers that do not declare the data check
        self.without_model = []      # parsers that do not declare the model check
        self.reporter = Reporter(sys.stderr if args.json == "-" else sys.stdout)

    # --- parsers -------------------------------------------------------------------------

    def choose_parsers(self):
        args = self.args
        registry_path = os.path.join(self.places.adapters, "parsers.json")
        known = []
        if args.parser or not args.adapter:
            known = registry.load_registry(registry_path, self.places)
        names = [parser.name for parser in known]
        for name in args.parser:
            if name not in names:
                raise SetupError(f"--parser {name}: not in {registry_path} (known: "
                                 f"{', '.join(names) or 'none'})")
        chosen = [p for p in known if p.name in args.parser] if args.parser else \
            ([] if args.adapter else known)
        if len(args.name) > len(args.adapter):
            raise SetupError("--name without a matching --adapter")
        for number, command in enumerate(args.adapter):
            chosen.append(registry.adhoc_parser(
                command, args.name[number] if number < len(args.name) else None))
        self.unavailable_parsers = []
        available = []
        for parser in chosen:
            parser.profiles = [p for p in parser.profiles if p in self.profiles]
            # the data and model columns are added once the capabilities say whether the parser
            # has them
            if not parser.profiles and not any(p in self.profiles for p in registry.EXTRA):
                continue
            registry.check_available(parser)
            if parser.unavailable:
                self.unavailable_parsers.append({"name": parser.name or parser.argv[0],
                                                 "reason": parser.unavailable})
            else:
                available.append(parser)
        for parser in available:
            if not parser.batch or args.no_batch:
                parser.batch = False
        return available

    def capabilities(self, parsers):
        threads = [threading.Thread(target=registry.query_capabilities,
                                    args=(parser, self.args.memory)) for parser in parsers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen = set()
        for parser in parsers:
            if parser.name in seen:
                raise SetupError(f"two parsers are named {parser.name}: give the ad-hoc adapter "
                                 "another one with --name")
            seen.add(parser.name)
            if self.args.no_batch:
                parser.batch = False
            top = parser.max_level()
            asked = self.args.level
            parser.level = min(asked, top, key=LEVELS.index)
            parser.capped = LEVELS.index(top) < LEVELS.index(asked)
            for column, without in ((registry.DATA, self.without_data),
                                    (registry.MODEL, self.without_model)):
                if column in self.profiles:
                    if parser.declares(column):
                        parser.profiles.append(column)
                    else:
                        without.append(parser.name)
        return [parser for parser in parsers if parser.profiles]

    # --- the run -------------------------------------------------------------------------

    def timeout_of(self, case):
        if "hostile" in case.tags:
            return min(self.args.hostile_timeout, self.args.timeout)
        if "big" in case.tags:
            return max(self.args.big_timeout, self.args.timeout)
        return self.args.timeout

    def execute(self, parsers, cases, workdir):
        copies = suite.CaseCopies(os.path.join(workdir, "cases"))
        os.makedirs(copies.directory)
        warmup = os.path.join(workdir, "warmup.gguf")
        with open(warmup, "wb") as handle:
            handle.write(execute.WARMUP_GGUF)
        os.chmod(warmup, 0o444)
        startup_timeout = max(10.0, 2 * self.args.timeout)

        # a job: (case, parser, profiles, extra); extra is None for the two profiles, else the
        # column: data jobs ask `ADAPTER --data FILE` for the column "data" of a data case,
        # model jobs `ADAPTER --model FILE` for the column "model" of a model or split case
        records, jobs = [], []
        for case in cases:
            users = 0
            for parser in parsers:
                columns = [p for p in parser.profiles
                           if (p != registry.DATA or case.data is not None) and
                           (p != registry.MODEL or case.model is not None)]
                profiles = [p for p in columns if not judge.is_skipped(case, parser, p)]
                for profile in columns:
                    if profile not in profiles:
                        records.append(self.record(case, parser, profile, None, "skipped", None,
                                                   "skipped: the parser does not declare GGUF "
                                                   f"version {case.gguf_version} / "
                                                   f"{case.endianness} endian"))
                groups = [([p for p in profiles if p not in registry.EXTRA], None)]
                groups += [([p for p in profiles if p == extra], extra) for extra in registry.EXTRA]
                for group, extra in groups:
                    if group:
                        jobs.append((case, parser, group, extra))
                        users += 1
            copies.register(case, users)

        work = queue.Queue()
        for job in jobs:
            work.put(job)
        lock = threading.Lock()
        done = [0]
        failure = []

        def worker():
            batches = {}
            try:
                while not failure:
                    try:
                        case, parser, profiles, extra = work.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        path = copies.acquire(case)
                        new = []
                        if extra:
                            # the data and model checks are always asked one-shot
                            raw = execute.run_once(parser.argv + ["--" + extra], path,
                                                   self.timeout_of(case), self.args.memory)
                            outcome, diff, detail = (judge.judge_data if extra == registry.DATA
                                                     else judge.judge_model)(case, raw)
                            new.append(self.record(case, parser, extra, raw, outcome,
                                                   diff, detail))
                        else:
                            raw = self.run_adapter(parser, path, self.timeout_of(case), batches,
                                                   warmup, startup_timeout)
                            canonical = copies.canonical(case) if raw.kind == "accepted" \
                                else None
                            for profile in profiles:
                                outcome, diff, detail = judge.judge(case, profile, raw,
                                                                    parser.level, canonical)
                                new.append(self.record(case, parser, profile, raw, outcome,
                                                       diff, detail))
                    finally:
                        copies.release(case)
                    with lock:
                        records.extend(new)
                        done[0] += 1
                        count = done[0]
                    self.reporter.progress(count, len(jobs), f"{parser.name} {case.id}"
                                           + (f" --{extra}" if extra else ""))
            except BaseException as error:          # reported by the main thread
                failure.append(error)
            finally:
                for batch in batches.values():
                    batch.close()

        threads = [threading.Thread(target=worker, daemon=True)
                   for _ in range(max(1, min(self.args.jobs, len(jobs))))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.reporter.clear()
        if failure:
            raise failure[0]
        return records

    def run_adapter(self, parser, path, timeout, batches, warmup, startup_timeout):
        if not parser.batch:
            return execute.run_once(parser.argv, path, timeout, self.args.memory)
        batch = batches.get(parser.name)
        grace = 0.0
        if batch is None or not batch.alive():
            batch = batches[parser.name] = execute.BatchProcess(parser.argv, self.args.memory)
            started = False
            if parser.warmup_ok is not False:
                started = batch.start(warmup, startup_timeout)
                if parser.warmup_ok is None:
                    parser.warmup_ok = started
            if not started:
                batch.start(None, startup_timeout)
                grace = startup_timeout
        return batch.ask(path, timeout, grace)

    def record(self, case, parser, profile, raw, outcome, diff, detail):
        verdict = None
        if raw is not None and raw.kind in ("accepted", "rejected"):
            verdict = "accept" if raw.kind == "accepted" else "reject"
        return {"case": case.id, "parser": parser.name, "profile": profile,
                "level": parser.level, "expected": case.expected.get(profile),
                "verdict": verdict, "outcome": outcome, "status": None,
                "exit": raw.exit if raw else None, "signal": raw.signal if raw else None,
                "duration_s": round(raw.duration, 4) if raw else None,
                "peak_rss_bytes": raw.peak_rss if raw else None,
                "error": raw.error if raw else None, "detail": detail,
                "diff": diff_record(diff),
                "xfail_reason": None, "stale": None,
                "case_level": case.level, "area": case.area}

    # --- expected failures ---------------------------------------------------------------

    def load_lists(self, parsers):
        return {(parser.name, profile): xfail.read_list(
                    xfail.list_path(self.xfail_dir, parser.name, profile))
                for parser in parsers for profile in parser.profiles}

    def apply_lists(self, records, lists, manifest_ids):
        for record in records:
            entry = lists[(record["parser"], record["profile"])].get(record["case"])
            record["status"], record["stale"] = xfail.status(record["outcome"], entry)
            record["xfail_reason"] = entry.reason if entry else None
        stale_entries = []
        for (parser, profile), entries in lists.items():
            for case_id in entries:
                if case_id not in manifest_ids:
                    stale_entries.append({"parser": parser, "profile": profile, "case": case_id,
                                          "detail": "no such case in the manifest"})
        return stale_entries

    def fix_lists(self, records, lists, order):
        ran, outcomes = {}, {}
        for record in records:
            key = (record["parser"], record["profile"])
            ran.setdefault(key, set()).add(record["case"])
            outcomes.setdefault(key, {})[record["case"]] = record["outcome"]
        for key, entries in lists.items():
            path = xfail.list_path(self.xfail_dir, *key)
            added, removed = xfail.write_list(path, key[0], key[1], entries, ran.get(key, set()),
                                              outcomes.get(key, {}), order)
            if added or removed:
                self.reporter.line(f"fixed {os.path.relpath(path)}: +{added} -{removed} "
                                   "entries")
            lists[key] = xfail.read_list(path)

    # --- report --------------------------------------------------------------------------

    def report(self, doc, parsers):
        line = self.reporter.line
        for record in doc["results"]:
            if record["status"] == "fail":
                line(f"FAIL {record['parser']} {record['profile']} {record['case']} "
                     f"{record['outcome']}: {record['detail']}")
            elif record["status"] == "stale":
                line(f"FAIL {record['parser']} {record['profile']} {record['case']} "
                     f"stale_xfail: {record['stale']} ({record['detail']})")
        for entry in doc["stale_entries"]:
            line(f"FAIL {entry['parser']} {entry['profile']} {entry['case']} stale_xfail: "
                 f"{entry['detail']}")
        by_name = {parser.name: parser for parser in parsers}
        for score in doc["scores"]:
            parser = by_name[score["parser"]]
            level_text = score["level"]
            if score["level_capped"]:
                level_text += f" (capped: its highest declared level; {self.args.level} asked)"
            counts = ", ".join(f"{name} {value}" for name, value in score["counts"].items())
            req, rec = score["required"], score["recommended"]
            line(f"score {score['parser']} {score['profile']} {level_text}: "
                 f"{score['passed']}/{score['total']} passed (required {req['passed']}/"
                 f"{req['total']}, recommended {rec['passed']}/{rec['total']}); {counts}; "
                 f"xfail {score['xfail']}, skipped {score['skipped']}"
                 + ("" if parser.capabilities_source == "adapter" else
                    f"; capabilities: {parser.capabilities_source}"))
        if doc["options"].get("without_data"):
            line(f"data column skipped for {', '.join(doc['options']['without_data'])}: no "
                 '"data": true in their capabilities')
        if doc["options"].get("without_model"):
            line(f"model column skipped for {', '.join(doc['options']['without_model'])}: no "
                 '"model": true in their capabilities')
        totals = doc["totals"]
        line(f"{totals['xfail']} expected failures, {totals['skipped']} skipped, "
             f"{totals['stale']} stale, unavailable: {totals['unavailable_cases']} cases, "
             f"{totals['unavailable_parsers']} parsers")
        line(f"{totals['passed']} passed, {totals['failed']} failed")


def main(argv=None, default_suite=None):
    default_suite = default_suite or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = build_arguments(os.path.relpath(default_suite)).parse_args(argv)

    # deeply nested adapter output (a 1000-deep nested array) must still parse
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    threading.stack_size(256 << 20)

    def terminate(number, frame):
        raise SystemExit(128 + number)
    signal.signal(signal.SIGTERM, terminate)
    try:
        return run(args)
    except SetupError as error:
        sys.stdout.flush()
        print(f"conformance/run: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("conformance/run: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    finally:
        execute.kill_all()


def run(args):
    started = time.monotonic()
    session = Run(args)
    line = session.reporter.line
    parsers = session.choose_parsers()
    if args.list:
        for parser in parsers:
            line(f"{parser.name}: available, profiles {' '.join(parser.profiles)}")
        for entry in session.unavailable_parsers:
            line(f"{entry['name']}: not available: {entry['reason']}")
        return 0
    for entry in session.unavailable_parsers:
        line(f"skip parser {entry['name']}: not available: {entry['reason']}")
    if not parsers:
        raise SetupError("no parser to run (see the lines above, --parser, --adapter, "
                         "--profile)")
    manifest, all_cases = suite.load_manifest(
        os.path.join(session.places.suite, "manifest.json"), session.places)
    cases = suite.select(all_cases, args.run, args.skip)
    if not cases:
        raise SetupError("no case matches --run/--skip")
    suite.check_files(cases, session.places)
    unavailable_cases = [{"id": case.id, "reason": case.unavailable}
                         for case in cases if case.unavailable]
    cases = [case for case in cases if not case.unavailable]
    if unavailable_cases:
        kinds = sorted({"their fetched files are missing (run conformance/setup)"
                        if entry["reason"].startswith("missing ") else entry["reason"]
                        for entry in unavailable_cases})
        line(f"unavailable: {len(unavailable_cases)} case(s) not run, {'; '.join(kinds)}: "
             f"{' '.join(entry['id'] for entry in unavailable_cases)}")
    parsers = session.capabilities(parsers)
    if not parsers:
        asked = [p for p in session.profiles if p in registry.EXTRA]
        raise SetupError("none of the parsers declares the "
                         + " or ".join(f"{p} check (\"{p}\": true)" for p in asked)
                         + (", the only column asked for" if len(asked) == 1 else
                            ", the only columns asked for")
                         + " (" + ", ".join(f"--profile {p}" for p in asked) + ")")
    lists = session.load_lists(parsers)

    with tempfile.TemporaryDirectory(prefix="gguf-conformance-") as workdir:
        records = session.execute(parsers, cases, workdir)
    order = {case.id: number for number, case in enumerate(all_cases)}
    parser_order = {parser.name: number for number, parser in enumerate(parsers)}
    records.sort(key=lambda r: (parser_order[r["parser"]], registry.COLUMNS.index(r["profile"]),
                                order[r["case"]]))
    manifest_ids = set(order)
    if args.fix:
        session.fix_lists(records, lists, order)
    stale_entries = session.apply_lists(records, lists, manifest_ids)

    meta = {"suite": manifest.get("suite"), "suite_version": manifest.get("suite_version"),
            "runner_version": VERSION,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "options": {"level": args.level, "profiles": session.profiles,
                        "timeout_s": args.timeout,
                        "hostile_timeout_s": min(args.hostile_timeout, args.timeout),
                        "big_timeout_s": max(args.big_timeout, args.timeout),
                        "memory_cap_bytes": args.memory, "jobs": args.jobs,
                        "run": args.run, "skip": args.skip,
                        "without_data": session.without_data,
                        "without_model": session.without_model,
                        "duration_s": None}}
    meta["options"]["duration_s"] = round(time.monotonic() - started, 2)
    doc = results.document(meta, parsers, session.unavailable_parsers, cases,
                           unavailable_cases, records, stale_entries, session.profiles)
    write_outputs(args, doc)
    session.report(doc, parsers)
    return 1 if doc["totals"]["failed"] else 0


def write_outputs(args, doc):
    from . import html, markdown
    if args.json == "-":
        results.dump(doc, sys.stdout)
        sys.stdout.flush()
    elif args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as handle:
                results.dump(doc, handle)
        except OSError as error:
            raise SetupError(f"cannot write {args.json}: {error.strerror}") from None
    if args.results:
        try:
            os.makedirs(args.results, exist_ok=True)
            with open(os.path.join(args.results, "results.json"), "w", encoding="utf-8") as handle:
                results.dump(doc, handle)
            with open(os.path.join(args.results, "summary.md"), "w", encoding="utf-8") as handle:
                handle.write(markdown.render(doc))
            with open(os.path.join(args.results, "index.html"), "w", encoding="utf-8") as handle:
                handle.write(html.render(doc))
        except OSError as error:
            raise SetupError(f"cannot write the results to {args.results}: "
                             f"{error.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())

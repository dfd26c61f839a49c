#!/usr/bin/python3
"""Tests of the conformance runner (conformance/run, conformance/runner/): each test builds a
small suite in a temporary directory (manifest, case files, canonical outputs, a registry)
and runs toy adapters on it, written here too: one that answers from the manifest (a
perfect parser of one profile) and can be told, per case, to crash, hang, allocate 3 GiB,
fill shared memory, print wrong values or bad JSON, or die in batch mode.

Run: /usr/bin/python3 conformance/tests/test_runner.py [-v]
"""
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.dirname(HERE)
RUN = os.path.join(CONFORMANCE, "run")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
sys.path.insert(0, CONFORMANCE)

from runner import compare, execute, limits, xfail  # noqa: E402

TOY = r'''
import json, mmap, os, signal, stat, sys, time
args = sys.argv[1:]
target = args.pop()
opts = {}
for arg in args:
    key, _, value = arg[2:].partition("=")
    opts[key] = value
def ids(key):
    return set(filter(None, opts.get(key, "").split(",")))
suite = opts["suite"]
profile = opts.get("profile", "spec")
levels = opts.get("levels", "L0,L1,L2,L3").split(",")
cases = {c["id"]: c for c in json.load(open(os.path.join(suite, "manifest.json")))["cases"]}

def data_answer(case_id):
    """`--data FILE`: the declared data verdict, unless told otherwise."""
    data = cases[case_id].get("data") or {"verdict": "accept"}
    reject = (data["verdict"] == "reject") != (case_id in ids("data-flip-on"))
    if not reject:
        return {"ok": True}, 0
    tensor = "other" if case_id in ids("data-tensor-on") else data.get("tensor") or "t"
    return {"ok": False, "error": "toy data check fails", "tensor": tensor}, 1

def model_answer(case_id, path):
    """`--model FILE`: the declared model verdict, unless told otherwise; with --model-shards
    a split case is rejected unless its shards are beside the file under their names."""
    if case_id in ids("model-crash-on"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if case_id in ids("model-hang-on"):
        while True:
            pass
    model = cases[case_id].get("model") or {"verdict": "accept"}
    reject = (model["verdict"] == "reject") != (case_id in ids("model-flip-on"))
    if "model-shards" in opts:
        here = os.path.dirname(path)
        for shard in cases[case_id].get("shards") or []:
            if not os.path.isfile(os.path.join(here, os.path.basename(shard["file"]))):
                return {"ok": False, "error": "missing shard " + shard["file"]}, 1
    if not reject:
        return {"ok": True}, 0
    return {"ok": False, "error": "llama.cpp aborted: toy assertion"}, 1

def case_of(path):
    name = os.path.basename(path)
    for case in cases.values():
        if os.path.basename(case["file"]) == name:
            return case["id"]
    return name[:-len(".gguf")]

def answer(path, batch):
    case_id = case_of(path)
    if "model" in opts:
        return model_answer(case_id, path)
    if "data" in opts:
        if case_id in ids("data-crash-on"):
            os.kill(os.getpid(), signal.SIGSEGV)
        return data_answer(case_id)
    if case_id in ids("crash-on"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if case_id in ids("exit-on"):
        sys.stdout.flush()
        os._exit(3)
    if case_id in ids("hang-on"):  # a parser in an endless loop: it uses CPU
        while True:
            pass
    if case_id in ids("block-on"):  # a parser blocked for good: it uses none
        time.sleep(600)
    if case_id in ids("alloc-on"):
        block = bytearray(3 << 30)
        block[-1] = 1
    if case_id in ids("shm-on"):
        shared = mmap.mmap(-1, 768 << 20)
        for offset in range(0, len(shared), 4096):
            shared[offset] = 1
        time.sleep(30)
    if case_id in ids("garbage-on"):
        return "this is not json", 0
    if case_id in ids("inconsistent-on"):
        return {"ok": True}, 1
    if case_id in ids("digest-on"):
        import hashlib
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()
        info = os.stat(path)
        return {"ok": False, "error": json.dumps({"sha256": digest, "size": info.st_size,
                                                  "allocated": info.st_blocks * 512})}, 1
    if case_id in ids("inspect-on"):
        mode = oct(stat.S_IMODE(os.stat(path).st_mode))
        return {"ok": False, "error": json.dumps({"mode": mode, "path": path})}, 1
    case = cases.get(case_id)
    if case is None:
        return {"ok": False, "error": "not a case"}, 1
    if case["expected"][profile] in ("accept", "either"):
        canonical = case["canonical"] and os.path.join(suite, case["canonical"])
        if not canonical:
            canonical = os.path.join(opts["deps"], "expected", case_id + ".json")
        doc = json.load(open(canonical))
        if case_id in ids("wrong-on"):
            doc["metadata"][-1]["value"][1] = "42"
        if case_id in ids("wrong-hash-on"):
            doc["tensors"][0]["data_sha256"] = "0" * 64
        if "float-long" in opts:
            for entry in doc.get("metadata", []):
                if entry.get("element_type") == "float32":
                    entry["value"] = [repr(float(v)) if v not in ("nan", "-0") else v
                                      for v in entry["value"]]
        if "L2" not in levels:
            doc = {k: doc[k] for k in ("ok", "version", "endianness", "alignment",
                                       "tensor_count", "kv_count")}
        return doc, 0
    return {"ok": False, "error": "toy rejects"}, 1

if target == "--capabilities":
    if "no-capabilities" in opts:
        print("usage: toy FILE", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"name": opts.get("name", "toy"), "version": "1", "levels": levels,
                      "gguf_versions": ["2", "3"],
                      "endianness": opts.get("endianness", "little").split(","),
                      "batch": "batch" in opts, "data": "data-capable" in opts,
                      "model": "model-capable" in opts}))
elif target == "--batch":
    if opts.get("spawn-log"):
        with open(opts["spawn-log"], "a") as log:
            log.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        doc, code = answer(line.rstrip("\n"), True)
        if isinstance(doc, dict):
            doc["exit"] = code
            doc = json.dumps(doc)
        print(doc, flush=True)
else:
    doc, code = answer(target, False)
    print(doc if isinstance(doc, str) else json.dumps(doc))
    sys.exit(code)
'''

NODE_TOY = r'''
const path = process.argv[process.argv.length - 1];
if (path === "--capabilities") { console.log(JSON.stringify({name: "node-toy"})); }
else if (path.endsWith("n_count_huge.gguf")) {
  const b = Buffer.alloc(3 * 2 ** 30, 1); console.log(b.length); }
else { console.log(JSON.stringify({ok: false, error: "node toy rejects"})); process.exitCode = 1; }
'''


def canonical_doc(metadata_floats=("0", "0.1", "-1.5"), alignment="32", endianness="little",
                  with_tensor=True):
    doc = {"ok": True, "version": "3", "endianness": endianness, "alignment": alignment,
           "tensor_count": "1" if with_tensor else "0", "kv_count": "2"}
    if with_tensor:
        doc["data_offset"] = "160"
    doc["metadata"] = [
        {"key": "general.architecture", "type": "string", "value": "llama"},
        {"key": "tokenizer.ggml.scores", "type": "array", "element_type": "float32",
         "value": list(metadata_floats)}]
    doc["tensors"] = [{"name": "w", "type": "F32", "type_id": "0", "dims": ["2", "3"],
                       "offset": "0", "data_sha256": "ab" * 32}] if with_tensor else []
    return doc


# id, expected spec, expected llama.cpp, area, tags, endianness, level
CASES = [
    ("y_header_minimal", "accept", "accept", "header", [], "little", "required"),
    ("y_kv_float", "accept", "accept", "kv", [], "little", "required"),
    ("n_header_bad_magic", "reject", "reject", "header", [], "little", "required"),
    ("n_count_huge", "reject", "reject", "count", ["hostile"], "little", "required"),
    ("i_align_24", "accept", "reject", "align", [], "little", "recommended"),
    ("i_kv_either", "either", "accept", "kv", [], "little", "required"),
    ("y_endian_big", "accept", "accept", "endian", [], "big", "required"),
]


class Suite:
    """A suite in a temporary directory."""

    def __init__(self, directory, cases=CASES):
        self.dir = directory
        self.toy = os.path.join(directory, "toy.py")
        with open(self.toy, "w") as handle:
            handle.write(TOY)
        for sub in ("cases", "expected", "adapters", "expected-failures"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        self.deps = os.path.join(directory, "deps")
        self.build = os.path.join(directory, "build")
        self.manifest = {"suite": "gguf-conformance", "suite_version": "1.0",
                         "profiles": ["spec", "llama.cpp"], "cases": []}
        for case_id, spec, llama, area, tags, endianness, level in cases:
            self.add_case(case_id, spec, llama, area, tags, endianness, level)
        self.parsers = []

    def add_case(self, case_id, spec, llama, area, tags=(), endianness="little",
                 level="required", doc=None, data=None, model=None, shards=0):
        # a split case (shards > 1): cases/<id>-00001-of-0000N.gguf and the other shards
        names = [f"{case_id}-{k:05d}-of-{shards:05d}.gguf" for k in range(1, shards + 1)] \
            if shards else [case_id + ".gguf"]
        content = b"GGUF" + case_id.encode() + b"\0" * 16
        with open(os.path.join(self.dir, "cases", names[0]), "wb") as handle:
            handle.write(content)
        entry = {"id": case_id, "file": f"cases/{names[0]}", "fetched": False,
                 "sha256": hashlib.sha256(content).hexdigest(), "size": len(content),
                 "expected": {"spec": spec, "llama.cpp": llama}, "area": area,
                 "rule": f"test case {case_id}", "error_class": None, "level": level,
                 "tags": list(tags), "since": "1.0", "gguf_version": "3",
                 "endianness": endianness, "canonical": None, "canonical_sha256": None}
        if data is not None:
            entry["data"] = data
        if model is not None:
            entry["model"] = model
        if shards:
            entry["shards"] = []
            for number, name in enumerate(names[1:], 2):
                shard = b"GGUF" + f"{case_id} shard {number}".encode()
                with open(os.path.join(self.dir, "cases", name), "wb") as handle:
                    handle.write(shard)
                entry["shards"].append({"file": f"cases/{name}",
                                        "sha256": hashlib.sha256(shard).hexdigest(),
                                        "size": len(shard)})
        if "accept" in (spec, llama) or "either" in (spec, llama):
            doc = doc or canonical_doc(endianness=endianness,
                                       with_tensor=case_id != "y_header_minimal")
            text = (json.dumps(doc, separators=(",", ":")) + "\n").encode()
            entry["canonical"] = f"expected/{case_id}.json"
            entry["canonical_sha256"] = hashlib.sha256(text).hexdigest()
            with open(os.path.join(self.dir, entry["canonical"]), "wb") as handle:
                handle.write(text)
        self.manifest["cases"].append(entry)
        return entry

    def toy_command(self, *options, profile="spec"):
        return [PYTHON, self.toy, f"--suite={self.dir}", f"--profile={profile}",
                f"--deps={self.deps}"] + list(options)

    def add_parser(self, name, *options, profile="spec", profiles=None, batch=False, **extra):
        entry = {"name": name, "command": self.toy_command(*options, profile=profile),
                 "profiles": profiles or [profile], "batch": batch,
                 "description": f"toy {name}"}
        entry.update(extra)
        self.parsers.append(entry)

    def write(self):
        with open(os.path.join(self.dir, "manifest.json"), "w") as handle:
            json.dump(self.manifest, handle, indent=1)
        with open(os.path.join(self.dir, "adapters", "parsers.json"), "w") as handle:
            json.dump(self.parsers, handle, indent=1)

    def run(self, *args, timeout=120):
        self.write()
        out = os.path.join(self.dir, "out.json")
        if os.path.exists(out):
            os.unlink(out)
        done = subprocess.run([PYTHON, RUN, "--suite", self.dir, "--root", self.dir,
                               "--deps", self.deps, "--build", self.build, "--json", out]
                              + list(args), capture_output=True, text=True, timeout=timeout)
        result = None
        if os.path.exists(out):
            with open(out) as handle:
                result = json.load(handle)
        return done.returncode, done.stdout, done.stderr, result

    def xfail_path(self, parser, profile):
        return os.path.join(self.dir, "expected-failures", f"{parser}.{profile}.txt")


def outcome_of(result, case, parser=None, profile="spec"):
    for record in result["results"]:
        if record["case"] == case and record["profile"] == profile and \
                (parser is None or record["parser"] == parser):
            return record
    raise AssertionError(f"no result for {case} {parser} {profile}")


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="runner-test-")
        self.suite = Suite(self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertLastLine(self, stdout, passed, failed):
        lines = stdout.rstrip("\n").split("\n")
        self.assertEqual(lines[-1], f"{passed} passed, {failed} failed", stdout)


class Outcomes(RunnerTest):
    def test_perfect_parser_passes_and_skips_big_endian(self):
        self.suite.add_parser("toy")
        code, out, err, result = self.suite.run("-j", "2")
        self.assertEqual(code, 0, out + err)
        # 7 cases in spec; the big-endian accept is skipped (the toy declares little only)
        self.assertLastLine(out, 6, 0)
        self.assertEqual(outcome_of(result, "y_endian_big")["outcome"], "skipped")
        self.assertEqual(outcome_of(result, "i_kv_either")["outcome"], "either_accepted")
        self.assertEqual(outcome_of(result, "n_count_huge")["outcome"], "rejected")
        self.assertEqual(outcome_of(result, "y_kv_float")["outcome"], "accepted")
        self.assertEqual(err, "")                       # no progress when not a tty
        self.assertRegex(out, r"score toy spec L2: 6/6 passed \(required 5/5, recommended 1/1\)")
        score = result["scores"][0]
        self.assertEqual((score["passed"], score["total"], score["skipped"]), (6, 6, 1))

    def test_wrong_profile_verdicts(self):
        self.suite.add_parser("toy", profile="llama.cpp", profiles=["spec"])
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1)
        self.assertEqual(outcome_of(result, "i_align_24")["outcome"], "rejected_valid")
        self.assertIn("FAIL toy spec i_align_24 rejected_valid: rejected: toy rejects", out)
        counts = result["scores"][0]["counts"]
        self.assertEqual(counts["rejected_valid"], 1)

    def test_crash_is_a_failure_never_a_rejection(self):
        self.suite.add_parser("toy", "--crash-on=n_header_bad_magic,y_kv_float")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1)
        record = outcome_of(result, "n_header_bad_magic")
        self.assertEqual(record["outcome"], "crash")
        self.assertEqual(record["signal"], "SIGSEGV")
        self.assertIn("FAIL toy spec n_header_bad_magic crash: killed by SIGSEGV", out)
        self.assertLastLine(out, 4, 2)

    def test_bad_stdout_and_exit_status_are_crashes(self):
        self.suite.add_parser("toy", "--garbage-on=y_kv_float",
                              "--inconsistent-on=n_header_bad_magic", "--exit-on=n_count_huge")
        _, out, _, result = self.suite.run()
        self.assertIn("stdout is not JSON", outcome_of(result, "y_kv_float")["detail"])
        self.assertIn('"ok": true with exit status 1',
                      outcome_of(result, "n_header_bad_magic")["detail"])
        record = outcome_of(result, "n_count_huge")
        self.assertEqual((record["outcome"], record["exit"]), ("crash", 3))

    def test_hang_times_out_and_hostile_cases_get_less(self):
        self.suite.add_parser("toy", "--hang-on=y_kv_float,n_count_huge")
        code, out, _, result = self.suite.run("--timeout", "1.5", "--hostile-timeout", "0.4",
                                              "-j", "2")
        self.assertEqual(code, 1)
        normal, hostile = outcome_of(result, "y_kv_float"), outcome_of(result, "n_count_huge")
        self.assertEqual((normal["outcome"], hostile["outcome"]), ("timeout", "timeout"))
        # Not before the timeout: both the clock and the parser's CPU time must pass it (how long
        # after depends on the machine's load, so no upper bound is asserted).
        self.assertGreaterEqual(normal["duration_s"], 1.5)
        self.assertGreaterEqual(hostile["duration_s"], 0.4)
        self.assertIn("FAIL toy spec n_count_huge timeout: no answer within 0.4 s", out)

    def test_a_blocked_parser_times_out_at_the_hang_limit(self):
        # It uses no CPU, so only the clock ends it, at HANG_FACTOR times the timeout.
        self.suite.add_parser("toy", "--block-on=y_kv_float")
        code, _, _, result = self.suite.run("--timeout", "0.2", "-j", "2")
        self.assertEqual(code, 1)
        record = outcome_of(result, "y_kv_float")
        self.assertEqual(record["outcome"], "timeout")
        self.assertGreaterEqual(record["duration_s"], 0.2 * execute.HANG_FACTOR)

    def test_cpu_time_of_a_process_tree(self):
        # A child that spins for a while: the tree's CPU time grows, and a gone pid has none.
        child = subprocess.Popen([PYTHON, "-c", "import time\nend = time.process_time() + 0.5\n"
                                  "while time.process_time() < end: pass\ntime.sleep(30)"])
        try:
            while limits.tree_cpu(child.pid) < 0.3:
                self.assertIsNone(child.poll())
            self.assertGreaterEqual(limits.tree_cpu(child.pid), 0.3)
        finally:
            child.kill()
            child.wait()
        self.assertEqual(limits.tree_cpu(child.pid), 0)

    def test_memory_cap_rlimit_gives_oom(self):
        self.suite.add_parser("toy", "--alloc-on=n_count_huge")
        code, out, _, result = self.suite.run("--memory", "256M")
        record = outcome_of(result, "n_count_huge")
        self.assertEqual(record["outcome"], "oom", record)
        self.assertIn("MemoryError", record["detail"])
        self.assertEqual(code, 1)
        self.assertEqual(result["scores"][0]["counts"]["oom"], 1)

    def test_memory_cap_resident_watch_gives_oom(self):
        # shared anonymous memory is not counted by RLIMIT_DATA: the resident watch kills it
        self.suite.add_parser("toy", "--shm-on=n_count_huge")
        _, _, _, result = self.suite.run("--memory", "300M", "--timeout", "20",
                                         "--hostile-timeout", "20")
        record = outcome_of(result, "n_count_huge")
        self.assertEqual(record["outcome"], "oom", record)
        self.assertIn("over the cap 300 MiB (killed)", record["detail"])
        self.assertGreater(record["peak_rss_bytes"], 300 << 20)

    @unittest.skipUnless(shutil.which("node"), "node is not installed")
    def test_memory_cap_works_for_node(self):
        script = os.path.join(self.tmp, "toy.js")
        with open(script, "w") as handle:
            handle.write(NODE_TOY)
        self.suite.write()
        code, out, err, result = self.suite.run(
            "--adapter", f"node {script}", "--run", "n_*", "--memory", "512M")
        record = outcome_of(result, "n_count_huge", "node-toy")
        self.assertEqual(record["outcome"], "oom", record)
        self.assertIn("Array buffer allocation failed", record["detail"])
        # node itself runs under the cap: the other case is a clean rejection
        self.assertEqual(outcome_of(result, "n_header_bad_magic", "node-toy")["outcome"],
                         "rejected")

    def test_wrong_value_reports_first_differing_path(self):
        self.suite.add_parser("toy", "--wrong-on=y_kv_float")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1)
        record = outcome_of(result, "y_kv_float")
        self.assertEqual(record["outcome"], "value_mismatch")
        self.assertEqual(record["diff"], {"path": "metadata[1].value[1]", "expected": "0.1",
                                          "actual": "42", "missing": None})
        self.assertIn('FAIL toy spec y_kv_float value_mismatch: metadata[1].value[1]: '
                      'expected "0.1", got "42"', out)

    def test_float_values_compared_at_their_width(self):
        # "0.10000000149011612" is float32 0.1 printed as a double: equal at float32
        self.suite.add_parser("toy", "--float-long=1")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 0, out)
        self.assertEqual(outcome_of(result, "y_kv_float")["outcome"], "accepted")

    def test_private_read_only_copy(self):
        self.suite.add_parser("toy", "--inspect-on=n_header_bad_magic")
        _, _, _, result = self.suite.run()
        seen = json.loads(outcome_of(result, "n_header_bad_magic")["error"])
        self.assertEqual(seen["mode"], "0o444")
        self.assertFalse(seen["path"].startswith(self.tmp), seen["path"])
        self.assertTrue(seen["path"].endswith("/n_header_bad_magic.gguf"))


class Levels(RunnerTest):
    def test_level_trimming_and_cap(self):
        # a toy that declares L0-L1 and prints only L1 fields: capped at L1, passes
        self.suite.add_parser("toy", "--levels=L0,L1")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 0, out)
        self.assertIn("score toy spec L1 (capped: its highest declared level; L2 asked)", out)
        self.assertEqual(result["parsers"][0]["level"], "L1")
        self.assertTrue(result["parsers"][0]["level_capped"])
        self.assertEqual(outcome_of(result, "y_kv_float")["level"], "L1")

    def test_metadata_differences_only_count_from_l2(self):
        self.suite.add_parser("toy", "--wrong-on=y_kv_float")
        self.assertEqual(self.suite.run("--level", "L1")[0], 0)
        self.assertEqual(self.suite.run("--level", "L0")[0], 0)
        self.assertEqual(self.suite.run("--level", "L2")[0], 1)

    def test_data_hashes_only_at_l3(self):
        self.suite.add_parser("toy", "--wrong-hash-on=y_kv_float")
        self.assertEqual(self.suite.run("--level", "L2")[0], 0)
        code, out, _, result = self.suite.run("--level", "L3")
        self.assertEqual(code, 1)
        self.assertEqual(outcome_of(result, "y_kv_float")["diff"]["path"],
                         "tensors[0].data_sha256")

    def test_default_capabilities_when_adapter_has_none(self):
        self.suite.add_parser("toy", "--no-capabilities=1")
        code, out, _, result = self.suite.run("--level", "L3")
        parser = result["parsers"][0]
        self.assertEqual(parser["capabilities"]["levels"], ["L0", "L1", "L2"])
        self.assertEqual(parser["level"], "L2")
        self.assertIn("capabilities: default", out)
        self.assertEqual(outcome_of(result, "y_endian_big")["outcome"], "skipped")

    def test_registry_capabilities_override(self):
        self.suite.add_parser("toy", "--no-capabilities=1", capabilities={
            "levels": ["L0", "L1", "L2", "L3"], "endianness": ["little", "big"]})
        _, _, _, result = self.suite.run("--level", "L3")
        self.assertEqual(result["parsers"][0]["level"], "L3")
        self.assertEqual(outcome_of(result, "y_endian_big")["outcome"], "accepted")


class DataColumn(RunnerTest):
    """The column "data": `ADAPTER --data FILE` on the data cases, for parsers that declare
    "data": true."""

    def setUp(self):
        super().setUp()
        self.suite.add_case("y_data_good", "accept", "accept", "data",
                            data={"verdict": "accept", "tensor": None, "rule": "finite",
                                  "error_class": None})
        self.suite.add_case("y_data_nan", "accept", "accept", "data",
                            data={"verdict": "reject", "tensor": "w.bad", "rule": "a NaN",
                                  "error_class": "non_finite"})

    def test_only_declaring_parsers_get_the_column_on_data_cases_only(self):
        self.suite.add_parser("checker", "--data-capable=1", profiles=["spec", "llama.cpp"])
        self.suite.add_parser("reader", profiles=["spec", "llama.cpp"])
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1, out)      # the toy in its spec form fails llama.cpp verdicts
        self.assertEqual({(c["parser"], c["profile"]) for c in result["columns"]},
                         {("checker", "spec"), ("checker", "llama.cpp"), ("checker", "data"),
                          ("reader", "spec"), ("reader", "llama.cpp")})
        data = [r for r in result["results"] if r["profile"] == "data"]
        self.assertEqual({r["case"] for r in data}, {"y_data_good", "y_data_nan"})
        self.assertEqual(outcome_of(result, "y_data_good", "checker", "data")["outcome"],
                         "accepted")
        record = outcome_of(result, "y_data_nan", "checker", "data")
        self.assertEqual((record["outcome"], record["expected"], record["verdict"]),
                         ("rejected", "reject", "reject"))
        # the container verdicts of a data case are judged as usual
        self.assertEqual(outcome_of(result, "y_data_nan", "reader", "spec")["outcome"],
                         "accepted")
        self.assertIn('data column skipped for reader: no "data": true', out)
        self.assertRegex(out, r"score checker data L2: 2/2 passed")
        case = next(c for c in result["cases"] if c["id"] == "y_data_nan")
        self.assertEqual(case["expected"]["data"], "reject")
        self.assertNotIn("data", next(c for c in result["cases"] if c["id"] == "y_kv_float"))

    def test_wrong_verdicts_tensor_and_crash(self):
        self.suite.add_parser("checker", "--data-capable=1", "--data-flip-on=y_data_good",
                              "--data-tensor-on=y_data_nan", profiles=["spec"])
        code, out, _, result = self.suite.run("--profile", "data")
        self.assertEqual(code, 1)
        self.assertEqual({c["profile"] for c in result["columns"]}, {"data"})
        self.assertEqual(outcome_of(result, "y_data_good", profile="data")["outcome"],
                         "rejected_valid")
        record = outcome_of(result, "y_data_nan", profile="data")
        self.assertEqual(record["outcome"], "value_mismatch")
        self.assertEqual(record["diff"], {"path": "tensor", "expected": "w.bad",
                                          "actual": "other", "missing": None})
        self.assertIn("FAIL checker data y_data_nan value_mismatch: tensor: expected "
                      '"w.bad", got "other"', out)
        self.suite.parsers = []
        self.suite.add_parser("checker", "--data-capable=1", "--data-flip-on=y_data_nan",
                              "--data-crash-on=y_data_good", profiles=["spec"])
        _, _, _, result = self.suite.run("--profile", "data")
        self.assertEqual(outcome_of(result, "y_data_nan", profile="data")["outcome"],
                         "accepted_invalid")
        self.assertEqual(outcome_of(result, "y_data_good", profile="data")["outcome"], "crash")

    def test_lists_results_and_no_declaring_parser(self):
        self.suite.add_parser("checker", "--data-capable=1", "--data-flip-on=y_data_good",
                              profiles=["spec"])
        self.suite.run("--fix")
        with open(self.suite.xfail_path("checker", "data")) as handle:
            self.assertIn("y_data_good rejected_valid", handle.read())
        out_dir = os.path.join(self.tmp, "results")
        code, out, _, result = self.suite.run("--results", out_dir)
        self.assertEqual(code, 0, out)
        self.assertEqual(outcome_of(result, "y_data_good", profile="data")["status"], "xfail")
        with open(os.path.join(out_dir, "summary.md")) as handle:
            self.assertIn("## Data check", handle.read())
        with open(os.path.join(out_dir, "index.html")) as handle:
            page = handle.read()
        self.assertIn('data-column="checker/data"', page)
        self.suite.parsers = []
        self.suite.add_parser("reader", profiles=["spec"])
        code, _, err, _ = self.suite.run("--profile", "data")
        self.assertEqual(code, 2)
        self.assertIn("none of the parsers declares the data check", err)

    def test_a_bad_data_field_is_a_setup_error(self):
        self.suite.add_parser("checker", "--data-capable=1")
        self.suite.manifest["cases"][-1]["data"]["verdict"] = "either"
        code, _, err, _ = self.suite.run()
        self.assertEqual(code, 2)
        self.assertIn('"data" needs a "verdict" accept or reject', err)


class ModelColumn(RunnerTest):
    """The column "model": `ADAPTER --model FILE` on the model and split cases, for parsers
    that declare "model": true."""

    def setUp(self):
        super().setUp()
        self.suite.add_case("y_model_good", "accept", "accept", "model",
                            model={"verdict": "accept", "rule": "loads", "error_class": None})
        self.suite.add_case("y_model_bad", "accept", "accept", "model",
                            model={"verdict": "reject", "rule": "aborts",
                                   "error_class": "dup_token"})
        self.suite.add_case("y_split_good", "accept", "accept", "split", shards=3,
                            model={"verdict": "accept", "rule": "a set", "error_class": None})

    def test_only_declaring_parsers_get_the_column_on_model_cases_only(self):
        self.suite.add_parser("loader", "--model-capable=1", "--model-shards=1",
                              profiles=["spec", "llama.cpp"])
        self.suite.add_parser("reader", "--data-capable=1", profiles=["spec", "llama.cpp"])
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1, out)      # the toy in its spec form fails llama.cpp verdicts
        self.assertEqual({(c["parser"], c["profile"]) for c in result["columns"]},
                         {("loader", "spec"), ("loader", "llama.cpp"), ("loader", "model"),
                          ("reader", "spec"), ("reader", "llama.cpp")})
        model = [r for r in result["results"] if r["profile"] == "model"]
        self.assertEqual({r["case"] for r in model}, {"y_model_good", "y_model_bad",
                                                      "y_split_good"})
        self.assertEqual(outcome_of(result, "y_model_good", "loader", "model")["outcome"],
                         "accepted")
        # the shards were beside the first one, under their own names
        self.assertEqual(outcome_of(result, "y_split_good", "loader", "model")["outcome"],
                         "accepted")
        record = outcome_of(result, "y_model_bad", "loader", "model")
        self.assertEqual((record["outcome"], record["expected"], record["verdict"]),
                         ("rejected", "reject", "reject"))
        self.assertIn("llama.cpp aborted", record["detail"])
        # the container verdicts of a model case are judged as usual, a split case's first
        # shard by its file name
        self.assertEqual(outcome_of(result, "y_split_good", "loader", "spec")["outcome"],
                         "accepted")
        self.assertIn('model column skipped for reader: no "model": true', out)
        self.assertRegex(out, r"score loader model L2: 3/3 passed")
        case = next(c for c in result["cases"] if c["id"] == "y_split_good")
        self.assertEqual(case["expected"]["model"], "accept")
        self.assertEqual(case["shards"], ["y_split_good-00002-of-00003.gguf",
                                          "y_split_good-00003-of-00003.gguf"])
        self.assertNotIn("model", next(c for c in result["cases"] if c["id"] == "y_kv_float"))

    def test_every_failing_outcome(self):
        self.suite.add_parser("loader", "--model-capable=1",
                              "--model-flip-on=y_model_good,y_model_bad",
                              "--model-crash-on=y_split_good", profiles=["spec"])
        code, out, _, result = self.suite.run("--profile", "model")
        self.assertEqual(code, 1)
        self.assertEqual({c["profile"] for c in result["columns"]}, {"model"})
        self.assertEqual(outcome_of(result, "y_model_good", profile="model")["outcome"],
                         "rejected_valid")
        self.assertEqual(outcome_of(result, "y_model_bad", profile="model")["outcome"],
                         "accepted_invalid")
        self.assertEqual(outcome_of(result, "y_split_good", profile="model")["outcome"],
                         "crash")
        self.assertIn("FAIL loader model y_model_bad accepted_invalid", out)
        self.suite.parsers = []
        self.suite.add_parser("loader", "--model-capable=1", "--model-hang-on=y_model_good",
                              profiles=["spec"])
        _, _, _, result = self.suite.run("--profile", "model", "--timeout", "1")
        self.assertEqual(outcome_of(result, "y_model_good", profile="model")["outcome"],
                         "timeout")
        self.assertEqual(outcome_of(result, "y_model_bad", profile="model")["outcome"],
                         "rejected")

    def test_a_missing_shard_file_fails_the_loader_that_looks_for_it(self):
        # a shard the runner did not copy would be refused: the toy checks for them
        self.suite.add_parser("loader", "--model-capable=1", "--model-shards=1",
                              profiles=["spec"])
        os.unlink(os.path.join(self.tmp, "cases", "y_split_good-00003-of-00003.gguf"))
        code, _, err, _ = self.suite.run("--profile", "model")
        self.assertEqual(code, 2)
        self.assertIn("missing shard", err)

    def test_lists_results_and_no_declaring_parser(self):
        self.suite.add_parser("loader", "--model-capable=1", "--model-flip-on=y_model_good",
                              profiles=["spec"])
        self.suite.run("--fix")
        with open(self.suite.xfail_path("loader", "model")) as handle:
            self.assertIn("y_model_good rejected_valid", handle.read())
        out_dir = os.path.join(self.tmp, "results")
        code, out, _, result = self.suite.run("--results", out_dir)
        self.assertEqual(code, 0, out)
        self.assertEqual(outcome_of(result, "y_model_good", profile="model")["status"], "xfail")
        with open(os.path.join(out_dir, "summary.md")) as handle:
            self.assertIn("## Model check", handle.read())
        with open(os.path.join(out_dir, "index.html")) as handle:
            page = handle.read()
        self.assertIn('data-column="loader/model"', page)
        self.suite.parsers = []
        self.suite.add_parser("reader", profiles=["spec"])
        code, _, err, _ = self.suite.run("--profile", "model")
        self.assertEqual(code, 2)
        self.assertIn("none of the parsers declares the model check", err)

    def test_a_bad_model_field_is_a_setup_error(self):
        self.suite.add_parser("loader", "--model-capable=1")
        self.suite.manifest["cases"][-1]["model"]["verdict"] = "either"
        code, _, err, _ = self.suite.run()
        self.assertEqual(code, 2)
        self.assertIn('"model" needs a "verdict" accept or reject', err)
        self.suite.manifest["cases"][-1]["model"]["verdict"] = "accept"
        self.suite.manifest["cases"][-1]["expected"]["model"] = "accept"
        code, _, err, _ = self.suite.run()
        self.assertEqual(code, 2)
        self.assertIn("the model verdict belongs in", err)


class Batch(RunnerTest):
    def test_batch_restarts_after_crash_and_hang(self):
        log = os.path.join(self.tmp, "spawns.log")
        self.suite.add_parser("toy", "--batch=1", f"--spawn-log={log}",
                              "--exit-on=n_header_bad_magic", "--hang-on=y_kv_float",
                              batch=True)
        code, out, _, result = self.suite.run("-j", "1", "--timeout", "1")
        self.assertEqual(code, 1)
        self.assertEqual(outcome_of(result, "n_header_bad_magic")["outcome"], "crash")
        self.assertIn("batch process exited with status 3",
                      outcome_of(result, "n_header_bad_magic")["detail"])
        self.assertEqual(outcome_of(result, "y_kv_float")["outcome"], "timeout")
        for case in ("y_header_minimal", "n_count_huge", "i_align_24", "i_kv_either"):
            self.assertIn(outcome_of(result, case)["outcome"], ("accepted", "rejected",
                                                                "either_accepted"), case)
        with open(log) as handle:
            spawns = len(handle.read().split())
        self.assertEqual(spawns, 3)     # the first, after the hang, after the crash
        self.assertLastLine(out, 4, 2)

    def test_batch_oom_and_no_batch(self):
        self.suite.add_parser("toy", "--batch=1", "--alloc-on=n_count_huge", batch=True)
        _, _, _, result = self.suite.run("--memory", "256M")
        self.assertEqual(outcome_of(result, "n_count_huge")["outcome"], "oom")
        self.assertEqual(outcome_of(result, "i_align_24")["outcome"], "accepted")
        _, _, _, result = self.suite.run("--memory", "256M", "--no-batch")
        self.assertFalse(result["parsers"][0]["batch"])
        self.assertEqual(outcome_of(result, "n_count_huge")["outcome"], "oom")


class ExpectedFailures(RunnerTest):
    def write_list(self, text, parser="toy", profile="spec"):
        with open(self.suite.xfail_path(parser, profile), "w") as handle:
            handle.write(text)

    def test_listed_failure_is_xfail(self):
        self.suite.add_parser("toy", "--crash-on=n_header_bad_magic")
        self.write_list("# comment\n\nn_header_bad_magic crash  # segfaults on bad magic\n")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 0, out)
        record = outcome_of(result, "n_header_bad_magic")
        self.assertEqual((record["status"], record["xfail_reason"]),
                         ("xfail", "segfaults on bad magic"))
        self.assertLastLine(out, 5, 0)
        self.assertIn("1 expected failures", out)
        self.assertNotIn("FAIL", out)

    def test_an_entry_may_allow_several_outcomes(self):
        self.suite.add_parser("toy", "--crash-on=n_header_bad_magic")
        self.write_list("n_header_bad_magic timeout|crash  # load-dependent\n")
        code, out, _, result = self.suite.run("--fix")
        self.assertEqual(code, 0, out)
        self.assertEqual(outcome_of(result, "n_header_bad_magic")["status"], "xfail")
        with open(self.suite.xfail_path("toy", "spec")) as handle:  # --fix keeps it as written
            self.assertIn("n_header_bad_magic timeout|crash  # load-dependent", handle.read())
        self.write_list("n_header_bad_magic timeout|oom\n")
        code, out, _, _ = self.suite.run()
        self.assertEqual(code, 1)
        self.assertIn("stale_xfail: listed as timeout|oom, now crash", out)

    def test_stale_entries_fail_the_run(self):
        self.suite.add_parser("toy", "--crash-on=n_header_bad_magic")
        self.write_list("n_header_bad_magic timeout\ny_kv_float crash\nn_gone oom\n")
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 1)
        self.assertIn("FAIL toy spec n_header_bad_magic stale_xfail: listed as timeout, "
                      "now crash", out)
        self.assertIn("FAIL toy spec y_kv_float stale_xfail: listed as crash, now accepted", out)
        self.assertIn("FAIL toy spec n_gone stale_xfail: no such case in the manifest", out)
        self.assertLastLine(out, 4, 3)

    def test_fix_rewrites_lists(self):
        self.suite.add_parser("toy", "--crash-on=n_header_bad_magic,y_kv_float",
                              profiles=["spec", "llama.cpp"])
        self.write_list("n_header_bad_magic crash  # known segfault\n"
                        "y_header_minimal rejected_valid  # stale\n"
                        "i_kv_either crash  # not run below, kept\n"
                        "n_gone oom\n")
        code, out, _, _ = self.suite.run("--fix", "--skip", "i_kv_*")
        self.assertEqual(code, 0, out)
        with open(self.suite.xfail_path("toy", "spec")) as handle:
            lines = [line for line in handle.read().splitlines() if not line.startswith("#")]
        entries = [line.split("#")[0].split() for line in lines]
        self.assertEqual(entries, [["y_kv_float", "crash"], ["n_header_bad_magic", "crash"],
                                   ["i_kv_either", "crash"]])
        self.assertIn("# known segfault", lines[1])
        self.assertIn("# not run below, kept", lines[2])
        # the llama.cpp profile got a new list too: its i_align_24 is rejected_valid
        spec_llama = xfail.read_list(self.suite.xfail_path("toy", "llama.cpp"))
        self.assertEqual({k: v.outcome for k, v in spec_llama.items()},
                         {"y_kv_float": "crash", "n_header_bad_magic": "crash",
                          "i_align_24": "accepted_invalid"})
        code, out, _, _ = self.suite.run("--skip", "i_kv_*")
        self.assertEqual(code, 0, out)

    def test_list_file_name_of_a_scoped_parser(self):
        self.suite.add_parser("@scope/toy", "--crash-on=n_header_bad_magic")
        self.assertEqual(self.suite.run("--fix")[0], 0)
        path = os.path.join(self.tmp, "expected-failures", "@scope-toy.spec.txt")
        self.assertEqual(list(xfail.read_list(path)), ["n_header_bad_magic"])
        self.assertEqual(self.suite.run()[0], 0)

    def test_bad_list_is_a_setup_error(self):
        self.suite.add_parser("toy")
        self.write_list("n_header_bad_magic exploded\n")
        code, out, err, _ = self.suite.run()
        self.assertEqual(code, 2)
        self.assertIn("not a failing outcome", err)
        self.assertNotIn("Traceback", err)


class Selection(RunnerTest):
    def test_run_and_skip_globs(self):
        self.suite.add_parser("toy")
        _, _, _, result = self.suite.run("--run", "y_*", "--run", "n_header*", "--skip", "y_kv*")
        ran = {record["case"] for record in result["results"]}
        self.assertEqual(ran, {"y_header_minimal", "y_endian_big", "n_header_bad_magic"})
        code, _, err, _ = self.suite.run("--run", "nothing*")
        self.assertEqual(code, 2)
        self.assertIn("no case matches", err)

    def test_profiles_parsers_and_unavailable(self):
        self.suite.add_parser("spec-toy", profile="spec")
        self.suite.add_parser("llama-toy", profile="llama.cpp")
        self.suite.add_parser("missing", requires=[os.path.join(self.tmp, "nowhere")])
        code, out, _, result = self.suite.run()
        self.assertEqual(code, 0, out)
        self.assertIn("skip parser missing: not available: missing", out)
        self.assertEqual({(c["parser"], c["profile"]) for c in result["columns"]},
                         {("spec-toy", "spec"), ("llama-toy", "llama.cpp")})
        _, out, _, result = self.suite.run("--profile", "llama.cpp")
        self.assertEqual({c["parser"] for c in result["columns"]}, {"llama-toy"})
        _, out, _, result = self.suite.run("--parser", "spec-toy")
        self.assertEqual({c["parser"] for c in result["columns"]}, {"spec-toy"})
        code, _, err, _ = self.suite.run("--parser", "nope")
        self.assertEqual(code, 2)
        self.assertIn("--parser nope: not in", err)

    def test_adhoc_adapter_in_both_profiles(self):
        command = " ".join(self.suite.toy_command("--name=my-parser"))
        code, out, _, result = self.suite.run("--adapter", command)
        self.assertEqual({(c["parser"], c["profile"]) for c in result["columns"]},
                         {("my-parser", "spec"), ("my-parser", "llama.cpp")})
        self.assertEqual(outcome_of(result, "i_align_24", profile="llama.cpp")["outcome"],
                         "accepted_invalid")
        self.assertEqual(code, 1)
        _, _, _, result = self.suite.run("--adapter", command, "--name", "other")
        self.assertEqual(result["columns"][0]["parser"], "other")

    def test_usage_errors_exit_2_without_traceback(self):
        self.suite.add_parser("toy")
        self.suite.write()
        for args in (["--memory", "lots"], ["--level", "L9"], ["--timeout", "-1"],
                     ["--profile", "strict"], ["-j", "0"], ["--suite", "/nonexistent"]):
            done = subprocess.run([PYTHON, RUN, "--suite", self.tmp] + args,
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 2, args)
            self.assertNotIn("Traceback", done.stderr, args)
            self.assertTrue(done.stderr.strip(), args)

    def test_manifest_hash_mismatch_is_a_setup_error(self):
        self.suite.add_parser("toy")
        self.suite.manifest["cases"][0]["sha256"] = "0" * 64
        code, _, err, _ = self.suite.run()
        self.assertEqual(code, 2)
        self.assertIn("does not match the manifest's sha256", err)


class Fetched(RunnerTest):
    def fake_ggufcheck(self, doc):
        """{build}/validator/ggufcheck that prints doc for `dump --level 3 ... FILE`."""
        os.makedirs(os.path.join(self.suite.build, "validator"))
        path = os.path.join(self.suite.build, "validator", "ggufcheck")
        with open(os.path.join(self.tmp, "real.json"), "w") as handle:
            handle.write(json.dumps(doc, separators=(",", ":")) + "\n")
        with open(path, "w") as handle:
            handle.write(f"#!/bin/sh\ncat {self.tmp}/real.json\n")
        os.chmod(path, 0o755)
        with open(os.path.join(self.tmp, "real.json"), "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()

    def add_fetched(self, case_id, present, canonical_sha):
        models = os.path.join(self.suite.deps, "llama.cpp", "models")
        os.makedirs(models, exist_ok=True)
        data = b"GGUF real " + case_id.encode()
        if present:
            with open(os.path.join(models, case_id + ".gguf"), "wb") as handle:
                handle.write(data)
        self.suite.manifest["cases"].append({
            "id": case_id, "file": "{deps}/llama.cpp/models/" + case_id + ".gguf",
            "fetched": True, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
            "expected": {"spec": "accept", "llama.cpp": "accept"}, "area": "real",
            "rule": "real file", "error_class": None, "level": "required", "tags": ["big"],
            "since": "1.0", "gguf_version": "3", "endianness": "little", "canonical": None,
            "canonical_sha256": canonical_sha})

    def test_fetched_cases(self):
        sha = self.fake_ggufcheck(canonical_doc())
        self.add_fetched("y_real_here", True, sha)
        self.add_fetched("y_real_gone", False, sha)
        self.suite.add_parser("toy")
        code, out, _, result = self.suite.run("--run", "y_real_*")
        self.assertEqual(code, 0, out)
        self.assertIn("unavailable: 1 case(s) not run", out)
        self.assertIn("y_real_gone", out)
        self.assertEqual(outcome_of(result, "y_real_here")["outcome"], "accepted")
        self.assertEqual([c["id"] for c in result["unavailable_cases"]], ["y_real_gone"])
        self.assertTrue(os.path.exists(os.path.join(self.suite.deps, "expected",
                                                    "y_real_here.json")))
        self.assertLastLine(out, 1, 0)

    def test_fetched_canonical_mismatch_is_a_setup_error(self):
        self.fake_ggufcheck(canonical_doc())
        self.add_fetched("y_real_here", True, "0" * 64)
        self.suite.add_parser("toy")
        code, _, err, _ = self.suite.run("--run", "y_real_*")
        self.assertEqual(code, 2)
        self.assertIn("canonical output", err)
        self.assertNotIn("Traceback", err)


class Sparse(RunnerTest):
    SIZE = (8 << 20) + 7
    EXTENTS = [(0, b"GGUF head"), (8 << 20, b"tail\x01\x02\x03")]

    def add_sparse(self, sha=None, extents=None):
        content = bytearray(self.SIZE)
        for offset, data in self.EXTENTS:
            content[offset:offset + len(data)] = data
        self.suite.manifest["cases"].append({
            "id": "y_align_sparse", "file": "{deps}/generated/y_align_sparse.gguf",
            "fetched": False, "sha256": sha or hashlib.sha256(content).hexdigest(),
            "size": self.SIZE,
            "sparse": {"extents": extents if extents is not None else
                       [{"offset": offset, "hex": data.hex()} for offset, data in self.EXTENTS]},
            "expected": {"spec": "reject", "llama.cpp": "reject"}, "area": "align",
            "rule": "a sparse case", "error_class": "bad_layout", "level": "required",
            "tags": ["big"], "since": "1.0", "gguf_version": "3", "endianness": "little",
            "canonical": None, "canonical_sha256": None})
        return hashlib.sha256(content).hexdigest()

    def test_written_from_its_extents_and_copied_sparse(self):
        sha = self.add_sparse()
        self.suite.add_parser("toy", "--digest-on=y_align_sparse")
        code, out, err, result = self.suite.run("--run", "y_align_sparse")
        self.assertEqual(code, 0, out + err)
        generated = os.path.join(self.suite.deps, "generated", "y_align_sparse.gguf")
        self.assertEqual(os.path.getsize(generated), self.SIZE)
        self.assertLess(os.stat(generated).st_blocks * 512, 1 << 20)  # holes, not zeros
        seen = json.loads(outcome_of(result, "y_align_sparse")["error"])
        self.assertEqual(seen["sha256"], sha)  # the adapter's private copy has the same bytes
        self.assertEqual(seen["size"], self.SIZE)
        self.assertLess(seen["allocated"], 1 << 20)
        self.assertLastLine(out, 1, 0)

    def test_a_wrong_sha256_is_a_setup_error(self):
        self.add_sparse(sha="0" * 64)
        self.suite.add_parser("toy")
        code, _, err, _ = self.suite.run("--run", "y_align_sparse")
        self.assertEqual(code, 2)
        self.assertIn("does not match the manifest's sha256", err)
        self.assertNotIn("Traceback", err)

    def test_overlapping_or_outside_extents_are_a_setup_error(self):
        self.suite.add_parser("toy")
        for extents in ([{"offset": 4, "hex": "aabb"}, {"offset": 5, "hex": "cc"}],
                        [{"offset": self.SIZE - 1, "hex": "aabb"}],
                        [{"offset": 0, "hex": "zz"}], [{"offset": -1, "hex": "00"}]):
            with self.subTest(extents=extents):
                self.suite.manifest["cases"] = []
                self.add_sparse(extents=extents)
                code, _, err, _ = self.suite.run("--run", "y_align_sparse")
                self.assertEqual(code, 2, err)
                self.assertIn('"sparse" needs', err)
                self.assertNotIn("Traceback", err)


class Results(RunnerTest):
    def test_results_directory(self):
        self.suite.add_parser("toy", "--wrong-on=y_kv_float", "--crash-on=n_header_bad_magic",
                              profiles=["spec", "llama.cpp"])
        out_dir = os.path.join(self.tmp, "results")
        code, out, _, result = self.suite.run("--results", out_dir)
        self.assertEqual(sorted(os.listdir(out_dir)), ["index.html", "results.json", "summary.md"])
        with open(os.path.join(out_dir, "index.html")) as handle:
            page = handle.read()
        full = page[page.index('id="matrix"'):page.index('id="matrix-pruned"')]
        pruned = page[page.index('id="matrix-pruned"'):page.index('id="diffs"')]
        self.assertEqual(full.count('<tr data-case="'), len(result["cases"]))
        self.assertLessEqual(pruned.count('<tr data-case="'), len(result["cases"]))
        self.assertNotIn("http://", page.replace("http://www.w3.org", ""))
        self.assertIn('data-diff="y_kv_float"', page)
        with open(os.path.join(out_dir, "summary.md")) as handle:
            summary = handle.read()
        self.assertIn("## Profile spec", summary)
        self.assertIn("## By area", summary)
        self.assertIn("crash: `n_header_bad_magic`", summary)
        with open(os.path.join(out_dir, "results.json")) as handle:
            self.assertEqual(json.load(handle)["totals"], result["totals"])

    def test_json_to_stdout_moves_the_report_to_stderr(self):
        self.suite.add_parser("toy")
        self.suite.write()
        done = subprocess.run([PYTHON, RUN, "--suite", self.tmp, "--root", self.tmp,
                               "--json", "-"], capture_output=True, text=True)
        doc = json.loads(done.stdout)
        self.assertEqual(doc["totals"]["passed"], 6)
        self.assertTrue(done.stderr.rstrip().endswith("6 passed, 0 failed"))
        record = doc["results"][0]
        for key in ("case", "parser", "profile", "outcome", "expected", "verdict", "exit",
                    "duration_s", "peak_rss_bytes", "error", "diff", "status"):
            self.assertIn(key, record)


class Compare(unittest.TestCase):
    def test_floats_at_width(self):
        self.assertTrue(compare.float_equal("0.1", "0.10000000149011612", "float32"))
        self.assertFalse(compare.float_equal("0.1", "0.10000000149011612", "float64"))
        self.assertTrue(compare.float_equal("1", "1.0", "float64"))
        self.assertTrue(compare.float_equal("1e0", "1", "float32"))
        self.assertTrue(compare.float_equal("nan", "nan", "float32"))
        self.assertFalse(compare.float_equal("-0", "0", "float32"))
        self.assertFalse(compare.float_equal("-0", "0", "float64"))
        self.assertTrue(compare.float_equal("3.4028235e+38", "3.4028234663852886e+38", "float32"))
        self.assertTrue(compare.float_equal("inf", "3.5e38", "float32"))     # rounds to inf
        self.assertFalse(compare.float_equal("inf", "3.5e38", "float64"))
        self.assertFalse(compare.float_equal("1", "Infinity", "float32"))
        self.assertFalse(compare.float_equal("1", "1_0", "float32"))

    def test_integers_by_value(self):
        self.assertTrue(compare.integer_equal("7", "007"))
        self.assertFalse(compare.integer_equal("7", "7.0"))
        doc = canonical_doc()
        other = copy.deepcopy(doc)
        other["alignment"] = "0032"
        other["tensors"][0]["dims"] = ["02", "3"]
        self.assertIsNone(compare.compare(doc, other, "L3"))

    def test_paths(self):
        doc = canonical_doc()
        nested = copy.deepcopy(doc)
        nested["metadata"].append({"key": "x", "type": "array", "element_type": "array",
                                   "value": [{"type": "array", "element_type": "int8",
                                              "value": ["1", "-2"]}]})
        changed = copy.deepcopy(nested)
        changed["metadata"][2]["value"][0]["value"][1] = "2"
        self.assertEqual(compare.compare(nested, changed, "L2"),
                         ("metadata[2].value[0].value[1]", "-2", "2"))
        shorter = copy.deepcopy(doc)
        shorter["tensors"][0]["dims"].pop()
        self.assertEqual(compare.compare(doc, shorter, "L2"),
                         ("tensors[0].dims[1]", "3", compare.MISSING))
        extra = copy.deepcopy(doc)
        extra["metadata"][0]["raw"] = "2"
        self.assertEqual(compare.compare(doc, extra, "L2"),
                         ("metadata[0].raw", compare.MISSING, "2"))
        no_offset = copy.deepcopy(doc)
        del no_offset["data_offset"]
        self.assertEqual(compare.compare(doc, no_offset, "L2")[0], "data_offset")
        self.assertIsNone(compare.compare(doc, no_offset, "L1"))
        self.assertIsNone(compare.compare(doc, {"ok": True}, "L0"))

    def test_deeply_nested_answer_keeps_its_verdict(self):
        text = '{"ok": true, "metadata": ' + "[" * 50000 + "]" * 50000 + "}"
        kind, doc, _ = execute.parse_answer(text, 0)
        self.assertEqual(kind, "accepted")
        self.assertTrue(doc[execute.TOO_DEEP])
        kind, _, error = execute.parse_answer("[" * 50000, 0)
        self.assertEqual(kind, "crash")

    def test_sizes_and_signs(self):
        self.assertEqual(limits.parse_size("1G"), 1 << 30)
        self.assertEqual(limits.parse_size("512M"), 512 << 20)
        self.assertEqual(limits.parse_size("1.5GiB"), 3 << 29)
        self.assertEqual(limits.parse_size("4096"), 4096)
        with self.assertRaises(ValueError):
            limits.parse_size("1X")
        self.assertEqual(limits.oom_sign("FATAL ERROR: ... JavaScript heap out of memory"),
                         "heap out of memory")
        self.assertEqual(limits.oom_sign("terminate called after throwing an instance of "
                                         "'std::bad_alloc'"), "std::bad_alloc")
        self.assertIsNone(limits.oom_sign("RangeError: Invalid array length"))


if __name__ == "__main__":
    unittest.main()

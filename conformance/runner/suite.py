"""The suite on disk: conformance/manifest.json, the case files, their canonical outputs.

A data case (area "data") also has "data": {"verdict": accept|reject, "tensor": the first
failing tensor or null, "rule", "error_class"}, the verdict of the column "data". A model case
(areas "model" and "split") has "model": {"verdict": accept|reject, "rule", "error_class"},
the verdict of the column "model"; a split case's file is the set's first shard,
<prefix>-00001-of-0000N.gguf, and "shards": [{"file", "sha256", "size"}] lists the others
(beside it in cases/, named as llama.cpp derives them; a shard left out of a set is missing).

A sparse case (manifest "sparse": {"extents": [{"offset", "hex"}]}) has a file too big to
commit, nearly all zeros: it is written from those extents and its "size" as a sparse file,
into {deps}/generated/ when missing (and checked against its sha256 as any case file), and
again as each run's private copy, so that it never takes its size in disk or memory.

Paths: a case's "file" and "canonical" are relative to the suite directory (conformance/),
or start with a placeholder ({deps}, {root}, {build}, {adapters}). Committed case files must
exist and match their sha256; canonical files must match canonical_sha256. A fetched case
(manifest "fetched": true, the y_real_* files of conformance/setup) whose file is missing is
"unavailable": not run, not counted. Its canonical output is materialised with
`{build}/validator/ggufcheck dump --level 3 --profile llama.cpp FILE` into
{deps}/expected/<id>.json (a cache) and must match canonical_sha256, or the run stops with
a setup error (exit 2).

During a run each case file is copied once into a private temporary directory, read-only
(0444), and every adapter is given that copy; it is removed once every parser is done with
the case. The copy is named <id>.gguf, or for a split case by its file name, with copies of
the other shards beside it under theirs.
"""
import fnmatch
import hashlib
import json
import os
import shutil
import subprocess
import threading

from . import SetupError, load_json

AREA_ORDER = ("header", "count", "kv", "key", "str", "arr", "align", "tinfo", "ttype",
              "layout", "tdata", "data", "endian", "limits", "model", "split", "real")
VERDICTS = ("accept", "reject", "either")


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Places:
    """The directories behind the placeholders."""

    def __init__(self, suite, root, deps, build):
        self.suite = suite
        self.root = root
        self.deps = deps
        self.build = build
        self.adapters = os.path.join(suite, "adapters")

    def expand(self, text):
        return (text.replace("{adapters}", self.adapters).replace("{deps}", self.deps)
                .replace("{build}", self.build).replace("{root}", self.root))

    def path(self, text):
        expanded = self.expand(text)
        return expanded if os.path.isabs(expanded) else os.path.join(self.suite, expanded)


class Case:
    def __init__(self, entry, places):
        self.entry = entry
        self.id = entry["id"]
        self.path = places.path(entry["file"])
        self.fetched = bool(entry.get("fetched"))
        self.sparse = entry.get("sparse")
        self.size = entry.get("size")
        # a data case's third verdict, llama.cpp's tensor data check, is the column "data"
        self.data = entry.get("data")
        # a model case's fourth verdict, llama.cpp's model loader, is the column "model"
        self.model = entry.get("model")
        self.shards = [places.path(shard["file"]) for shard in entry.get("shards") or []]
        self.shard_sha256 = [shard.get("sha256") for shard in entry.get("shards") or []]
        self.expected = dict(entry["expected"])
        if self.data:
            self.expected["data"] = self.data["verdict"]
        if self.model:
            self.expected["model"] = self.model["verdict"]
        self.area = entry.get("area") or "other"
        self.level = entry.get("level") or "required"
        self.tags = entry.get("tags") or []
        self.gguf_version = entry.get("gguf_version")
        self.endianness = entry.get("endianness") or "little"
        self.canonical_path = places.path(entry["canonical"]) if entry.get("canonical") else None
        self.canonical_sha256 = entry.get("canonical_sha256")
        self.unavailable = None       # a reason, for a fetched case that cannot run

    def needs_canonical(self):
        return any(verdict in ("accept", "either") for profile, verdict in self.expected.items()
                   if profile not in ("data", "model"))

    def summary(self):
        """The case as recorded in the results (expected with the data verdict, if any)."""
        keys = ("id", "area", "rule", "error_class", "level", "tags", "gguf_version",
                "endianness", "expected", "fetched")
        summary = {key: self.entry.get(key) for key in keys}
        summary["expected"] = self.expected
        if self.data:
            summary["data"] = self.data
        if self.model:
            summary["model"] = self.model
        if self.shards:
            summary["shards"] = [os.path.basename(path) for path in self.shards]
        return summary


def load_manifest(path, places):
    manifest = load_json(path, f"no manifest at {path} (the case generator writes it; --suite "
                               "gives another suite directory)")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("cases"), list):
        raise SetupError(f"{path}: not a suite manifest (no \"cases\" list)")
    cases, seen = [], set()
    for number, entry in enumerate(manifest["cases"]):
        where = f"{path}: case {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) or \
                not isinstance(entry.get("file"), str) or \
                not isinstance(entry.get("expected"), dict):
            raise SetupError(f"{where}: needs \"id\", \"file\" and \"expected\"")
        if entry["id"] in seen:
            raise SetupError(f"{where}: duplicate id {entry['id']}")
        seen.add(entry["id"])
        for profile in manifest.get("profiles") or ("spec", "llama.cpp"):
            if profile not in entry["expected"]:
                raise SetupError(f"{where} ({entry['id']}): no expected verdict in profile "
                                 f"{profile}")
        for profile, verdict in entry["expected"].items():
            if verdict not in VERDICTS:
                raise SetupError(f"{where} ({entry['id']}): expected verdict {verdict!r} in "
                                 f"profile {profile} is not one of {', '.join(VERDICTS)}")
        data = entry.get("data")
        if data is not None and (not isinstance(data, dict) or
                                 data.get("verdict") not in ("accept", "reject") or
                                 not isinstance(data.get("tensor"), (str, type(None)))):
            raise SetupError(f"{where} ({entry['id']}): \"data\" needs a \"verdict\" accept "
                             "or reject (and \"tensor\", a name or null)")
        if "data" in entry["expected"]:
            raise SetupError(f"{where} ({entry['id']}): the data verdict belongs in \"data\", "
                             "not in \"expected\"")
        model = entry.get("model")
        if model is not None and (not isinstance(model, dict) or
                                  model.get("verdict") not in ("accept", "reject")):
            raise SetupError(f"{where} ({entry['id']}): \"model\" needs a \"verdict\" accept "
                             "or reject")
        if "model" in entry["expected"]:
            raise SetupError(f"{where} ({entry['id']}): the model verdict belongs in \"model\", "
                             "not in \"expected\"")
        sparse = entry.get("sparse")
        if sparse is not None and not _valid_sparse(sparse, entry.get("size")):
            raise SetupError(f"{where} ({entry['id']}): \"sparse\" needs \"extents\", a list of "
                             "{\"offset\", \"hex\"} in ascending order within \"size\"")
        shards = entry.get("shards")
        if shards is not None and (not isinstance(shards, list) or not all(
                isinstance(shard, dict) and isinstance(shard.get("file"), str)
                for shard in shards)):
            raise SetupError(f"{where} ({entry['id']}): \"shards\" needs a list of "
                             "{\"file\", \"sha256\"}")
        cases.append(Case(entry, places))
    return manifest, cases


def select(cases, run_globs, skip_globs):
    def matches(case_id, globs):
        return any(fnmatch.fnmatchcase(case_id, glob) for glob in globs)
    return [case for case in cases
            if (not run_globs or matches(case.id, run_globs)) and not matches(case.id, skip_globs)]


def check_files(cases, places):
    """Checks committed files and canonicals; materialises fetched canonicals. Marks fetched
    cases whose file is missing as unavailable. SetupError on any mismatch."""
    ggufcheck = os.path.join(places.build, "validator", "ggufcheck")
    for case in cases:
        if case.sparse and (not os.path.isfile(case.path) or
                            os.path.getsize(case.path) != case.size or
                            sha256_file(case.path) != case.entry.get("sha256")):
            # missing, or written from another version of the manifest
            os.makedirs(os.path.dirname(case.path), exist_ok=True)
            partial = f"{case.path}.{os.getpid()}.tmp"
            write_sparse(partial, case.sparse, case.size)
            os.replace(partial, case.path)
        if not os.path.isfile(case.path):
            if case.fetched:
                case.unavailable = f"missing {case.path} (run conformance/setup)"
                continue
            raise SetupError(f"case {case.id}: missing file {case.path}")
        expected_sha = case.entry.get("sha256")
        if expected_sha and sha256_file(case.path) != expected_sha:
            raise SetupError(f"case {case.id}: {case.path} does not match the manifest's "
                             f"sha256 {expected_sha}")
        for shard, shard_sha in zip(case.shards, case.shard_sha256):
            if not os.path.isfile(shard):
                raise SetupError(f"case {case.id}: missing shard {shard}")
            if shard_sha and sha256_file(shard) != shard_sha:
                raise SetupError(f"case {case.id}: {shard} does not match the manifest's "
                                 f"sha256 {shard_sha}")
        if case.fetched and case.needs_canonical():
            _materialise(case, places, ggufcheck)
        elif case.canonical_path:
            if not os.path.isfile(case.canonical_path):
                raise SetupError(f"case {case.id}: missing canonical output {case.canonical_path}")
            if case.canonical_sha256 and sha256_file(case.canonical_path) != case.canonical_sha256:
                raise SetupError(f"case {case.id}: {case.canonical_path} does not match the "
                                 f"manifest's canonical_sha256 {case.canonical_sha256}")


def _valid_sparse(sparse, size):
    if not isinstance(sparse, dict) or not isinstance(sparse.get("extents"), list) or \
            not isinstance(size, int):
        return False
    end = 0
    for extent in sparse["extents"]:
        if not isinstance(extent, dict) or not isinstance(extent.get("offset"), int) or \
                not isinstance(extent.get("hex"), str) or extent["offset"] < end:
            return False
        try:
            end = extent["offset"] + len(bytes.fromhex(extent["hex"]))
        except ValueError:
            return False
    return end <= size


def write_sparse(path, sparse, size):
    """Writes a sparse case's file: its extents, the rest holes (zeros that take no disk)."""
    with open(path, "wb") as handle:
        for extent in sparse["extents"]:
            handle.seek(extent["offset"])
            handle.write(bytes.fromhex(extent["hex"]))
        handle.truncate(size)


def _materialise(case, places, ggufcheck):
    cache = os.path.join(places.deps, "expected", case.id + ".json")
    case.canonical_path = cache
    if os.path.isfile(cache) and (not case.canonical_sha256 or
                                  sha256_file(cache) == case.canonical_sha256):
        return
    if not os.access(ggufcheck, os.X_OK):
        case.unavailable = (f"no {ggufcheck} to materialise its canonical output (build it, "
                            "or pass --build)")
        return
    done = subprocess.run([ggufcheck, "dump", "--level", "3", "--profile", "llama.cpp",
                           case.path], capture_output=True, timeout=300)
    if done.returncode != 0:
        raise SetupError(f"case {case.id}: `ggufcheck dump --level 3 --profile llama.cpp` "
                         f"exits {done.returncode} on {case.path}: "
                         f"{done.stdout[:200].decode('utf-8', 'replace')}")
    digest = hashlib.sha256(done.stdout).hexdigest()
    if case.canonical_sha256 and digest != case.canonical_sha256:
        raise SetupError(f"case {case.id}: the canonical output of {case.path} from {ggufcheck} "
                         f"has sha256 {digest}, the manifest says {case.canonical_sha256} "
                         "(a different file, or a different ggufcheck)")
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    partial = f"{cache}.{os.getpid()}.tmp"
    with open(partial, "wb") as handle:
        handle.write(done.stdout)
    os.replace(partial, cache)


class CaseCopies:
    """Read-only private copies of the case files, and their canonical outputs, each made on
    first use and dropped when the last user releases it."""

    def __init__(self, directory):
        self.directory = directory
        self.lock = threading.Lock()
        self.entries = {}          # id -> [lock, users left, copy path, canonical or None]

    def register(self, case, users):
        self.entries[case.id] = [threading.Lock(), users, None, None]

    def acquire(self, case):
        entry = self.entries[case.id]
        with entry[0]:
            if entry[2] is None:
                # a split case keeps its file names: the first shard finds the others by name
                name = os.path.basename(case.path) if case.shards else case.id + ".gguf"
                copies = []
                for source in [case.path] + case.shards:
                    target = os.path.join(self.directory,
                                          name if source == case.path else os.path.basename(source))
                    if case.sparse and source == case.path:
                        write_sparse(target, case.sparse, case.size)
                    else:
                        shutil.copyfile(source, target)
                    os.chmod(target, 0o444)
                    copies.append(target)
                entry[2] = copies
            return entry[2][0]

    def canonical(self, case):
        entry = self.entries[case.id]
        with entry[0]:
            if entry[3] is None and case.canonical_path:
                with open(case.canonical_path, encoding="utf-8") as handle:
                    entry[3] = json.load(handle)
            return entry[3]

    def release(self, case):
        entry = self.entries[case.id]
        with entry[0]:
            entry[1] -= 1
            if entry[1] <= 0:
                for copy in entry[2] or []:
                    try:
                        os.chmod(copy, 0o644)
                        os.unlink(copy)
                    except OSError:
                        pass
                entry[2] = None
                entry[3] = None


def area_key(area):
    return (AREA_ORDER.index(area), "") if area in AREA_ORDER else (len(AREA_ORDER), area)

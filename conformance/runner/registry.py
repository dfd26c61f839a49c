"""The parsers: conformance/adapters/parsers.json, ad-hoc adapters (--adapter), and what
each one says it supports (--capabilities).

A registry entry: {"name", "command": [...], "batch": bool, "profiles": [...],
"requires": [paths], "description"}; placeholders {adapters} {deps} {build} {root}. A parser
whose command or a required path is missing is not available: reported, skipped, not a
failure. An optional "capabilities" object in an entry is used instead of asking the
adapter (for a program such as `ggufcheck dump` that has no --capabilities option).

`ADAPTER --capabilities` is asked once per parser (timeout 10 s, under the memory cap). An
adapter that exits non-zero or prints no JSON object gets the defaults: levels L0-L2,
GGUF versions 2 and 3, little endian, no batch mode, no data check.

Besides the two profiles there is a third column, "data": the verdicts of llama.cpp's tensor
data check on the data cases, for the parsers that declare "data": true (asked `ADAPTER
--data FILE`, always one-shot). A parser that does not declare it has no data column.
A fourth column, "model", is the same for llama.cpp's model loader on the model and split
cases ("model": true, asked `ADAPTER --model FILE`, always one-shot).
"""
import json
import os
import re
import shlex
import shutil

from . import SetupError, load_json
from . import execute
from .compare import LEVELS

PROFILES = ("spec", "llama.cpp")
DATA = "data"                    # the data check's column (not a registry profile)
MODEL = "model"                  # the model loader's column (not a registry profile)
EXTRA = (DATA, MODEL)            # the columns a parser has only when its capabilities say so
COLUMNS = PROFILES + EXTRA
DEFAULT_CAPABILITIES = {"levels": ["L0", "L1", "L2"], "gguf_versions": ["2", "3"],
                        "endianness": ["little"], "batch": False, "data": False,
                        "model": False}
CAPABILITIES_TIMEOUT = 10.0


class Parser:
    def __init__(self, name, argv, batch, profiles, description="", requires=(),
                 capabilities=None, adhoc=False):
        self.name = name
        self.argv = argv
        self.batch = batch
        self.profiles = list(profiles)
        self.description = description
        self.requires = list(requires)
        self.capabilities = capabilities
        self.capabilities_source = "registry" if capabilities else None
        self.adhoc = adhoc
        self.unavailable = None
        self.level = None             # the level compared (after the cap)
        self.capped = False
        self.warmup_ok = None         # batch: whether a new process answers the warm-up
        self.command_template = argv  # the registry's command, placeholders unexpanded

    def max_level(self):
        declared = [level for level in self.capabilities.get("levels", []) if level in LEVELS]
        return max(declared, key=LEVELS.index) if declared else "L0"

    def checks_data(self):
        return bool(self.capabilities and self.capabilities.get("data"))

    def checks_model(self):
        return bool(self.capabilities and self.capabilities.get("model"))

    def declares(self, column):
        """Whether the parser has the extra column (data or model)."""
        return self.checks_data() if column == DATA else self.checks_model()

    def supports(self, case):
        caps = self.capabilities
        version_ok = case.gguf_version is None or str(case.gguf_version) in caps["gguf_versions"]
        return version_ok and case.endianness in caps["endianness"]

    def summary(self):
        return {"name": self.name, "command": self.command_template, "batch": self.batch,
                "profiles": self.profiles, "description": self.description,
                "capabilities": self.capabilities,
                "capabilities_source": self.capabilities_source, "level": self.level,
                "level_capped": self.capped, "adhoc": self.adhoc}


def safe_name(name):
    """A parser name as a file name (expected-failure lists): '/' and other characters
    outside [A-Za-z0-9._+@-] become '-', so @huggingface/gguf -> @huggingface-gguf."""
    return re.sub(r"[^A-Za-z0-9._+@-]", "-", name) or "adapter"


def load_registry(path, places):
    entries = load_json(path, f"no parser registry at {path} (or run an ad-hoc adapter with "
                              "--adapter 'COMMAND')")
    if not isinstance(entries, list):
        raise SetupError(f"{path}: not a list of parsers")
    parsers = []
    for number, entry in enumerate(entries):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or \
                not isinstance(entry.get("command"), list) or not entry["command"] or \
                not all(isinstance(part, str) for part in entry["command"]):
            raise SetupError(f"{where}: needs \"name\" and a \"command\" list of strings")
        profiles = entry.get("profiles", list(PROFILES))
        if not isinstance(profiles, list) or any(p not in PROFILES for p in profiles):
            raise SetupError(f"{where} ({entry['name']}): profiles must be a subset of "
                             f"{list(PROFILES)}")
        capabilities = entry.get("capabilities")
        if capabilities is not None and not isinstance(capabilities, dict):
            raise SetupError(f"{where} ({entry['name']}): capabilities must be an object")
        parser = Parser(entry["name"], [places.expand(part) for part in entry["command"]],
                        bool(entry.get("batch", False)), profiles,
                        entry.get("description", ""),
                        [places.expand(p) for p in entry.get("requires", [])],
                        _normalise(capabilities) if capabilities else None)
        parser.command_template = list(entry["command"])
        if parser.name in {p.name for p in parsers}:
            raise SetupError(f"{where}: duplicate parser name {parser.name}")
        parsers.append(parser)
    return parsers


def adhoc_parser(command, name=None):
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise SetupError(f"--adapter {command!r}: {error}") from None
    if not argv:
        raise SetupError("--adapter needs a command")
    return Parser(name or "", argv, False, PROFILES, f"ad-hoc adapter: {command}", adhoc=True)


def check_available(parser):
    program = parser.argv[0]
    if os.sep in program:
        if not os.access(program, os.X_OK):
            parser.unavailable = f"missing {program}"
            return
    elif shutil.which(program) is None:
        parser.unavailable = f"{program} is not on PATH"
        return
    for required in parser.requires:
        if not os.path.exists(required):
            parser.unavailable = f"missing {required} (run conformance/setup)"
            return


def _normalise(capabilities):
    result = dict(DEFAULT_CAPABILITIES)
    for key in ("levels", "gguf_versions", "endianness"):
        value = capabilities.get(key)
        if isinstance(value, list):
            result[key] = [str(item) for item in value]
    for key in ("batch", "data", "model"):
        if isinstance(capabilities.get(key), bool):
            result[key] = capabilities[key]
    for key in ("name", "version"):
        if isinstance(capabilities.get(key), str):
            result[key] = capabilities[key]
    return result


def query_capabilities(parser, memory_cap):
    """Sets parser.capabilities (unless the registry gave them), and the name and batch mode
    of an ad-hoc adapter."""
    if parser.capabilities is None:
        reason, exit_status, _, stdout, _, _, _, _ = execute.run_process(
            parser.argv + ["--capabilities"], CAPABILITIES_TIMEOUT, memory_cap)
        answer = None
        if reason == "exited" and exit_status == 0:
            try:
                answer = json.loads(stdout.decode("utf-8", "replace").strip().splitlines()[0])
            except (ValueError, IndexError):
                answer = None
        if isinstance(answer, dict):
            parser.capabilities = _normalise(answer)
            parser.capabilities_source = "adapter"
        else:
            parser.capabilities = dict(DEFAULT_CAPABILITIES)
            parser.capabilities_source = "default (no --capabilities answer)"
    if parser.adhoc:
        parser.batch = bool(parser.capabilities.get("batch"))
        if not parser.name:
            parser.name = parser.capabilities.get("name") or _name_from_command(parser.argv)


def _name_from_command(argv):
    """The adapter's file name without extension: the script after an interpreter."""
    interpreters = ("python", "python3", "node", "bash", "sh", "ruby", "perl", "java", "deno")
    for part in argv:
        base = os.path.basename(part)
        if part.startswith("-") or base.split(".")[0] in interpreters or \
                re.fullmatch(r"python3(\.\d+)?", base):
            continue
        return os.path.splitext(base)[0]
    return os.path.basename(argv[0])

#!/usr/bin/python3
"""The GitHub Action (action.yml, scripts/action/*.sh), run the way a runner runs it.

Static checks of action.yml:

- every input a step's script reads (`input NAME`, `is_true NAME`) is mapped in that step's
  `env:` as INPUT_NAME (the input's name upper-cased, hyphens kept) from `${{ inputs.name }}`,
  every mapping is read, and every declared input is used somewhere in the steps;
- no `run:` has an expression in its text (inputs reach scripts as environment variables
  only), each is one line, and the scripts name no INPUT_ variable themselves;
- each step's `uses:` is one the emulator below knows;
- the workflows of the documentation (docs/examples/*.yml, the YAML blocks of
  docs/github-actions.md) give the action only inputs it declares, and those that upload SARIF
  have the permission security-events: write.

Checked first on broken variants of action.yml, which must fail, so a broken check cannot pass.

Then the composite action is run by a small emulator of the runner: the inputs with their
defaults, each step's `if:` (success() implied unless a status function is named; !cancelled()
after a failure), `${{ }}` expressions in `env:` and `with:` (GitHub's operators, its null and
its case-insensitive string comparison), a `run:` step as `bash --noprofile --norc -eo pipefail
FILE` in GITHUB_WORKSPACE with GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_ACTION_PATH and
RUNNER_TEMP, and the outputs read back from GITHUB_OUTPUT; actions/cache/restore and save are
emulated with a dictionary, upload-sarif is recorded. The scenarios: the valid and broken
samples, globs (** too), a directory, paths with blanks, a file named -x.gguf and one named
::warning::x.gguf, data true, fail-on warning, SARIF, inputs that would be commands if they
were ever evaluated, wrong input values, ggufcheck-path, and the build: a fake cmake and
setup.sh, cached, restored, and rebuilt when a source file changes.

Last, shellcheck on the scripts when it is installed (else it skips, saying so).

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_github_action.py
       --ggufcheck PATH --source REPO
A test per scenario (and per broken variant, expression, refused option and wrong input value).
"""

import copy
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest
# Required, not optional: python3-yaml (Debian: apt install python3-yaml).
import yaml

KNOWN_ACTIONS = ("actions/cache/restore@v4", "actions/cache/save@v4",
                 "github/codeql-action/upload-sarif@v3")
# `input NAME` and `is_true NAME` (scripts/action/lib.sh), NAME upper-cased as in INPUT_NAME.
SCRIPT_READ_RE = re.compile(r"^[^#\n]*?\b(?:input|is_true) +([A-Z][A-Z0-9_-]*)\b", re.M)
STATUS_FUNCTION_RE = re.compile(r"\b(?:success|failure|always|cancelled)\s*\(")


# ---------------------------------------------------------------------------------------------
# GitHub's expression language, the part action.yml may use.

class ExpressionError(Exception):
    pass


TOKEN_RE = re.compile(r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>\d+(?:\.\d+)?)|"
                      r"(?P<op>==|!=|&&|\|\||!|\(|\)|\.)|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")


def tokenize(text):
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = TOKEN_RE.match(text, position)
        if not match or match.end() == position:
            raise ExpressionError(f"cannot read the expression at {text[position:]!r}")
        position = match.end()
        kind = match.lastgroup
        value = match.group(kind)
        if kind == "string":
            value = value[1:-1].replace("''", "'")
        tokens.append((kind, value))
    return tokens


def to_number(value):
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if value.strip() == "":
        return 0.0
    try:
        return float(value)
    except ValueError:
        return float("nan")


def truthy(value):
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0 and value == value
    return value != ""


def equal(left, right):
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    if type(left) is type(right) and not isinstance(left, (int, float)):
        return left == right
    return to_number(left) == to_number(right)


def as_text(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Evaluator:
    def __init__(self, context, status):
        self.context = context
        self.status = status  # "success" or "failure"

    def evaluate(self, text):
        self.tokens = tokenize(text)
        self.index = 0
        value = self.or_expression()
        if self.index != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.index][1]!r} in {text!r}")
        return value

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else (None, None)

    def take(self, expected=None):
        token = self.peek()
        if token[0] is None or (expected and token[1] != expected):
            raise ExpressionError(f"expected {expected or 'more'}")
        self.index += 1
        return token

    def or_expression(self):
        value = self.and_expression()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_expression()
            value = value if truthy(value) else right
        return value

    def and_expression(self):
        value = self.unary()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.unary()
            value = right if truthy(value) else value
        return value

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        left = self.primary()
        if self.peek() in (("op", "=="), ("op", "!=")):
            operator = self.take()[1]
            right = self.primary()
            return equal(left, right) if operator == "==" else not equal(left, right)
        return left

    def primary(self):
        kind, value = self.take()
        if kind == "string":
            return value
        if kind == "number":
            return float(value)
        if (kind, value) == ("op", "("):
            inner = self.or_expression()
            self.take(")")
            return inner
        if kind != "name":
            raise ExpressionError(f"unexpected {value!r}")
        if value in ("true", "false"):
            return value == "true"
        if value == "null":
            return None
        if self.peek() == ("op", "("):
            self.take()
            self.take(")")
            functions = {"success": self.status == "success", "failure": self.status == "failure",
                         "always": True, "cancelled": False}
            if value not in functions:
                raise ExpressionError(f"the emulator has no function {value}()")
            return functions[value]
        if value not in self.context:
            raise ExpressionError(f"the emulator has no context {value!r}")
        current = self.context[value]
        while self.peek() == ("op", "."):
            self.take()
            name = self.take()[1]
            current = current.get(name) if isinstance(current, dict) else None
        return current


def substitute(text, evaluator):
    """A string with its ${{ }} expressions replaced by their values."""
    if not isinstance(text, str):
        return as_text(text)
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: as_text(evaluator.evaluate(m.group(1))), text)


def condition_holds(condition, evaluator):
    if condition is None:
        return evaluator.status == "success"
    text = str(condition).strip()
    whole = re.fullmatch(r"\$\{\{(.*)\}\}", text, re.S)
    if whole:
        text = whole.group(1)
    if not STATUS_FUNCTION_RE.search(text):
        text = f"success() && ({text})"
    return truthy(evaluator.evaluate(text))


# ---------------------------------------------------------------------------------------------
# The runner.

def read_github_file(path):
    """name=value lines and name<<DELIMITER blocks, as the runner reads GITHUB_OUTPUT."""
    values = {}
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while index < len(lines) and lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            if index == len(lines):
                raise ValueError(f"{path}: no closing {delimiter}")
            index += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise ValueError(f"{path}: cannot read the line {line!r}")
    return values


class Run:
    def __init__(self):
        self.steps = {}        # id -> {"outputs", "outcome"}
        self.ran = []          # names of the steps run
        self.skipped = []
        self.uploads = []      # the with: of each upload-sarif call
        self.stdout = ""
        self.stderr = ""
        self.summary = ""
        self.outputs = {}
        self.failed = False


class Runner:
    def __init__(self, action_dir, workspace, temp, path_dirs, cache, extra_env=None):
        self.action_dir = action_dir
        self.extra_env = extra_env or {}
        with open(os.path.join(action_dir, "action.yml"), encoding="utf-8") as handle:
            self.action = yaml.safe_load(handle)
        self.workspace = workspace
        self.temp = temp
        self.path = os.pathsep.join(path_dirs)
        self.cache = cache  # key -> a directory holding the saved copy

    def run(self, inputs):
        declared = self.action.get("inputs") or {}
        unknown = set(inputs) - set(declared)
        if unknown:
            raise ValueError(f"inputs the action does not declare: {sorted(unknown)}")
        values = {name: as_text(inputs.get(name, spec.get("default", "")))
                  for name, spec in declared.items()}
        os.makedirs(self.temp, exist_ok=True)
        run = Run()
        context = {"inputs": values, "steps": run.steps,
                   "github": {"action_path": self.action_dir, "workspace": self.workspace},
                   "runner": {"temp": self.temp, "os": "Linux", "arch": "X64"}}
        for number, step in enumerate(self.action["runs"]["steps"]):
            evaluator = Evaluator(context, "failure" if run.failed else "success")
            name = step.get("name", f"step {number}")
            if not condition_holds(step.get("if"), evaluator):
                run.skipped.append(name)
                if "id" in step:
                    run.steps[step["id"]] = {"outputs": {}, "outcome": "skipped"}
                continue
            run.ran.append(name)
            if "run" in step:
                outputs, ok = self.run_script(step, evaluator, run, number)
            else:
                outputs, ok = self.run_action(step, evaluator, run)
            if "id" in step:
                run.steps[step["id"]] = {"outputs": outputs,
                                         "outcome": "success" if ok else "failure"}
            run.failed = run.failed or not ok
        evaluator = Evaluator(context, "failure" if run.failed else "success")
        for name, spec in (self.action.get("outputs") or {}).items():
            run.outputs[name] = substitute(spec.get("value", ""), evaluator)
        return run

    def run_script(self, step, evaluator, run, number):
        if step.get("shell") != "bash":
            raise ValueError(f"step {step.get('name')}: shell must be bash, not {step.get('shell')}")
        script = os.path.join(self.temp, f"step-{number}.sh")
        with open(script, "w", encoding="utf-8") as handle:
            handle.write(step["run"])
        output_file = os.path.join(self.temp, f"step-{number}.output")
        summary_file = os.path.join(self.temp, f"step-{number}.summary")
        for path in (output_file, summary_file):
            open(path, "w").close()
        env = {"PATH": self.path, "HOME": os.path.join(self.temp, "home"), "LANG": "C.UTF-8",
               "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": self.workspace,
               "GITHUB_ACTION_PATH": self.action_dir, "GITHUB_OUTPUT": output_file,
               "GITHUB_STEP_SUMMARY": summary_file, "RUNNER_TEMP": self.temp,
               "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", **self.extra_env}
        for key, value in (step.get("env") or {}).items():
            env[key] = substitute(value, evaluator)
        completed = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                                   cwd=self.workspace, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        run.stdout += completed.stdout.decode("utf-8", "replace")
        run.stderr += completed.stderr.decode("utf-8", "replace")
        with open(summary_file, encoding="utf-8") as handle:
            run.summary += handle.read()
        return read_github_file(output_file), completed.returncode == 0

    def run_action(self, step, evaluator, run):
        uses = step.get("uses")
        given = {key: substitute(value, evaluator) for key, value in (step.get("with") or {}).items()}
        if uses == "actions/cache/restore@v4":
            saved = self.cache.get(given["key"])
            if saved is None:
                return {"cache-hit": ""}, True
            shutil.rmtree(given["path"], ignore_errors=True)
            shutil.copytree(saved, given["path"], symlinks=True)
            return {"cache-hit": "true", "cache-primary-key": given["key"],
                    "cache-matched-key": given["key"]}, True
        if uses == "actions/cache/save@v4":
            copy_dir = tempfile.mkdtemp(prefix="cache-", dir=os.path.dirname(self.temp))
            shutil.rmtree(copy_dir)
            shutil.copytree(given["path"], copy_dir, symlinks=True)
            self.cache[given["key"]] = copy_dir
            return {}, True
        if uses == "github/codeql-action/upload-sarif@v3":
            run.uploads.append(given)
            return {}, True
        raise ValueError(f"the emulator does not know the action {uses}")


# ---------------------------------------------------------------------------------------------
# Static checks.

def script_of(step, action_dir):
    match = re.fullmatch(r'bash "\$GITHUB_ACTION_PATH/([^"]+)"', step.get("run", "").strip())
    return os.path.join(action_dir, match.group(1)) if match else None


def walk_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from walk_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_strings(item)


def static_problems(action, action_dir):
    problems = []
    declared = set((action.get("inputs") or {}).keys())
    steps = action.get("runs", {}).get("steps", [])
    if action.get("runs", {}).get("using") != "composite":
        problems.append("runs.using is not composite")
    used = set()
    for text in walk_strings(steps):
        used.update(re.findall(r"\binputs\.([A-Za-z0-9_-]+)", text))
    for name in sorted(used - declared):
        problems.append(f"the steps use inputs.{name}, which is not declared")
    for name in sorted(declared - used):
        problems.append(f"input {name} is declared but no step uses it")
    for step in steps:
        label = step.get("name", step.get("id", "?"))
        if "uses" in step:
            if step["uses"] not in KNOWN_ACTIONS:
                problems.append(f"step {label}: uses {step['uses']}, unknown to the emulator")
            continue
        run = step.get("run", "")
        if "${{" in run:
            problems.append(f"step {label}: an expression in run: (script injection); map it in env:")
        if len(run.strip().splitlines()) != 1:
            problems.append(f"step {label}: run: is more than one line; put the logic in a script")
        script = script_of(step, action_dir)
        if script is None or not os.path.isfile(script):
            problems.append(f"step {label}: run: is not bash \"$GITHUB_ACTION_PATH/<script>\" "
                            f"naming a script of the action")
            continue
        with open(script, encoding="utf-8") as handle:
            text = handle.read()
        if re.search(r"INPUT_", re.sub(r"#.*", "", text)):
            problems.append(f"step {label}: {os.path.basename(script)} names an INPUT_ variable "
                            f"itself instead of reading it with input NAME")
        reads = set(SCRIPT_READ_RE.findall(text))
        mapped = {}
        for key, value in (step.get("env") or {}).items():
            if not key.startswith("INPUT_"):
                continue
            name = key[len("INPUT_"):]
            mapped[name] = value
            matching = [d for d in declared if d.upper() == name]
            if not matching:
                problems.append(f"step {label}: env {key} matches no declared input")
            elif str(value).strip() != "${{ inputs.%s }}" % matching[0]:
                problems.append(f"step {label}: env {key} is {value!r}, not "
                                f"${{{{ inputs.{matching[0]} }}}}")
        for name in sorted(reads - set(mapped)):
            problems.append(f"step {label}: {os.path.basename(script)} reads input {name} but "
                            f"the step's env has no INPUT_{name}")
        for name in sorted(set(mapped) - reads):
            problems.append(f"step {label}: env INPUT_{name} is mapped but "
                            f"{os.path.basename(script)} never reads it")
    return problems


# ---------------------------------------------------------------------------------------------
# The scenarios.

def why(message, run=None):
    """A failure's message, with the run's output and outputs when there is a run."""
    if run is None:
        return message
    return (f"{message}\n    stdout: {run.stdout[-1500:]!r}\n    stderr: {run.stderr[-800:]!r}"
            f"\n    outputs: {run.outputs}")


def annotation_lines(stdout):
    return [line for line in stdout.splitlines() if line.startswith("::")]


def make_workspace(root, source):
    workspace = os.path.join(root, "workspace")
    shutil.copytree(os.path.join(source, "examples", "valid"),
                    os.path.join(workspace, "examples", "valid"))
    shutil.copytree(os.path.join(source, "examples", "broken"),
                    os.path.join(workspace, "examples", "broken"))
    os.makedirs(os.path.join(workspace, "my models"))
    shutil.copy(os.path.join(source, "examples", "valid", "tiny-llama.gguf"),
                os.path.join(workspace, "my models", "tiny llama.gguf"))
    os.makedirs(os.path.join(workspace, "corpus"))
    for name in ("GGUF6001-non-finite-element.gguf", "GGUF2006-unconventional-key.gguf"):
        shutil.copy(os.path.join(source, "corpus", "codes", name),
                    os.path.join(workspace, "corpus", name))
    os.makedirs(os.path.join(workspace, "x"))  # what `rm -rf x` would remove
    return workspace


@pytest.fixture(scope="module")
def real_source(source):
    return os.path.realpath(source)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("action"))


@pytest.fixture(scope="module")
def run(real_source, ggufcheck, root):
    """The action run by the emulator on new workspaces, with ggufcheck on PATH (or not)."""
    source = real_source
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(ggufcheck), os.path.join(bin_dir, "ggufcheck"))
    system_path = ["/usr/bin", "/bin"]
    counter = [0]

    def run(inputs, with_binary_on_path=True, prepare=None):
        counter[0] += 1
        base = os.path.join(root, f"run-{counter[0]}")
        workspace = make_workspace(base, source)
        if prepare:
            prepare(workspace)
        path = ([bin_dir] if with_binary_on_path else []) + system_path
        runner = Runner(source, workspace, os.path.join(base, "temp"), path, {})
        return runner.run(inputs), workspace
    return run


def test_valid_samples_by_a_glob(run):
    """Valid samples by a glob."""
    result, _ = run({"paths": "examples/valid/*.gguf"})
    assert not result.failed, why("the action fails on the valid samples", result)
    assert result.outputs.get("exit-code") == "0", why("exit-code is not 0", result)
    for name in ("tiny-llama.gguf", "vocab-only.gguf"):
        assert f"examples/valid/{name}: pass" in result.stdout, (
            why(f"the glob did not reach {name}", result))
    assert not annotation_lines(result.stdout), why("annotations for the valid samples", result)
    assert "Validate GGUF files" in result.ran and "Build ggufcheck" in result.skipped, (
        why("with ggufcheck on PATH the build must be skipped and the check run", result))
    assert "### ggufcheck: passed (exit status 0)" in result.summary, (
        why("the step summary does not say passed", result))
    assert not result.uploads and result.outputs.get("sarif-file") == "", (
        why("SARIF was uploaded or named with sarif false", result))


def test_broken_samples(run, real_source):
    """Broken samples."""
    source = real_source
    result, _ = run({"paths": "examples/broken/*.gguf"})
    assert result.failed, why("the action passes the broken samples", result)
    assert result.outputs.get("exit-code") == "1", why("exit-code is not 1", result)
    for name in sorted(os.listdir(os.path.join(source, "examples", "broken"))):
        assert (any(line.startswith(f"::error file=examples/broken/{name},title=GGUF")
                for line in result.stdout.splitlines())), (
            why(f"no ::error annotation with the workspace-relative file {name}", result))
    assert ("::error file=examples/broken/three-problems.gguf,title=GGUF2012 non-canonical-bool::"
        in result.stdout), why("the GGUF2012 annotation of three-problems.gguf is missing", result)
    assert ("### ggufcheck: errors found (exit status 1)" in result.summary and
        "examples/broken/truncated.gguf: FAIL" in result.summary), (
        why("the step summary lacks the verdict or the file lines", result))
    assert not any(line.startswith("::") for line in result.summary.splitlines()), (
        why("workflow commands in the step summary", result))


def test_a_directory(run):
    """A directory."""
    result, _ = run({"paths": "examples/valid"})
    assert result.outputs.get("exit-code") == "0" and not result.failed, (
        why("the valid directory does not pass", result))
    assert "2 files: 2 passed" in result.stdout, why("the directory's two files were not checked", result)


def test_the_default_path_is_the_whole_workspace(run):
    """The default path: the whole workspace."""
    result, _ = run({})
    assert result.outputs.get("exit-code") == "1", why("exit-code is not 1", result)
    assert ("./my models/tiny llama.gguf: pass" in result.stdout and
        "::error file=./examples/broken/three-problems.gguf," in result.stdout), (
        why("the workspace was not searched", result))


def test_paths_with_blanks_quoted_over_several_lines(run):
    """Paths with blanks, quoted, over several lines."""
    result, _ = run({"paths": "examples/valid/tiny-llama.gguf\n  \"my models/tiny llama.gguf\"\n"
                              "'my models'/tiny\\ llama.gguf"})
    assert "my models/tiny llama.gguf: pass" in result.stdout, (
        why("the quoted path with blanks did not pass", result))
    assert result.outputs.get("exit-code") == "2", (
        why("a backslash is not special, so tiny\\ and llama.gguf are two missing paths", result))
    assert "::error file=llama.gguf,title=GGUF0001" in result.stdout, (
        why("the third line was not split at the blank", result))
    result, _ = run({"paths": "\"my models/tiny llama.gguf\"\nexamples/valid/vocab-only.gguf"})
    assert result.outputs.get("exit-code") == "0" and "2 files: 2 passed" in result.stdout, (
        why("a quoted path and a second line do not both pass", result))
    result, _ = run({"paths": "my models/tiny llama.gguf"})
    assert (result.outputs.get("exit-code") == "2" and
        "cannot open my: No such file" in result.stdout), (
        why("an unquoted path is not split at its blanks", result))


def test_globs(run):
    """Globs."""
    result, _ = run({"paths": "**/tiny*.gguf"})
    assert (result.outputs.get("exit-code") == "0" and
        "examples/valid/tiny-llama.gguf: pass" in result.stdout and
        "my models/tiny llama.gguf: pass" in result.stdout), (
        why("** did not reach both files named tiny*", result))
    result, _ = run({"paths": "'examples/valid/*.gguf'"})
    assert (result.outputs.get("exit-code") == "2" and
        "cannot open examples/valid/*.gguf" in result.stdout), (
        why("a quoted pattern was expanded", result))
    result, _ = run({"paths": "models/*.gguf"})
    assert (result.outputs.get("exit-code") == "2" and
        "::error file=models/*.gguf,title=GGUF0001" in result.stdout), (
        why("a pattern matching nothing is not reported unreadable", result))


def test_names_that_look_like_options_or_workflow_commands(run, real_source):
    """Names that look like options or workflow commands."""
    source = real_source

    def add_odd_names(workspace):
        for name in ("-x.gguf", "::warning::x.gguf"):
            shutil.copy(os.path.join(source, "examples", "valid", "vocab-only.gguf"),
                        os.path.join(workspace, name))

    result, _ = run({"paths": "-x.gguf *.gguf"}, prepare=add_odd_names)
    assert result.outputs.get("exit-code") == "0", (
        why("-x.gguf or ::warning::x.gguf did not pass", result))
    assert "-x.gguf: pass" in result.stdout, why("-x.gguf was not checked as a file", result)
    stray = annotation_lines(result.stdout)
    assert not stray, why(f"lines that GitHub would run as workflow commands: {stray}", result)
    assert "./::warning::x.gguf: pass" in result.stdout, (
        why("::warning::x.gguf was not checked as ./::warning::x.gguf", result))


def test_data(run):
    """Data."""
    file = "corpus/GGUF6001-non-finite-element.gguf"
    result, _ = run({"paths": file, "args": "--no-model-checks"})
    assert result.outputs.get("exit-code") == "0", why("without data the file must pass", result)
    result, _ = run({"paths": file, "args": "--no-model-checks", "data": "true"})
    assert (result.outputs.get("exit-code") == "1" and
        f"::error file={file},title=GGUF6001" in result.stdout), (
        why("data true did not read the tensor data", result))


def test_fail_on(run):
    """Fail-on."""
    # A container fixture (no vocabulary): checked without the model checks.
    file = "corpus/GGUF2006-unconventional-key.gguf"
    result, _ = run({"paths": file, "args": "--no-model-checks"})
    assert (result.outputs.get("exit-code") == "0" and not result.failed and
        f"::warning file={file},title=GGUF2006" in result.stdout), (
        why("a warning alone must annotate and pass with fail-on error", result))
    result, _ = run({"paths": file, "args": "--no-model-checks", "fail-on": "warning"})
    assert result.outputs.get("exit-code") == "1" and result.failed, (
        why("fail-on warning did not fail on a warning", result))
    result, _ = run({"paths": file, "args": "--no-model-checks --disable 'GGUF2006'",
                     "fail-on": "warning"})
    assert (result.outputs.get("exit-code") == "0" and
        "pass: 0 errors, 0 warnings" in result.stdout), (
        why("args with a quoted word did not reach ggufcheck", result))


# No args: turns a file that cannot be read into a pass (a truncated file, an HTML page).
@pytest.mark.parametrize("file, args", [
    ("corpus/codes/GGUF3001-truncated-tensor-info.gguf", "--disable GGUF3001"),
    ("corpus/codes/GGUF1002-bad-magic-html-page.gguf", "--disable bad-magic"),
    ("corpus/codes/GGUF1002-bad-magic-git-lfs-pointer.gguf", "--severity GGUF1002=off")])
def test_fixed_codes(run, file, args):
    """Fixed codes."""
    result, _ = run({"paths": file, "args": args})
    assert result.failed and result.outputs.get("exit-code") == "3", \
        why(f"args {args!r} on {file} must be refused (exit 3)", result)


def test_sarif(run):
    """SARIF."""
    result, workspace = run({"paths": "examples", "sarif": "true"})
    sarif_file = os.path.join(workspace, "ggufcheck.sarif")
    assert result.failed and result.outputs.get("exit-code") == "1", (
        why("the broken samples must fail the check step", result))
    assert result.outputs.get("sarif-file") == sarif_file, (
        why(f"sarif-file is not {sarif_file}", result))
    assert result.uploads == [{"sarif_file": sarif_file, "category": "ggufcheck"}], (
        why("the SARIF upload did not run after the failed check, with the file", result))
    check_sarif(sarif_file, result)
    result, workspace = run({"paths": "examples/valid", "sarif": "TRUE",
                             "sarif-file": "reports/gguf check.sarif", "upload-sarif": "false"})
    assert os.path.isfile(os.path.join(workspace, "reports", "gguf check.sarif")), (
        why("sarif-file in a new directory, with a blank, was not written", result))
    assert not result.uploads, why("upload-sarif false still uploaded", result)


def test_inputs_that_would_be_commands_if_evaluated(run, root):
    """Inputs that would be commands if evaluated."""
    marker = os.path.join(root, "pwned")
    paths = f"$(touch {marker}) ; rm -rf x `touch {marker}` && touch {marker}"
    result, workspace = run({"paths": paths})
    assert not os.path.exists(marker), why("an input of paths was executed", result)
    assert os.path.isdir(os.path.join(workspace, "x")), why("x was removed", result)
    assert result.outputs.get("exit-code") == "2", (
        why("the words must be literal missing paths (exit 2), not options (3)", result))
    assert ("::error file=$(touch,title=GGUF0001" in result.stdout and
        "::error file=-rf,title=GGUF0001" in result.stdout), (
        why("the words were not passed literally", result))
    # Patterns (they are expanded) without blanks: {touch,FILE} is `touch FILE` if evaluated.
    patterns = [f"$({{touch,{marker}}})*.gguf", f"examples/valid/`{{touch,{marker}}}`*"]
    result, _ = run({"paths": " ".join(patterns)})
    assert not os.path.exists(marker), why("a pattern of paths was executed", result)
    assert (result.outputs.get("exit-code") == "2" and
        all(f"GGUF0001 unreadable-file::cannot open {p}: No such" in result.stdout
            for p in patterns)), (
        why("a pattern with $( ) or ` ` was not taken literally", result))
    result, _ = run({"paths": "examples/valid", "profile": f"`touch {marker}`"})
    assert not os.path.exists(marker), why("profile was executed", result)
    assert result.outputs.get("exit-code") == "3" and result.failed, (
        why("an unknown profile must be ggufcheck's usage error", result))
    result, _ = run({"paths": "examples/valid", "args": f"$(touch {marker})"})
    assert not os.path.exists(marker), why("args was executed", result)
    assert f"--profile strict \\$\\(touch {marker}\\) -- examples/valid" in result.stdout, (
        why("args' words must reach ggufcheck literally", result))
    assert (result.outputs.get("exit-code") == "3" and
        "unexpected argument 'examples/valid'" in result.stderr), (
        why("ggufcheck must refuse a second list of paths (usage error)", result))
    sarif_name = "$(touch pwned).sarif"
    result, workspace = run({"paths": "examples/valid", "sarif": "true", "sarif-file": sarif_name,
                             "upload-sarif": "false"})
    assert not os.path.exists(os.path.join(workspace, "pwned")), why("sarif-file was executed", result)
    assert (result.outputs.get("sarif-file") == os.path.join(workspace, sarif_name) and
        os.path.isfile(os.path.join(workspace, sarif_name))), (
        why("sarif-file was not taken as a literal name", result))
    result, _ = run({"paths": f"examples/valid\n::warning::injected $(touch {marker})"})
    assert not os.path.exists(marker), why("a second line of paths was executed", result)
    assert not any(line.startswith("::warning::") for line in result.stdout.splitlines()), (
        why("an input line started a workflow command", result))


@pytest.mark.parametrize("inputs, expected", [
    ({"data": "yes"}, "input data is \"yes\": give true or false"),
    ({"sarif": "1"}, "input sarif is \"1\": give true or false"),
    ({"fail-on": "note"}, "input fail-on is \"note\""),
    ({"paths": "'unterminated"}, "unterminated ' quote")])
def test_wrong_input_values(run, inputs, expected):
    """Wrong input values."""
    result, _ = run(dict(inputs, paths=inputs.get("paths", "examples/valid")))
    messages = [line for line in result.stdout.splitlines()
                if line.startswith("::error title=ggufcheck action::")]
    assert result.failed and result.outputs.get("exit-code") == "" and \
        len(messages) == 1 and expected in messages[0], \
        why(f"{inputs}: not one usage error saying {expected!r}", result)


def test_ggufcheck_path(run, ggufcheck):
    """Ggufcheck-path."""
    result, _ = run({"paths": "examples/valid", "ggufcheck-path": os.path.abspath(ggufcheck)},
                    with_binary_on_path=False)
    assert result.outputs.get("exit-code") == "0" and "Build ggufcheck" in result.skipped, (
        why("ggufcheck-path was not used", result))
    result, _ = run({"paths": "examples/valid", "ggufcheck-path": "no/such/ggufcheck"})
    assert (result.failed and "Validate GGUF files" in result.skipped and
        "ggufcheck-path: " in result.stdout and "is not an executable file" in result.stdout), (
        why("a wrong ggufcheck-path must stop the action with a message", result))


def check_sarif(sarif_file, result):
    try:
        with open(sarif_file, encoding="utf-8") as handle:
            sarif = json.load(handle)
    except (OSError, ValueError) as error:
        pytest.fail(why(f"the SARIF file does not parse: {error}", result))
    assert sarif.get("version") == "2.1.0", why("not SARIF 2.1.0", result)
    run = sarif["runs"][0]
    uris = [artifact["location"] for artifact in run.get("artifacts", [])]
    for item in run.get("results", []):
        for location in item.get("locations", []):
            uris.append(location["physicalLocation"]["artifactLocation"])
    assert len(uris) > 6, why("too few artifact locations", result)
    bad = [u for u in uris if u.get("uriBaseId") != "SRCROOT" or u["uri"].startswith("/") or
           "://" in u["uri"] or u["uri"].startswith("..")]
    assert not bad, why(f"artifact URIs not relative to the repository: {bad[:3]}", result)
    codes = {(r.get("ruleId"), r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
             for r in run.get("results", [])}
    assert ("GGUF2012", "examples/broken/three-problems.gguf") in codes, (
        why("GGUF2012 of examples/broken/three-problems.gguf is not in the SARIF", result))


FAKE_CMAKE = """#!/bin/bash
set -euo pipefail
printf 'cmake' >>"$FAKE_LOG"; printf ' %s' "$@" >>"$FAKE_LOG"; printf '\\n' >>"$FAKE_LOG"
if [[ $1 == --build ]]; then
  mkdir -p "$2/validator"
  cp "$FAKE_GGUFCHECK" "$2/validator/ggufcheck"
fi
"""
FAKE_SETUP = """#!/bin/bash
printf 'setup.sh %s\\n' "$*" >>"$FAKE_LOG"
"""


def test_build_and_cache(real_source, ggufcheck, root):
    """Build and cache: a fake cmake and setup.sh, cached, restored, and rebuilt when a source
    file changes."""
    source = real_source
    action_dir = os.path.join(root, "action")
    os.makedirs(os.path.join(action_dir, "scripts"))
    shutil.copy(os.path.join(source, "action.yml"), action_dir)
    shutil.copytree(os.path.join(source, "scripts", "action"),
                    os.path.join(action_dir, "scripts", "action"))
    files = {"scripts/setup.sh": FAKE_SETUP, "CMakeLists.txt": "project(x)\n",
             "CMakePresets.json": "{}\n", "validator/src/a.cpp": "int a;\n",
             "validator/CMakeLists.txt": "\n", "docs/diagnostics/GGUF0001.md": "# x\n",
             "validator/cli/main.cpp": "int main;\n", "validator/include/a.hpp": "//\n",
             "examples/CMakeLists.txt": "\n", "validator/src/embed.cmake": "\n",
             "README.md": "# readme\n", "validator/tests/test.py": "#\n"}
    for name, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(action_dir, name)), exist_ok=True)
        with open(os.path.join(action_dir, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    fake_bin = os.path.join(root, "fake-bin")
    os.makedirs(fake_bin)
    for name, text in (("cmake", FAKE_CMAKE), ("apt-get", "#!/bin/sh\nexit 1\n")):
        with open(os.path.join(fake_bin, name), "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(os.path.join(fake_bin, name), 0o755)
    hidden = [d for d in ("/usr/bin", "/bin") if os.path.exists(os.path.join(d, "ggufcheck"))]
    assert not hidden, f"a ggufcheck in {hidden} would hide the build path"
    log = os.path.join(root, "build.log")
    fake_env = {"FAKE_LOG": log, "FAKE_GGUFCHECK": os.path.abspath(ggufcheck)}
    cache = {}
    workspace = make_workspace(os.path.join(root, "build-ws"), source)

    def run_once(label):
        temp = os.path.join(root, f"temp-{label}")  # RUNNER_TEMP is new in every job
        runner = Runner(action_dir, workspace, temp, [fake_bin, "/usr/bin", "/bin"], cache,
                        fake_env)
        open(log, "w").close()
        result = runner.run({"paths": "examples/valid"})
        with open(log, encoding="utf-8") as handle:
            return result, handle.read().splitlines(), temp

    result, commands, temp = run_once("first")
    key = result.steps.get("locate", {}).get("outputs", {}).get("cache-key", "")
    build_dir = os.path.join(temp, "ggufcheck-build")
    expected = ["setup.sh demo", f"cmake --preset cli -B {build_dir}",
                f"cmake --build {build_dir} --target ggufcheck"]
    assert commands == expected, why(f"the build ran {commands}, not {expected}", result)
    assert result.outputs.get("exit-code") == "0", why("the built ggufcheck did not pass", result)
    assert key.startswith("ggufcheck-cli-") and list(cache) == [key], (
        why(f"the build was not saved under its key {key!r}: {list(cache)}", result))
    assert (os.path.join(temp, "ggufcheck-cli", "ggufcheck") ==
        result.steps["build"]["outputs"].get("ggufcheck")), (
        why("the build step does not name the built command in the cache directory", result))

    result, commands, _ = run_once("second")
    assert commands == [], why(f"a cache hit still ran {commands}", result)
    assert (result.steps["restore"]["outputs"].get("cache-hit") == "true" and
        "Save the ggufcheck build" in result.skipped), (
        why("the second run did not restore, or saved again", result))
    assert result.outputs.get("exit-code") == "0", why("the restored ggufcheck did not pass", result)

    # Files the build does not read leave the key alone; each file it reads changes it.
    for number, name in enumerate(("README.md", "validator/tests/test.py")):
        with open(os.path.join(action_dir, name), "a", encoding="utf-8") as handle:
            handle.write("more\n")
        result, commands, _ = run_once(f"unchanged-{number}")
        assert commands == [] and result.steps["locate"]["outputs"]["cache-key"] == key, (
            why(f"a change of {name} changed the cache key", result))
    keys = {key}
    for number, name in enumerate(("validator/src/a.cpp", "validator/cli/main.cpp",
                                   "validator/include/a.hpp", "docs/diagnostics/GGUF0001.md",
                                   "scripts/setup.sh", "CMakePresets.json",
                                   "examples/CMakeLists.txt", "validator/src/embed.cmake")):
        with open(os.path.join(action_dir, name), "a", encoding="utf-8") as handle:
            handle.write("\n")
        result, commands, _ = run_once(f"changed-{number}")
        new_key = result.steps["locate"]["outputs"]["cache-key"]
        assert new_key not in keys and len(commands) == 3 and new_key in cache, (
            why(f"a change of {name} did not rebuild under a new key", result))
        keys.add(new_key)


@pytest.fixture(scope="module")
def action(real_source):
    with open(os.path.join(real_source, "action.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_action_yml_inputs_mappings_run_lines(action, real_source):
    problems = static_problems(action, real_source)
    assert not problems, "problems:\n    " + "\n    ".join(problems)


def find_step(variant, step_id):
    return next(s for s in variant["runs"]["steps"] if s.get("id") == step_id)


def drop_data(variant):
    del find_step(variant, "check")["env"]["INPUT_DATA"]


def declare_unused(variant):
    variant["inputs"]["unused"] = {"description": "x", "default": ""}


def map_from_another_input(variant):
    find_step(variant, "check")["env"]["INPUT_PROFILE"] = "${{ inputs.paths }}"


def map_unread(variant):
    find_step(variant, "check")["env"]["INPUT_EXTRA"] = "${{ inputs.args }}"


def expression_in_run(variant):
    find_step(variant, "check")["run"] = 'echo "${{ inputs.paths }}"'


def map_not_upper_cased(variant):
    env = find_step(variant, "check")["env"]
    env["INPUT_Paths"] = env.pop("INPUT_PATHS")


BROKEN_VARIANTS = [
    ("an unmapped input a script reads", drop_data, "reads input DATA"),
    ("a declared input no step uses", declare_unused, "input unused is declared"),
    ("a mapping from another input", map_from_another_input, "env INPUT_PROFILE is"),
    ("a mapping no script reads", map_unread, "matches no declared input"),
    ("an expression in run:", expression_in_run, "script injection"),
    ("a mapping not upper-cased", map_not_upper_cased, "matches no declared input"),
]


@pytest.mark.parametrize("label, breaks, expected", BROKEN_VARIANTS,
                         ids=[label for label, _, _ in BROKEN_VARIANTS])
def test_the_static_check_sees_a_broken_action(action, real_source, label, breaks, expected):
    variant = copy.deepcopy(action)
    breaks(variant)
    found = static_problems(variant, real_source)
    assert any(expected in p for p in found), \
        f"the static check misses {label} (expected {expected!r}, got {found})"


EXPRESSIONS = [("inputs.a == 'true'", True), ("inputs.b != ''", False),
               ("steps.x.outputs.y != ''", False), ("inputs.b || 'z'", "z"),
               ("!cancelled() && inputs.a == 'TRUE'", True), ("success()", False)]


def failed_evaluator():
    return Evaluator({"inputs": {"a": "True", "b": ""}, "steps": {}}, "failure")


@pytest.mark.parametrize("text, expected", EXPRESSIONS)
def test_the_expression_emulator(text, expected):
    value = failed_evaluator().evaluate(text)
    assert value == expected, f"{text} is {value!r}, not {expected!r}"


def test_an_if_without_a_status_function_does_not_run_after_a_failure():
    assert not condition_holds("inputs.a == 'true'", failed_evaluator()), \
        "an if: without a status function ran after a failure"


def uses_of_action(document):
    """Each mapping with uses: ggufcheck/ggufcheck@..., anywhere in a YAML document."""
    if isinstance(document, dict):
        if str(document.get("uses", "")).startswith("ggufcheck/ggufcheck@"):
            yield document
        for value in document.values():
            yield from uses_of_action(value)
    elif isinstance(document, list):
        for value in document:
            yield from uses_of_action(value)


def documented_workflow_problems(documents, declared):
    """documents: (label, parsed YAML). Problems of the action's uses in them."""
    problems, uses_count = [], 0
    for label, document in documents:
        for step in uses_of_action(document):
            uses_count += 1
            given = set((step.get("with") or {}).keys())
            for name in sorted(given - declared):
                problems.append(f"{label}: with: {name}, an input the action does not declare")
            if str((step.get("with") or {}).get("sarif", "")).lower() == "true":
                text = yaml.safe_dump(document)
                if "security-events: write" not in text:
                    problems.append(f"{label}: uploads SARIF without security-events: write")
    return problems, uses_count


def test_the_documented_workflows(action, real_source):
    declared = set(action["inputs"])
    documents = []
    examples = os.path.join(real_source, "docs", "examples")
    for name in sorted(os.listdir(examples)):
        if name.startswith("github-workflow") and name.endswith(".yml"):
            with open(os.path.join(examples, name), encoding="utf-8") as handle:
                documents.append((f"docs/examples/{name}", yaml.safe_load(handle)))
    with open(os.path.join(real_source, "docs", "github-actions.md"), encoding="utf-8") as handle:
        page = handle.read()
    for number, block in enumerate(re.findall(r"^```yaml\n(.*?)^```", page, re.M | re.S)):
        documents.append((f"docs/github-actions.md yaml block {number + 1}", yaml.safe_load(block)))
    problems, uses_count = documented_workflow_problems(documents, declared)
    assert len(documents) >= 4 and uses_count >= 4, \
        f"only {len(documents)} documented workflows, {uses_count} uses of the action"
    assert not problems, "problems:\n    " + "\n    ".join(problems)


def test_the_documentation_check_sees_a_wrong_input_or_permission(action):
    wrong = [("x", {"steps": [{"uses": "ggufcheck/ggufcheck@v1", "with": {"path": "."}}]}),
             ("y", {"steps": [{"uses": "ggufcheck/ggufcheck@v1", "with": {"sarif": True}}]})]
    problems, _ = documented_workflow_problems(wrong, set(action["inputs"]))
    assert len(problems) == 2 and "path" in problems[0] and "security-events" in problems[1], \
        f"the documentation check misses a wrong input or permission: {problems}"


def test_shellcheck(real_source):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck: not installed")
    directory = os.path.join(real_source, "scripts", "action")
    scripts = sorted(os.path.join(directory, n) for n in os.listdir(directory) if n.endswith(".sh"))
    completed = subprocess.run([shellcheck, "-x", *scripts], cwd=real_source, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    assert len(scripts) >= 4 and completed.returncode == 0, \
        "shellcheck: " + completed.stdout.decode("utf-8", "replace")

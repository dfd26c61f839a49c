#!/usr/bin/python3
"""The pre-commit hook (.pre-commit-hooks.yaml, scripts/pre-commit-hook.sh), run as pre-commit
runs it.

- The hook's definition: id ggufcheck, a `script` entry that exists and is executable (in git's
  index too), types [file] (a Git LFS pointer is text, so [binary] would hide it), and a `files`
  pattern that, used as pre-commit uses it (re.search), selects *.gguf in any case and nothing
  else (names that must and must not match).
- A temporary git repository with staged files: valid models (one with blanks in its path, one
  upper-case, one named -x.gguf, one named ::warning::x.gguf), a broken model, a Git LFS pointer
  named *.gguf, a text file and a broken model named *.gguf.bak. The files are chosen as
  pre-commit chooses them (`git diff --staged --name-only -z`, the pattern, regular files) and
  the command is built as pre-commit builds it (the entry split with shlex, resolved in the
  hook's repository, then the args, then the files); its exit status and messages are checked,
  alone, in batches and together, with args, without ggufcheck on PATH, and with a .gitattributes
  that tracks *.gguf by Git LFS without Git LFS set up.
- The documented configurations (docs/examples/pre-commit-config.yaml, the `repos:` block of
  docs/github-actions.md) name hooks that exist, with args the hook accepts.
- With git-lfs installed (else said and skipped): a model committed by Git LFS passes (the hook
  sees the working tree's model while git stores a pointer), a clone made without smudging has
  the pointer and fails with the pointer message, and `git lfs pull`, as the message says, fixes
  it.
- shellcheck on the hook's script when it is installed (else said and skipped).
- With pre-commit installed (else said and skipped): `pre-commit try-repo` of a repository
  holding the hook, on the staged files, for real.

Usage: /usr/bin/python3 test_pre_commit_hook.py --ggufcheck PATH --source REPO
Prints a line per failed check, what was skipped, and `N scenarios, M checks, F failed`; exits 1
on a failure.
"""

import argparse
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("test_pre_commit_hook: needs python3-yaml (Debian: apt install python3-yaml)",
          file=sys.stderr)
    sys.exit(1)

POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           "size 57184\n")


class Checks:
    def __init__(self):
        self.count = 0
        self.failures = []
        self.skipped = []
        self.scenarios = 0
        self.scenario = ""

    def start(self, name):
        self.scenarios += 1
        self.scenario = name

    def check(self, condition, message, output=None):
        self.count += 1
        if not condition:
            detail = f"\n    output: {output[-2000:]!r}" if output is not None else ""
            self.failures.append(f"{self.scenario}: {message}{detail}")
        return condition


def git(repo, *args, env, check=True, **kwargs):
    return subprocess.run(["git", "-C", repo, *args], env=env, check=check,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)


def isolated_env(root, path):
    """No user or system git configuration (a global filter.lfs would change the results)."""
    home = os.path.join(root, "home")
    os.makedirs(home, exist_ok=True)
    return {"PATH": path, "HOME": home, "LANG": "C.UTF-8",
            "GIT_CONFIG_GLOBAL": os.path.join(home, ".gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
            "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
            "PRE_COMMIT_HOME": os.path.join(root, "pre-commit-home")}


class Hook:
    """The hook as pre-commit reads it from .pre-commit-hooks.yaml."""

    def __init__(self, source):
        self.source = source
        with open(os.path.join(source, ".pre-commit-hooks.yaml"), encoding="utf-8") as handle:
            hooks = yaml.safe_load(handle)
        self.definition = next((h for h in hooks if h.get("id") == "ggufcheck"), None)

    def selects(self, name):
        files = re.compile(self.definition.get("files", ""))
        exclude = re.compile(self.definition.get("exclude", "^$"))
        return bool(files.search(name)) and not exclude.search(name)

    def staged_files(self, repo, env):
        """The files pre-commit passes: staged, existing regular files the patterns select
        (types [file] admits every regular file)."""
        out = git(repo, "diff", "--staged", "--name-only", "--no-ext-diff", "-z", env=env).stdout
        names = [n for n in out.decode("utf-8").split("\0") if n]
        return [n for n in names if os.path.isfile(os.path.join(repo, n)) and
                not os.path.islink(os.path.join(repo, n)) and self.selects(n)]

    def command(self, files, args=None):
        entry = shlex.split(self.definition["entry"])
        entry[0] = os.path.join(self.source, entry[0])  # language: script
        args = self.definition.get("args", []) if args is None else args
        return [*entry, *args, *files]

    def run(self, repo, files, env, args=None):
        completed = subprocess.run(self.command(files, args), cwd=repo, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return completed.returncode, completed.stdout.decode("utf-8", "replace")


def check_definition(checks, hook, source):
    checks.start("the hook's definition")
    definition = hook.definition
    if not checks.check(definition is not None, "no hook with id ggufcheck"):
        return False
    checks.check(definition.get("language") == "script", "language is not script")
    checks.check(definition.get("types") == ["file"], "types is not [file]")
    checks.check(isinstance(definition.get("require_serial", False), bool) and
                 isinstance(definition.get("args", []), list) and "name" in definition,
                 "name, args or require_serial is missing or of the wrong type")
    entry = os.path.join(source, shlex.split(definition["entry"])[0])
    checks.check(os.path.isfile(entry) and os.access(entry, os.X_OK),
                 f"the entry {entry} is not an executable file")
    listed = subprocess.run(["git", "-C", source, "ls-files", "-s", "--",
                             shlex.split(definition["entry"])[0]], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    if listed.returncode == 0 and listed.stdout:
        checks.check(listed.stdout.startswith(b"100755 "),
                     "git records the entry without its executable bit (pre-commit runs it directly)")
    else:
        checks.skipped.append("the entry's mode in git's index (not a git checkout, or not added)")

    checks.start("the files pattern")
    for name in ("a.gguf", "models/with space.gguf", "MODEL.GGUF", "x.Gguf", "-x.gguf",
                 "deep/dir/model-00001-of-00002.gguf"):
        checks.check(hook.selects(name), f"{name!r} is not selected")
    for name in ("a.gguf.bak", "notes.txt", "gguf", "a_gguf", "a.ggufx", "model.gguf/README.md",
                 "a.gguf.lock", ".gguf/x"):
        checks.check(not hook.selects(name), f"{name!r} is selected")
    return True


def make_repo(root, source, env):
    repo = os.path.join(root, "repo")
    os.makedirs(os.path.join(repo, "models"))
    git(repo, "init", "-q", env=env)
    valid = os.path.join(source, "examples", "valid", "tiny-llama.gguf")
    broken = os.path.join(source, "examples", "broken", "three-problems.gguf")
    for name in ("valid.gguf", "models/with space.gguf", "UPPER.GGUF", "-x.gguf",
                 "::warning::x.gguf"):
        shutil.copy(valid, os.path.join(repo, name))
    shutil.copy(broken, os.path.join(repo, "broken.gguf"))
    shutil.copy(broken, os.path.join(repo, "weights.gguf.bak"))
    with open(os.path.join(repo, "lfs-pointer.gguf"), "w", encoding="utf-8") as handle:
        handle.write(POINTER)
    with open(os.path.join(repo, "notes.txt"), "w", encoding="utf-8") as handle:
        handle.write("not a model\n")
    git(repo, "add", "-A", env=env)
    return repo


VALID = ["valid.gguf", "models/with space.gguf", "UPPER.GGUF", "-x.gguf", "::warning::x.gguf"]


def scenarios_direct(checks, hook, source, ggufcheck, root):
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(ggufcheck), os.path.join(bin_dir, "ggufcheck"))
    env = isolated_env(root, os.pathsep.join([bin_dir, "/usr/bin", "/bin"]))
    repo = make_repo(root, source, env)

    checks.start("the staged files pre-commit passes")
    files = hook.staged_files(repo, env)
    expected = sorted(VALID + ["broken.gguf", "lfs-pointer.gguf"])
    checks.check(sorted(files) == expected, f"pre-commit would pass {sorted(files)}, not {expected}")

    checks.start("valid models")
    status, output = hook.run(repo, VALID, env)
    checks.check(status == 0, f"exit status {status}, not 0", output)
    for name in VALID:
        shown = f"./{name}" if name.startswith(":") else name
        checks.check(f"{shown}: pass: " in output, f"no pass line for {name}", output)
    checks.check(not any(line.startswith("::") for line in output.splitlines()),
                 "a line that would be a workflow command in GitHub Actions", output)

    checks.start("a broken model")
    status, output = hook.run(repo, ["broken.gguf"], env)
    checks.check(status == 1, f"exit status {status}, not 1", output)
    checks.check("broken.gguf:0x3b1: error[GGUF2012 non-canonical-bool]" in output,
                 "the GGUF2012 finding is missing", output)

    checks.start("a Git LFS pointer")
    status, output = hook.run(repo, ["lfs-pointer.gguf"], env)
    checks.check(status == 1, f"exit status {status}, not 1", output)
    checks.check(output.startswith("lfs-pointer.gguf: error: a Git LFS pointer (oid sha256:"
                                   "4d7a214614ab..., 57184 bytes), not the model\n"),
                 "the pointer message does not come first", output)
    checks.check('git lfs pull --include="lfs-pointer.gguf"' in output and
                 "SKIP=ggufcheck git commit" in output, "the message names no fix", output)
    checks.check("GGUF1002" not in output, "ggufcheck was run on the pointer too", output)

    checks.start("everything staged, together and in batches")
    status, output = hook.run(repo, files, env)
    checks.check(status == 1, f"exit status {status}, not 1", output)
    checks.check("Git LFS pointer" in output and "GGUF2012" in output and
                 "valid.gguf: pass" in output, "a message is missing", output)
    checks.check("weights.gguf.bak" not in output and "notes.txt" not in output,
                 "a file the pattern excludes was checked", output)
    for name in files:
        status, output = hook.run(repo, [name], env)
        expected_status = 0 if name in VALID else 1
        checks.check(status == expected_status,
                     f"{name} alone: exit status {status}, not {expected_status}", output)

    checks.start("args before the files")
    status, output = hook.run(repo, ["valid.gguf", "broken.gguf"], env, args=["--quiet"])
    checks.check(status == 1 and "GGUF2012" in output and "pass" not in output,
                 "--quiet did not reach ggufcheck", output)
    # Two of the sample's errors disabled (its misaligned and overlapping tensors cannot be:
    # they mean the file cannot be read as GGUF, and a hook's args must not pass it).
    status, output = hook.run(repo, ["broken.gguf"], env,
                              args=["--disable", "GGUF2012", "--disable", "GGUF2004"])
    checks.check(status == 1 and "GGUF2012" not in output and "GGUF2004" not in output and
                 "GGUF4001" in output, "options with values did not reach ggufcheck", output)
    status, output = hook.run(repo, ["broken.gguf"], env, args=["--disable", "GGUF4001"])
    checks.check(status == 3 and "cannot be disabled" in output,
                 "--disable of a code that ends the reading was not refused", output)
    # A user's `files:` may select other names: every file pre-commit passes is checked.
    status, output = hook.run(repo, ["weights.gguf.bak"], env)
    checks.check(status == 1 and "weights.gguf.bak:0x3b1: error[GGUF2012" in output,
                 "a file not named *.gguf was not checked", output)

    checks.start("without ggufcheck")
    bare_env = dict(env, PATH="/usr/bin:/bin")
    if shutil.which("ggufcheck", path=bare_env["PATH"]):
        checks.skipped.append("without ggufcheck: a ggufcheck is installed in /usr/bin or /bin")
    else:
        status, output = hook.run(repo, ["valid.gguf"], bare_env)
        checks.check(status == 3 and "cannot find 'ggufcheck'" in output,
                     "no clear failure without ggufcheck", output)
        status, output = hook.run(repo, ["valid.gguf"],
                                  dict(bare_env, GGUFCHECK=os.path.abspath(ggufcheck)))
        checks.check(status == 0 and "valid.gguf: pass" in output, "GGUFCHECK is not used", output)

    checks.start(".gitattributes tracks *.gguf by Git LFS, Git LFS not set up")
    with open(os.path.join(repo, ".gitattributes"), "w", encoding="utf-8") as handle:
        handle.write("*.gguf filter=lfs diff=lfs merge=lfs -text\n")
    status, output = hook.run(repo, ["valid.gguf", "lfs-pointer.gguf"], env)
    checks.check(status == 1 and "valid.gguf: note: tracked by Git LFS" in output and
                 "git lfs install" in output, "no note about the missing LFS filter", output)
    checks.check("lfs-pointer.gguf: note" not in output, "a note about a pointer", output)
    git(repo, "config", "filter.lfs.clean", "git-lfs clean -- %f", env=env)
    status, output = hook.run(repo, ["valid.gguf"], env)
    checks.check(status == 0 and "note:" not in output, "a note with the filter set up", output)
    return env


def scenario_documented(checks, hook, source, env, root):
    checks.start("the documented configurations")
    configs = []
    with open(os.path.join(source, "docs", "examples", "pre-commit-config.yaml"),
              encoding="utf-8") as handle:
        configs.append(("docs/examples/pre-commit-config.yaml", yaml.safe_load(handle)))
    with open(os.path.join(source, "docs", "github-actions.md"), encoding="utf-8") as handle:
        page = handle.read()
    for block in re.findall(r"^```yaml\n(.*?)^```", page, re.M | re.S):
        if block.startswith("repos:"):
            configs.append(("docs/github-actions.md", yaml.safe_load(block)))
    checks.check(len(configs) == 2, f"{len(configs)} documented configurations, not 2")
    repo = os.path.join(root, "repo")
    for label, config in configs:
        hooks = [h for r in config.get("repos", []) if r.get("repo", "").endswith("/ggufcheck")
                 for h in r.get("hooks", [])]
        checks.check(hooks and all(h.get("id") == hook.definition["id"] for h in hooks),
                     f"{label}: no hook, or a hook id that .pre-commit-hooks.yaml lacks: {hooks}")
        for entry in hooks:
            status, output = hook.run(repo, ["valid.gguf"], env, args=entry.get("args", []))
            checks.check(status == 0, f"{label}: args {entry.get('args')} do not pass a valid model",
                         output)


def scenario_git_lfs(checks, hook, source, env, root):
    checks.start("with Git LFS")
    if subprocess.run(["git", "lfs", "version"], env=env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        checks.skipped.append("with Git LFS: git-lfs is not installed")
        return
    origin = os.path.join(root, "lfs-origin")
    os.makedirs(origin)
    git(origin, "init", "-q", env=env)
    git(origin, "lfs", "install", "--local", env=env)
    git(origin, "lfs", "track", "*.gguf", env=env)
    shutil.copy(os.path.join(source, "examples", "valid", "tiny-llama.gguf"),
                os.path.join(origin, "model.gguf"))
    git(origin, "add", "-A", env=env)
    staged = git(origin, "cat-file", "-p", ":model.gguf", env=env).stdout
    checks.check(staged.startswith(b"version https://git-lfs.github.com/spec/v1\n"),
                 "git-lfs did not stage a pointer", staged.decode("utf-8", "replace"))
    status, output = hook.run(origin, hook.staged_files(origin, env), env)
    checks.check(status == 0 and "model.gguf: pass" in output and "note:" not in output,
                 "the model in the working tree did not pass", output)
    git(origin, "commit", "-q", "-m", "model", env=env)

    clone = os.path.join(root, "lfs-clone")
    skip_env = dict(env, GIT_LFS_SKIP_SMUDGE="1")
    subprocess.run(["git", "clone", "-q", origin, clone], env=skip_env, check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    git(clone, "lfs", "install", "--local", "--skip-smudge", env=env)
    status, output = hook.run(clone, ["model.gguf"], env)
    checks.check(status == 1 and "model.gguf: error: a Git LFS pointer" in output,
                 "the unsmudged clone's pointer was not reported", output)
    pulled = git(clone, "lfs", "pull", "--include=model.gguf", env=env, check=False)
    if pulled.returncode != 0:
        checks.skipped.append("git lfs pull from a local clone: "
                              + pulled.stdout.decode("utf-8", "replace").strip()[:200])
        return
    status, output = hook.run(clone, ["model.gguf"], env)
    checks.check(status == 0 and "model.gguf: pass" in output,
                 "after git lfs pull, as the message says, the model did not pass", output)


def scenario_pre_commit(checks, hook, source, ggufcheck, env, root):
    checks.start("pre-commit try-repo")
    if shutil.which("pre-commit", path=os.environ.get("PATH", "")) is None:
        checks.skipped.append("pre-commit try-repo: pre-commit is not installed")
        return
    pre_commit = shutil.which("pre-commit", path=os.environ.get("PATH", ""))
    # A repository holding the hook as a user's clone has it: the two files, committed.
    hook_repo = os.path.join(root, "hook-repo")
    os.makedirs(os.path.join(hook_repo, "scripts"))
    shutil.copy(os.path.join(source, ".pre-commit-hooks.yaml"), hook_repo)
    shutil.copy(os.path.join(source, "scripts", "pre-commit-hook.sh"),
                os.path.join(hook_repo, "scripts"))
    mode = os.stat(os.path.join(hook_repo, "scripts", "pre-commit-hook.sh")).st_mode
    os.chmod(os.path.join(hook_repo, "scripts", "pre-commit-hook.sh"), mode | stat.S_IXUSR)
    git(hook_repo, "init", "-q", env=env)
    git(hook_repo, "add", "-A", env=env)
    git(hook_repo, "commit", "-q", "-m", "hook", env=env)

    work = os.path.join(root, "try")
    os.makedirs(work)
    repo = make_repo(work, source, env)
    pre_commit_env = dict(env, PATH=os.pathsep.join([os.path.dirname(pre_commit), env["PATH"]]))
    completed = subprocess.run([pre_commit, "try-repo", hook_repo, "ggufcheck"], cwd=repo,
                               env=pre_commit_env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    output = completed.stdout.decode("utf-8", "replace")
    checks.check(completed.returncode == 1 and re.search(r"ggufcheck\.+Failed", output),
                 f"pre-commit exit status {completed.returncode} or no Failed line", output)
    checks.check("lfs-pointer.gguf: error: a Git LFS pointer" in output and
                 "broken.gguf:0x3b1: error[GGUF2012" in output and "valid.gguf: pass" in output and
                 "models/with space.gguf: pass" in output, "a message is missing", output)
    checks.check("weights.gguf.bak" not in output and "notes.txt" not in output,
                 "pre-commit passed a file the pattern excludes", output)

    git(repo, "rm", "-q", "--cached", "broken.gguf", "lfs-pointer.gguf", env=env)
    completed = subprocess.run([pre_commit, "try-repo", hook_repo, "ggufcheck"], cwd=repo,
                               env=pre_commit_env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    output = completed.stdout.decode("utf-8", "replace")
    checks.check(completed.returncode == 0 and re.search(r"ggufcheck\.+Passed", output),
                 f"pre-commit exit status {completed.returncode} on valid models", output)


def scenario_shellcheck(checks, hook, source):
    checks.start("shellcheck")
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        checks.skipped.append("shellcheck: not installed")
        return
    script = os.path.join(source, shlex.split(hook.definition["entry"])[0])
    completed = subprocess.run([shellcheck, script], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    checks.check(completed.returncode == 0,
                 "shellcheck: " + completed.stdout.decode("utf-8", "replace"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ggufcheck", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    source = os.path.realpath(args.source)
    if not os.access(args.ggufcheck, os.X_OK):
        print(f"test_pre_commit_hook: {args.ggufcheck} is not an executable", file=sys.stderr)
        return 1
    checks = Checks()
    hook = Hook(source)
    root = tempfile.mkdtemp(prefix="ggufcheck-pre-commit-test-")
    try:
        if check_definition(checks, hook, source):
            env = scenarios_direct(checks, hook, source, args.ggufcheck, root)
            scenario_documented(checks, hook, source, env, root)
            scenario_shellcheck(checks, hook, source)
            scenario_git_lfs(checks, hook, source, env, root)
            scenario_pre_commit(checks, hook, source, args.ggufcheck, env, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for failure in checks.failures:
        print(f"FAIL {failure}")
    for skipped in checks.skipped:
        print(f"skipped: {skipped}")
    print(f"{checks.scenarios} scenarios, {checks.count} checks, {len(checks.failures)} failed")
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())

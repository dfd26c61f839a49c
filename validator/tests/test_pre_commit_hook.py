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

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_pre_commit_hook.py
       --ggufcheck PATH --source REPO
A test per scenario (and per file name and staged file); what needs a tool that is not installed
skips, saying so.
"""

import os
import re
import shlex
import shutil
import stat
import subprocess

import pytest
# Required, not optional: python3-yaml (Debian: apt install python3-yaml).
import yaml

POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
           "size 57184\n")


def why(message, output=None):
    """A failure's message, with the hook's output when there is one."""
    return message if output is None else f"{message}\n    output: {output[-2000:]!r}"


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


@pytest.fixture(scope="module")
def real_source(source):
    return os.path.realpath(source)


@pytest.fixture(scope="module")
def hook(real_source):
    hook = Hook(real_source)
    assert hook.definition is not None, "no hook with id ggufcheck"
    return hook


def test_the_hooks_definition(hook, real_source):
    source, definition = real_source, hook.definition
    assert definition.get("language") == "script", "language is not script"
    assert definition.get("types") == ["file"], "types is not [file]"
    assert isinstance(definition.get("require_serial", False), bool) and \
        isinstance(definition.get("args", []), list) and "name" in definition, \
        "name, args or require_serial is missing or of the wrong type"
    entry = os.path.join(source, shlex.split(definition["entry"])[0])
    assert os.path.isfile(entry) and os.access(entry, os.X_OK), \
        f"the entry {entry} is not an executable file"


def test_the_entry_is_executable_in_gits_index(hook, real_source):
    listed = subprocess.run(["git", "-C", real_source, "ls-files", "-s", "--",
                             shlex.split(hook.definition["entry"])[0]], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    if listed.returncode != 0 or not listed.stdout:
        pytest.skip("the entry's mode in git's index (not a git checkout, or not added)")
    assert listed.stdout.startswith(b"100755 "), \
        "git records the entry without its executable bit (pre-commit runs it directly)"


@pytest.mark.parametrize("name", ["a.gguf", "models/with space.gguf", "MODEL.GGUF", "x.Gguf",
                                  "-x.gguf", "deep/dir/model-00001-of-00002.gguf"])
def test_the_files_pattern_selects(hook, name):
    assert hook.selects(name), f"{name!r} is not selected"


@pytest.mark.parametrize("name", ["a.gguf.bak", "notes.txt", "gguf", "a_gguf", "a.ggufx",
                                  "model.gguf/README.md", "a.gguf.lock", ".gguf/x"])
def test_the_files_pattern_leaves_out(hook, name):
    assert not hook.selects(name), f"{name!r} is selected"


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


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return str(tmp_path_factory.mktemp("pre-commit"))


@pytest.fixture(scope="module")
def env(ggufcheck, root):
    """No user or system git configuration, and ggufcheck on PATH."""
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir)
    os.symlink(os.path.abspath(ggufcheck), os.path.join(bin_dir, "ggufcheck"))
    return isolated_env(root, os.pathsep.join([bin_dir, "/usr/bin", "/bin"]))


@pytest.fixture(scope="module")
def repo(root, real_source, env):
    return make_repo(root, real_source, env)


STAGED = sorted(VALID + ["broken.gguf", "lfs-pointer.gguf"])


def test_the_staged_files_pre_commit_passes(hook, repo, env):
    files = hook.staged_files(repo, env)
    assert sorted(files) == STAGED, f"pre-commit would pass {sorted(files)}, not {STAGED}"


def test_valid_models(hook, repo, env):
    status, output = hook.run(repo, VALID, env)
    assert status == 0, why(f"exit status {status}, not 0", output)
    for name in VALID:
        shown = f"./{name}" if name.startswith(":") else name
        assert f"{shown}: pass: " in output, why(f"no pass line for {name}", output)
    assert not any(line.startswith("::") for line in output.splitlines()), \
        why("a line that would be a workflow command in GitHub Actions", output)


def test_a_broken_model(hook, repo, env):
    status, output = hook.run(repo, ["broken.gguf"], env)
    assert status == 1, why(f"exit status {status}, not 1", output)
    assert "broken.gguf:0x3b1: error[GGUF2012 non-canonical-bool]" in output, \
        why("the GGUF2012 finding is missing", output)


def test_a_git_lfs_pointer(hook, repo, env):
    status, output = hook.run(repo, ["lfs-pointer.gguf"], env)
    assert status == 1, why(f"exit status {status}, not 1", output)
    assert output.startswith("lfs-pointer.gguf: error: a Git LFS pointer (oid sha256:"
                             "4d7a214614ab..., 57184 bytes), not the model\n"), \
        why("the pointer message does not come first", output)
    assert 'git lfs pull --include="lfs-pointer.gguf"' in output and \
        "SKIP=ggufcheck git commit" in output, why("the message names no fix", output)
    assert "GGUF1002" not in output, why("ggufcheck was run on the pointer too", output)


def test_everything_staged_together(hook, repo, env):
    status, output = hook.run(repo, hook.staged_files(repo, env), env)
    assert status == 1, why(f"exit status {status}, not 1", output)
    assert "Git LFS pointer" in output and "GGUF2012" in output and \
        "valid.gguf: pass" in output, why("a message is missing", output)
    assert "weights.gguf.bak" not in output and "notes.txt" not in output, \
        why("a file the pattern excludes was checked", output)


@pytest.mark.parametrize("name", STAGED)
def test_each_staged_file_alone(hook, repo, env, name):
    status, output = hook.run(repo, [name], env)
    expected_status = 0 if name in VALID else 1
    assert status == expected_status, \
        why(f"{name} alone: exit status {status}, not {expected_status}", output)


def test_args_before_the_files(hook, repo, env):
    status, output = hook.run(repo, ["valid.gguf", "broken.gguf"], env, args=["--quiet"])
    assert status == 1 and "GGUF2012" in output and "pass" not in output, \
        why("--quiet did not reach ggufcheck", output)
    # Two of the sample's errors disabled (its misaligned and overlapping tensors cannot be:
    # they mean the file cannot be read as GGUF, and a hook's args must not pass it).
    status, output = hook.run(repo, ["broken.gguf"], env,
                              args=["--disable", "GGUF2012", "--disable", "GGUF2004"])
    assert status == 1 and "GGUF2012" not in output and "GGUF2004" not in output and \
        "GGUF4001" in output, why("options with values did not reach ggufcheck", output)
    status, output = hook.run(repo, ["broken.gguf"], env, args=["--disable", "GGUF4001"])
    assert status == 3 and "cannot be disabled" in output, \
        why("--disable of a code that ends the reading was not refused", output)
    # A user's `files:` may select other names: every file pre-commit passes is checked.
    status, output = hook.run(repo, ["weights.gguf.bak"], env)
    assert status == 1 and "weights.gguf.bak:0x3b1: error[GGUF2012" in output, \
        why("a file not named *.gguf was not checked", output)


def test_without_ggufcheck(hook, repo, env, ggufcheck):
    bare_env = dict(env, PATH="/usr/bin:/bin")
    if shutil.which("ggufcheck", path=bare_env["PATH"]):
        pytest.skip("without ggufcheck: a ggufcheck is installed in /usr/bin or /bin")
    status, output = hook.run(repo, ["valid.gguf"], bare_env)
    assert status == 3 and "cannot find 'ggufcheck'" in output, \
        why("no clear failure without ggufcheck", output)
    status, output = hook.run(repo, ["valid.gguf"],
                              dict(bare_env, GGUFCHECK=os.path.abspath(ggufcheck)))
    assert status == 0 and "valid.gguf: pass" in output, why("GGUFCHECK is not used", output)


def test_gitattributes_tracks_gguf_by_git_lfs_not_set_up(hook, root, real_source, env):
    """.gitattributes tracks *.gguf by Git LFS, Git LFS not set up (a repository of its own: the
    attributes and the filter stay out of the other tests)."""
    repo = make_repo(os.path.join(root, "attributes"), real_source, env)
    with open(os.path.join(repo, ".gitattributes"), "w", encoding="utf-8") as handle:
        handle.write("*.gguf filter=lfs diff=lfs merge=lfs -text\n")
    status, output = hook.run(repo, ["valid.gguf", "lfs-pointer.gguf"], env)
    assert status == 1 and "valid.gguf: note: tracked by Git LFS" in output and \
        "git lfs install" in output, why("no note about the missing LFS filter", output)
    assert "lfs-pointer.gguf: note" not in output, why("a note about a pointer", output)
    git(repo, "config", "filter.lfs.clean", "git-lfs clean -- %f", env=env)
    status, output = hook.run(repo, ["valid.gguf"], env)
    assert status == 0 and "note:" not in output, why("a note with the filter set up", output)


def test_the_documented_configurations(hook, real_source, repo, env):
    source = real_source
    configs = []
    with open(os.path.join(source, "docs", "examples", "pre-commit-config.yaml"),
              encoding="utf-8") as handle:
        configs.append(("docs/examples/pre-commit-config.yaml", yaml.safe_load(handle)))
    with open(os.path.join(source, "docs", "github-actions.md"), encoding="utf-8") as handle:
        page = handle.read()
    for block in re.findall(r"^```yaml\n(.*?)^```", page, re.M | re.S):
        if block.startswith("repos:"):
            configs.append(("docs/github-actions.md", yaml.safe_load(block)))
    assert len(configs) == 2, f"{len(configs)} documented configurations, not 2"
    for label, config in configs:
        hooks = [h for r in config.get("repos", []) if r.get("repo", "").endswith("/ggufcheck")
                 for h in r.get("hooks", [])]
        assert hooks and all(h.get("id") == hook.definition["id"] for h in hooks), (
            f"{label}: no hook, or a hook id that .pre-commit-hooks.yaml lacks: {hooks}")
        for entry in hooks:
            status, output = hook.run(repo, ["valid.gguf"], env, args=entry.get("args", []))
            assert status == 0, why(f"{label}: args {entry.get('args')} do not pass a valid model", output)


def test_with_git_lfs(hook, real_source, env, root):
    source = real_source
    if subprocess.run(["git", "lfs", "version"], env=env, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("with Git LFS: git-lfs is not installed")
    origin = os.path.join(root, "lfs-origin")
    os.makedirs(origin)
    git(origin, "init", "-q", env=env)
    git(origin, "lfs", "install", "--local", env=env)
    git(origin, "lfs", "track", "*.gguf", env=env)
    shutil.copy(os.path.join(source, "examples", "valid", "tiny-llama.gguf"),
                os.path.join(origin, "model.gguf"))
    git(origin, "add", "-A", env=env)
    staged = git(origin, "cat-file", "-p", ":model.gguf", env=env).stdout
    assert staged.startswith(b"version https://git-lfs.github.com/spec/v1\n"), (
        why("git-lfs did not stage a pointer", staged.decode("utf-8", "replace")))
    status, output = hook.run(origin, hook.staged_files(origin, env), env)
    assert status == 0 and "model.gguf: pass" in output and "note:" not in output, (
        why("the model in the working tree did not pass", output))
    git(origin, "commit", "-q", "-m", "model", env=env)

    clone = os.path.join(root, "lfs-clone")
    skip_env = dict(env, GIT_LFS_SKIP_SMUDGE="1")
    subprocess.run(["git", "clone", "-q", origin, clone], env=skip_env, check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    git(clone, "lfs", "install", "--local", "--skip-smudge", env=env)
    status, output = hook.run(clone, ["model.gguf"], env)
    assert status == 1 and "model.gguf: error: a Git LFS pointer" in output, (
        why("the unsmudged clone's pointer was not reported", output))
    pulled = git(clone, "lfs", "pull", "--include=model.gguf", env=env, check=False)
    if pulled.returncode != 0:
        pytest.skip("git lfs pull from a local clone: "
                    + pulled.stdout.decode("utf-8", "replace").strip()[:200])
    status, output = hook.run(clone, ["model.gguf"], env)
    assert status == 0 and "model.gguf: pass" in output, (
        why("after git lfs pull, as the message says, the model did not pass", output))


def test_pre_commit_try_repo(real_source, env, root):
    source = real_source
    if shutil.which("pre-commit", path=os.environ.get("PATH", "")) is None:
        pytest.skip("pre-commit try-repo: pre-commit is not installed")
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
    assert completed.returncode == 1 and re.search(r"ggufcheck\.+Failed", output), (
        why(f"pre-commit exit status {completed.returncode} or no Failed line", output))
    assert ("lfs-pointer.gguf: error: a Git LFS pointer" in output and
        "broken.gguf:0x3b1: error[GGUF2012" in output and "valid.gguf: pass" in output and
        "models/with space.gguf: pass" in output), why("a message is missing", output)
    assert "weights.gguf.bak" not in output and "notes.txt" not in output, (
        why("pre-commit passed a file the pattern excludes", output))

    git(repo, "rm", "-q", "--cached", "broken.gguf", "lfs-pointer.gguf", env=env)
    completed = subprocess.run([pre_commit, "try-repo", hook_repo, "ggufcheck"], cwd=repo,
                               env=pre_commit_env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    output = completed.stdout.decode("utf-8", "replace")
    assert completed.returncode == 0 and re.search(r"ggufcheck\.+Passed", output), (
        why(f"pre-commit exit status {completed.returncode} on valid models", output))


def test_shellcheck(hook, real_source):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck: not installed")
    script = os.path.join(real_source, shlex.split(hook.definition["entry"])[0])
    completed = subprocess.run([shellcheck, script], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    assert completed.returncode == 0, "shellcheck: " + completed.stdout.decode("utf-8", "replace")

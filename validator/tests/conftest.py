"""What the Python tests of this folder share under pytest: the options ctest passes them
(validator/tests/CMakeLists.txt: the built command, the repository, ...), the markers that pick a
mode of test_template_judge.py, and ctest's skip status.

Run one by hand, with the dev build made:

    /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs validator/tests/test_doc_links.py \
        --ggufcheck build/dev/validator/ggufcheck --source .
"""

import os
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]

PATH_OPTIONS = {
    "--ggufcheck": "the built ggufcheck command",
    "--source": f"the repository's root (default: {SOURCE})",
    "--testkit-files": "the built ggufcheck_testkit_files, which writes every code's example file",
    "--share": "the build's share/ directory: the man page and the shell completions",
    "--judge": "llama-gguf-hash built from the pinned llama.cpp tree (llama_gguf_hash_judge)",
    "--llama-cpp": "the pinned llama.cpp tree (default: SOURCE/.deps/conformance/llama.cpp)",
}
FIGURES = pytest.StashKey()
# ctest's SKIP_RETURN_CODE: a run in which every test skipped (an optional dependency or the
# pinned llama.cpp tree is missing) shows as skipped, not as passed.
SKIPPED_STATUS = 77


def pytest_addoption(parser):
    group = parser.getgroup("ggufcheck")
    for name, text in PATH_OPTIONS.items():
        group.addoption(name, help=text)
    group.addoption("--update", action="store_true",
                    default=os.environ.get("GGUFCHECK_UPDATE_DOCS") == "1",
                    help="test_diagnostic_pages.py: rewrite the generated parts of "
                         "docs/diagnostics/ instead of comparing them (scripts/update-diagnostic-pages)")
    group.addoption("--jobs", type=int, default=2,
                    help="the template judges' parallel children (default 2)")
    group.addoption("--judge-timeout", type=float, default=None,
                    help="seconds per template for the Jinja2 judges (default: the judge's own)")


def pytest_configure(config):
    for marker, text in (("judge", "the chat templates against Jinja2's sandbox (ctest chat_templates)"),
                         ("pinned", "the pinned llama.cpp's templates under strict "
                                    "(ctest pinned_templates_pass_strict)"),
                         ("self_check", "the template test set and the judge, without ggufcheck")):
        config.addinivalue_line("markers", f"{marker}: {text}")


def path_option(config, name, required=True):
    """The absolute path an option names; a usage error when a required one is missing."""
    value = config.getoption(name)
    if value is None and name == "--source":
        return str(SOURCE)
    if value is None and name == "--llama-cpp":
        return os.path.join(path_option(config, "--source"), ".deps", "conformance", "llama.cpp")
    if value is None:
        if required:
            raise pytest.UsageError(f"{name} is required: {PATH_OPTIONS[name]}")
        return None
    return os.path.abspath(value)


@pytest.fixture(scope="session")
def source(pytestconfig):
    return path_option(pytestconfig, "--source")


@pytest.fixture(scope="session")
def ggufcheck(pytestconfig):
    path = path_option(pytestconfig, "--ggufcheck")
    assert os.access(path, os.X_OK), f"{path} is not an executable"
    return path


@pytest.fixture(scope="session")
def llama_cpp(pytestconfig):
    return path_option(pytestconfig, "--llama-cpp")


@pytest.fixture(scope="session")
def figures(pytestconfig):
    """Lines shown after the results, whatever pytest's capture: a differential's figures."""
    return pytestconfig.stash.setdefault(FIGURES, [])


def pytest_terminal_summary(terminalreporter, config):
    lines = config.stash.get(FIGURES, [])
    if lines:
        terminalreporter.section("figures")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    stats = reporter.stats if reporter is not None else {}
    if exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED) and \
            stats.get("skipped") and not stats.get("passed"):
        session.exitstatus = SKIPPED_STATUS

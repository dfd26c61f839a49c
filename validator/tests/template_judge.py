#!/usr/bin/python3
"""What Jinja2 makes of chat templates: the independent judge of ggufcheck's template checks.

For each template file it answers one verdict, the way Hugging Face transformers runs a chat
template (an ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and the loopcontrols
extension, plus transformers' `generation` tag, `tojson` filter, `raise_exception` and
`strftime_now`):

- `syntax-error`   Jinja2 cannot parse or compile it (TemplateSyntaxError; also a parser that runs
                   out of stack, RecursionError, or Python refusing the compiled code)
- `security-error` the sandbox refused it (jinja2.exceptions.SecurityError) in at least one of the
                   conversations it was rendered with; `refusal` says why: `escape` (an unsafe or
                   private attribute, an unsafe callable: what a sandbox escape runs into) or
                   `mutation` (only a method that modifies a list or dict, such as list.append,
                   which the immutable sandbox refuses and the plain sandbox allows)
- `render-error`   it parsed, the sandbox did not object, but no conversation rendered (it raised:
                   raise_exception on purpose, an undefined value called, the sandbox's range
                   limit, the memory limit, a recursion that ran out of stack...)
- `timeout`        a render did not finish within the time limit
- `ok`             at least one conversation rendered and the sandbox objected to none

Templates are only ever rendered in the sandbox, each in a child process with an address-space
limit (RLIMIT_AS), a CPU limit and a timer of its CPU time (a wall-clock guard only against a hang). There is no unsandboxed mode.

Usage: template_judge.py [--llama-cpp-templates DIR] [--timeout S] [-j N] [--summary] [PATH...]
PATH is a template file or a folder of *.jinja files; without any PATH (and without
--llama-cpp-templates) the test set next to this script (templates/) is judged. Writes one JSON
line per template: {"file": ..., "verdict": ..., "detail": ...} (and "refusal" with
security-error).
"""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys

VERDICTS = ("ok", "security-error", "syntax-error", "render-error", "timeout")
HERE = os.path.dirname(os.path.abspath(__file__))
TEST_SET = os.path.join(HERE, "templates")
DEFAULT_TIMEOUT = 5.0  # seconds of the child's CPU time
# Only against a child that hangs without using CPU; generous, so that load never decides a verdict.
WALL_CLOCK_GUARD = 300
MEMORY_LIMIT = 1 << 30  # bytes of address space for a child

# --- the conversations a template is rendered with ----------------------------------------------

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name"},
                           "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
            "required": ["city"],
        },
    },
}]

FULL = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Paris?"},
    {"role": "assistant", "content": "",
     "tool_calls": [{"id": "call_0001", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "call_0001", "name": "get_weather",
     "content": "{\"temperature\": 18, \"unit\": \"celsius\"}"},
    {"role": "assistant", "content": "It is 18 degrees Celsius in Paris."},
    {"role": "user", "content": "Thanks! And tomorrow?"},
]

SIMPLE = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Hello!"},
    {"role": "assistant", "content": "Hi! How can I help you today?"},
    {"role": "user", "content": "Tell me a joke."},
]

MINIMAL = [{"role": "user", "content": "Hello!"}]

# In every conversation: the special tokens, and what llama.cpp adds (common_chat_extra_context).
EXTRA = {"bos_token": "<s>", "eos_token": "</s>", "datetime": "Jan 15 2026",
         "date_string": "15 Jan 2026"}

# (name, variables): the full conversation first, its error is the one reported when all fail.
CONVERSATIONS = [
    ("tools", {"messages": FULL, "tools": TOOLS, "add_generation_prompt": True}),
    ("simple", {"messages": SIMPLE, "add_generation_prompt": True}),
    ("minimal", {"messages": MINIMAL, "add_generation_prompt": False}),
]


# --- one template, in the child ------------------------------------------------------------------

def _environments():
    import datetime
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEnvironment

    class Generation(Extension):
        """transformers' {% generation %}...{% endgeneration %} (AssistantTracker): renders the body."""
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    class Raised(jinja2.TemplateError):
        pass

    def raise_exception(message):
        raise Raised(message)

    def strftime_now(fmt):
        # A fixed date: the verdict must not depend on the day it is run.
        return datetime.datetime(2026, 1, 15, 12, 0, 0).strftime(fmt)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # transformers' tojson: json.dumps, no HTML escaping
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    options = dict(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, Generation])
    plain = jinja2.Environment(**options)
    sandboxes = []
    for kind in (ImmutableSandboxedEnvironment, SandboxedEnvironment):
        sandbox = kind(**options)
        sandbox.filters["tojson"] = tojson
        sandbox.globals["raise_exception"] = raise_exception
        sandbox.globals["strftime_now"] = strftime_now
        sandboxes.append(sandbox)
    return plain, sandboxes[0], sandboxes[1], Raised


def _describe(e):
    text = str(e).replace("\n", " ")
    if len(text) > 200:
        text = text[:200] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _refusal(mutable, source, context):
    """Why the immutable sandbox refused: `mutation` when the mutable sandbox (SandboxedEnvironment)
    renders the same conversation without a SecurityError (the template only called a method that
    modifies a list or dict, such as list.append), else `escape` (an unsafe attribute, a private
    name, an unsafe callable: what the sandbox is there to stop)."""
    from jinja2.exceptions import SecurityError
    try:
        mutable.from_string(source).render(**context)
    except SecurityError:
        return "escape"
    except Exception:
        pass
    return "mutation"


def judge_source(source):
    """(verdict, detail, refusal) for one template's text; refusal is None unless the verdict is
    security-error. Runs it in the sandbox: call it in a child."""
    import jinja2
    from jinja2.exceptions import SecurityError, TemplateSyntaxError
    plain, sandbox, mutable, Raised = _environments()
    try:
        plain.parse(source)
    except TemplateSyntaxError as e:
        return "syntax-error", f"line {e.lineno}: {e.message}", None
    except RecursionError:
        return "syntax-error", "RecursionError: the parser ran out of stack (nesting too deep)", None
    try:
        template = sandbox.from_string(source)
    except TemplateSyntaxError as e:
        return "syntax-error", f"line {e.lineno}: {e.message}", None
    except (RecursionError, SyntaxError, MemoryError) as e:
        return "syntax-error", f"compiling: {_describe(e)}", None
    rendered = []
    errors = []
    for name, variables in CONVERSATIONS:
        context = dict(EXTRA, **variables)
        try:
            template.render(**context)
            rendered.append(name)
        except TimeoutError:
            raise  # the alarm: the whole template ran out of time
        except SecurityError as e:
            return "security-error", f"{name}: {_describe(e)}", _refusal(mutable, source, context)
        except Raised as e:
            errors.append(f"{name}: raise_exception: {e}")
        except jinja2.TemplateError as e:
            errors.append(f"{name}: {_describe(e)}")
        except MemoryError:
            errors.append(f"{name}: MemoryError: over the {MEMORY_LIMIT >> 20} MiB address-space limit")
        except Exception as e:  # what the template's Python calls raise: TypeError, OverflowError...
            errors.append(f"{name}: {_describe(e)}")
    if rendered:
        return "ok", "rendered: " + ", ".join(rendered), None
    return "render-error", errors[0], None


def limit_child(timeout):
    """A judging child's limits: its address space, and its CPU time (TimeoutError past
    `timeout` s; not wall-clock time, so that a child starved on a loaded machine is not cut
    short). template_reach.py's children use it too."""
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    cpu = int(timeout) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    def on_alarm(signum, frame):
        raise TimeoutError()

    signal.signal(signal.SIGPROF, on_alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)


def child_main(path, timeout):
    limit_child(timeout)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            source = f.read()
        verdict, detail, refusal = judge_source(source)
    except TimeoutError:
        verdict, detail, refusal = "timeout", f"did not finish within {timeout:g} s", None
    signal.setitimer(signal.ITIMER_PROF, 0)
    result = {"verdict": verdict, "detail": detail}
    if refusal:
        result["refusal"] = refusal
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


# --- the parent: one child per template ----------------------------------------------------------

def judge_file(path, timeout=DEFAULT_TIMEOUT):
    """{"file", "verdict", "detail"} for one template file, judged in a child process."""
    command = [sys.executable, "-I", os.path.abspath(__file__), "--child", path,
               "--timeout", str(timeout)]
    try:
        p = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=WALL_CLOCK_GUARD)
    except subprocess.TimeoutExpired:
        return {"file": path, "verdict": "timeout",
                "detail": f"the child was killed after {timeout + 10:g} s"}
    out = p.stdout.decode("utf-8", "replace").strip().splitlines()
    if p.returncode == 0 and out:
        result = json.loads(out[-1])
        return dict({"file": path}, **result)
    if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"file": path, "verdict": "timeout",
                "detail": f"the child hit its CPU limit (signal {-p.returncode})"}
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    last = err[-1] if err else f"exit status {p.returncode}"
    if "MemoryError" in last:
        return {"file": path, "verdict": "render-error",
                "detail": f"MemoryError: over the {MEMORY_LIMIT >> 20} MiB address-space limit"}
    if "No module named 'jinja2'" in last:
        raise SystemExit(f"template_judge.py: {sys.executable} has no jinja2 (Debian: python3-jinja2)")
    return {"file": path, "verdict": "render-error", "detail": f"the child failed: {last}"}


def template_files(path):
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".jinja"))
    return [path]


def judge_all(paths, timeout=DEFAULT_TIMEOUT, jobs=2):
    """Judge every file, in order; returns the list of results."""
    files = [f for p in paths for f in template_files(p)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda f: judge_file(f, timeout), files))


def summary(results):
    counts = {v: 0 for v in VERDICTS}
    for r in results:
        counts[r["verdict"]] += 1
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="template files or folders of *.jinja")
    parser.add_argument("--llama-cpp-templates", metavar="DIR",
                        help="also judge every *.jinja of llama.cpp's models/templates")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds a template may take (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="children at a time (default 2)")
    parser.add_argument("--summary", action="store_true",
                        help="print the verdict counts on standard error")
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        return child_main(a.child, a.timeout)
    try:
        import jinja2  # noqa: F401  (checked here, so that a missing jinja2 is said once)
    except ImportError:
        print(f"template_judge.py: {sys.executable} has no jinja2 (Debian: python3-jinja2)",
              file=sys.stderr)
        return 3
    paths = list(a.paths)
    if a.llama_cpp_templates:
        paths.append(a.llama_cpp_templates)
    if not paths:
        paths = [TEST_SET]
    results = judge_all(paths, a.timeout, a.jobs)
    for r in results:
        sys.stdout.write(json.dumps(r, ensure_ascii=False) + "\n")
    if a.summary:
        counts = summary(results)
        print(f"{len(results)} templates: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Does rendering a chat template reach code? The judge of ggufcheck's code-execution checks.

template_judge.py asks Jinja2's sandbox, which refuses an unsafe attribute before it is read.
This judge renders each template the way an unprotected server does, with a PLAIN
jinja2.Environment (trim_blocks, lstrip_blocks, loopcontrols, transformers' generation tag,
tojson, raise_exception and strftime_now), and watches what the render touches:

- an attribute read by name (environment.getattr and getitem, which Jinja2 uses for `x.name`,
  `x[name]` and the attribute paths of map, selectattr, sort, groupby, sum, min, max, unique and
  join; the `attr` filter; the fields of str.format and str.format_map) that succeeds with a
  name starting with '_', or whose value is a module, a module's globals, a code object, a
  frame, a traceback or a builtin function of Python's (eval, exec, getattr, __import__ ...);
- an audit event (sys.addaudithook, installed after the template is compiled, so that only the
  render counts) that means running or reading outside the template: import, exec, compile,
  open, os.system, os.exec*, os.posix_spawn, os.fork, subprocess.Popen, socket, ctypes ... The
  hook also refuses them (it raises), so a payload never runs its command.

Verdict per template: `reached` (with what, the first few) or `clean` (rendered or failed
without touching any of it), or `syntax-error` (Jinja2 cannot parse it), `timeout`.

Each template is rendered in a child process with an address-space limit (RLIMIT_AS), a CPU
limit and a timer of its CPU time (a wall-clock guard only against a hang), with the conversations of template_judge.py.

Usage: template_reach.py [--timeout S] [-j N] FILE...
Writes one JSON line per template: {"file", "verdict", "detail"}.
"""

import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TIMEOUT = 5.0  # seconds of the child's CPU time
# Only against a child that hangs without using CPU; generous, so that load never decides a verdict.
WALL_CLOCK_GUARD = 300
VERDICTS = ("reached", "clean", "syntax-error", "timeout")

# Audit events that mean the render left the template (prefixes).
EVENTS = ("import", "exec", "compile", "open", "os.", "subprocess.", "socket.", "ctypes.",
          "shutil.", "pty.", "code.", "marshal.", "pickle.", "urllib.", "http.", "ftplib.",
          "smtplib.", "webbrowser.", "builtins.input", "sys._getframe", "sys.settrace",
          "sys.setprofile", "object.__setattr__", "object.__delattr__", "function.__new__",
          "cpython.run_", "gc.get_referrers", "gc.get_objects")


class Reached(BaseException):
    """Raised by the audit hook: stops the operation (BaseException, so no template catches it)."""


def _tracing_environment(seen):
    import types
    import jinja2
    from string import Formatter
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.runtime import Undefined

    sys.path.insert(0, HERE)
    import template_judge  # noqa: E402  (the same conversations and transformers' additions)

    def dangerous_value(value):
        if isinstance(value, (types.ModuleType, types.CodeType, types.FrameType,
                              types.TracebackType)):
            return type(value).__name__
        if isinstance(value, dict) and "__builtins__" in value and "__name__" in value:
            return "a module's globals"
        if isinstance(value, types.BuiltinFunctionType) and value.__module__ == "builtins" and \
                value.__name__ in ("eval", "exec", "compile", "getattr", "setattr", "__import__",
                                   "open", "globals", "locals", "vars", "breakpoint", "input"):
            return f"builtin {value.__name__}"
        return None

    def note(obj, name, value):
        if isinstance(value, Undefined):
            return value
        what = None
        if isinstance(name, str) and name.startswith("_"):
            what = f"'{name}' of {type(obj).__name__}"
        kind = dangerous_value(value)
        if kind:
            what = f"{what or repr(name)}: {kind}"
        if what and len(seen) < 8:
            seen.append(what)
        return value

    class TracingFormatter(Formatter):
        """str.format as Python runs it, each field's attribute and item read noted."""

        def get_field(self, field_name, args, kwargs):
            first, rest = _formatter_field_name_split(field_name)
            obj = self.get_value(first, args, kwargs)
            for is_attr, i in rest:
                obj = note(obj, i, getattr(obj, i) if is_attr else obj[i])
            return obj, first

    from _string import formatter_field_name_split as _formatter_field_name_split

    def traced_format(value):
        if not isinstance(value, (types.MethodType, types.BuiltinMethodType)) or \
                getattr(value, "__name__", None) not in ("format", "format_map") or \
                not isinstance(getattr(value, "__self__", None), str):
            return None
        text = value.__self__
        vformat = TracingFormatter().vformat
        if value.__name__ == "format_map":
            return lambda mapping: vformat(text, (), mapping)
        return lambda *args, **kwargs: vformat(text, args, kwargs)

    class Tracing(jinja2.Environment):
        """A plain Environment (no sandbox: nothing refused) that notes what its lookups reach."""

        def getattr(self, obj, attribute):
            value = super().getattr(obj, attribute)
            return traced_format(value) or note(obj, attribute, value)

        def getitem(self, obj, argument):
            value = super().getitem(obj, argument)
            return traced_format(value) or note(obj, argument, value)

        def handle_exception(self, source=None):
            # Raise as it is: Jinja2's own handler rewrites the traceback by compiling code,
            # which the audit hook would count as the template's doing.
            _, error, traceback = sys.exc_info()
            raise error.with_traceback(traceback)

    class Generation(Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.Scope(body, lineno=lineno)

    env = Tracing(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols, Generation])
    plain_attr = env.filters["attr"]

    def traced_attr(environment, obj, name):
        return note(obj, name, plain_attr(environment, obj, name))

    traced_attr.jinja_pass_arg = plain_attr.jinja_pass_arg
    env.filters["attr"] = traced_attr

    def raise_exception(message):
        raise jinja2.TemplateError(message)

    def strftime_now(fmt):
        import datetime
        return datetime.datetime(2026, 1, 15, 12, 0, 0).strftime(fmt)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env, template_judge


def judge_source(source, seen, events):
    """(verdict, detail) for one template's text. Renders it unsandboxed: call it in a child.
    What the render touches is appended to `seen` and `events` as it happens, so that a render
    stopped by the timer still tells what it reached."""
    import jinja2
    env, template_judge = _tracing_environment(seen)
    try:
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as e:
        return "syntax-error", f"line {e.lineno}: {e.message}"
    except (RecursionError, SyntaxError, MemoryError, ValueError) as e:
        return "syntax-error", f"compiling: {type(e).__name__}"
    import datetime  # noqa: F401  (strftime_now's: imported before the hook counts imports)

    def hook(event, args):
        if event.startswith(EVENTS):
            if len(events) < 8:
                events.append(event)
            raise Reached(event)

    sys.addaudithook(hook)
    rendered = []
    for name, variables in template_judge.CONVERSATIONS:
        context = dict(template_judge.EXTRA, **variables)
        try:
            template.render(**context)
            rendered.append(name)
        except TimeoutError:
            raise
        except Reached:
            pass
        except Exception:  # noqa: BLE001  (a payload's render may fail any way after it reached)
            pass
    return reached(seen, events) or ("clean",
                                     "rendered: " + (", ".join(rendered) if rendered else "none"))


def reached(seen, events):
    if seen or events:
        return "reached", "; ".join(seen + [f"audit event {e}" for e in events])
    return None


def child_main(path, timeout):
    sys.path.insert(0, HERE)
    import template_judge  # noqa: E402  (its children's limits, shared)
    template_judge.limit_child(timeout)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        source = f.read()
    seen, events = [], []
    try:
        verdict, detail = judge_source(source, seen, events)
    except (TimeoutError, MemoryError, RecursionError) as e:
        verdict, detail = reached(seen, events) or (
            "timeout" if isinstance(e, TimeoutError) else "clean",
            f"did not finish within {timeout:g} s" if isinstance(e, TimeoutError)
            else type(e).__name__)
    signal.setitimer(signal.ITIMER_PROF, 0)
    sys.stdout.write(json.dumps({"verdict": verdict, "detail": detail}) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter shutdown under the audit hook


def judge_file(path, timeout=DEFAULT_TIMEOUT):
    command = [sys.executable, "-I", os.path.abspath(__file__), "--child", path,
               "--timeout", str(timeout)]
    try:
        p = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=WALL_CLOCK_GUARD)
    except subprocess.TimeoutExpired:
        return {"file": path, "verdict": "timeout", "detail": "the child was killed"}
    out = p.stdout.decode("utf-8", "replace").strip().splitlines()
    if p.returncode == 0 and out:
        return dict({"file": path}, **json.loads(out[-1]))
    if p.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return {"file": path, "verdict": "timeout", "detail": f"signal {-p.returncode}"}
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    if err and "No module named 'jinja2'" in err[-1]:
        raise SystemExit(f"template_reach.py: {sys.executable} has no jinja2 (Debian: python3-jinja2)")
    # A child that died otherwise (out of memory while rendering) touched nothing we saw.
    return {"file": path, "verdict": "clean",
            "detail": f"the child failed: {err[-1] if err else p.returncode}"}


def judge_all(files, timeout=DEFAULT_TIMEOUT, jobs=2):
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda f: judge_file(f, timeout), files))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--child", metavar="FILE", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        return child_main(a.child, a.timeout)
    for r in judge_all(a.files, a.timeout, a.jobs):
        sys.stdout.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Running an adapter on one case file: one-shot (`ADAPTER FILE`) or through a batch process
(`ADAPTER --batch`, one path per line in, one JSON line out), under the timeout and the
memory cap (limits.py), into a RawResult: accepted (with its JSON), rejected, crash, timeout
or oom. Nothing here knows the expected verdict: judge.py does that.

Every adapter process is the leader of its own process group, so that a timeout or the cap
kills whatever it started as well. A batch process that crashed, hung or went over the cap
is killed, and the next case of its worker starts a new one. A new batch process is first
given a warm-up file (a valid 24-byte GGUF without metadata or tensors) with a generous
start-up timeout, so that the interpreter's start-up is not charged to the first case.
"""
import json
import os
import re
import select
import signal
import struct
import subprocess
import tempfile
import threading
import time

from . import limits

SAMPLE_INTERVAL = 0.02           # seconds between resident-memory samples (after the first)
# A case's timeout is of the adapter's CPU time as well as of the clock: it times out when both
# have passed the timeout (a loaded machine slows the clock's share, not the work), or when the
# clock alone has passed HANG_FACTOR times the timeout (a process blocked without using CPU).
HANG_FACTOR = 10
MAX_STDOUT = 512 << 20           # an adapter printing more than this has crashed
STDERR_TAIL = 64 << 10           # the part of stderr looked at for OOM signs and details
WARMUP_GGUF = b"GGUF" + struct.pack("<IQQ", 3, 0, 0)


class RawResult:
    """What an adapter did with a file. kind: accepted, rejected, crash, timeout, oom."""
    __slots__ = ("kind", "doc", "error", "exit", "signal", "duration", "peak_rss")

    def __init__(self, kind, doc=None, error=None, exit=None, signal_name=None,
                 duration=0.0, peak_rss=None):
        self.kind = kind
        self.doc = doc
        self.error = error
        self.exit = exit
        self.signal = signal_name
        self.duration = duration
        self.peak_rss = peak_rss


def signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def parse_answer(text, exit_status):
    """The adapter's JSON against its exit status: (kind, doc, error) with kind accepted,
    rejected or crash (error is then what is wrong); doc is the answer, for either verdict."""
    stripped = text.strip()
    if not stripped:
        return "crash", None, f"exit status {exit_status} with nothing on stdout"
    try:
        answer = json.loads(stripped)
    except RecursionError:
        answer = _too_deep(stripped)
        if answer is None:
            return "crash", None, f"stdout is not JSON: {_snippet(stripped)}"
    except ValueError:
        return "crash", None, f"stdout is not JSON: {_snippet(stripped)}"
    if not isinstance(answer, dict) or not isinstance(answer.get("ok"), bool):
        return "crash", None, f'stdout has no "ok": true|false: {_snippet(stripped)}'
    if answer["ok"] and exit_status != 0:
        return "crash", None, f'"ok": true with exit status {exit_status}'
    if not answer["ok"] and exit_status != 1:
        return "crash", None, f'"ok": false with exit status {exit_status}'
    if answer["ok"]:
        return "accepted", answer, None
    error = answer.get("error")
    # the answer is kept: a data check's rejection names its tensor
    return "rejected", answer, error if isinstance(error, str) else json.dumps(error)


TOO_DEEP = "__nested_too_deeply__"
_OK_FIRST = re.compile(r'\{\s*"ok"\s*:\s*(true|false)\s*[,}]')


def _too_deep(text):
    """An answer nested too deeply for the JSON reader (deeper than the recursion limit,
    cli.py sets 20000): its verdict from a leading "ok", its values marked unreadable."""
    match = _OK_FIRST.match(text)
    if not match:
        return None
    return {"ok": match.group(1) == "true", TOO_DEEP: True}


def _snippet(text, width=80):
    text = text.replace("\n", " ")
    return repr(text[:width] + ("..." if len(text) > width else ""))


_FRAME = re.compile(r"at |File \"|Traceback \(most recent|Node\.js v\d|\^+$|\d+: 0x[0-9a-f]+ ")
_ERROR = re.compile(r"Error|Exception|error:|terminate called|what\(\)|panic|Assertion|FATAL|"
                    r"Segmentation|Aborted", re.IGNORECASE)


def _stderr_summary(text):
    """The line of stderr that says what went wrong: the last error-looking line that is not
    a stack frame (JS "at ...", Python "File ..."), else the last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    lines = [line for line in lines if not _FRAME.match(line)] or lines
    if not lines:
        return ""
    errors = [line for line in lines if _ERROR.search(line)]
    line = (errors or lines)[-1]
    return line if len(line) <= 200 else line[:200] + "..."


def _crash_or_oom(detail, stderr_text, exit_status=None, signal_text=None, duration=0.0,
                  peak=None):
    sign = limits.oom_sign(stderr_text)
    if sign:
        return RawResult("oom", error=f"{detail}; stderr shows {sign!r}", exit=exit_status,
                         signal_name=signal_text, duration=duration, peak_rss=peak)
    last = _stderr_summary(stderr_text)
    if last:
        detail += f"; stderr: {last}"
    return RawResult("crash", error=detail, exit=exit_status, signal_name=signal_text,
                     duration=duration, peak_rss=peak)


_LIVE = set()                    # process groups of running adapters, for kill_all()
_LIVE_LOCK = threading.Lock()


def kill_all():
    """Kills every adapter process group still running (the runner was interrupted)."""
    with _LIVE_LOCK:
        groups = list(_LIVE)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Deadline:
    """A case's timeout from `start`: clock is when the clock passes it, hang when the clock
    passes HANG_FACTOR times it (see HANG_FACTOR)."""
    __slots__ = ("seconds", "clock", "hang")

    def __init__(self, start, seconds, factor=HANG_FACTOR):
        self.seconds = seconds
        self.clock = start + seconds
        self.hang = start + seconds * factor

    @classmethod
    def of_clock(cls, seconds):
        """A deadline of the clock alone, from now (a moment given to a process to exit)."""
        return cls(time.monotonic(), seconds, factor=1)


class _Process:
    """One adapter process: its stdout read without blocking, its stderr in a temp file, its
    memory sampled while the runner waits."""

    def __init__(self, argv, memory_cap, batch):
        self.memory_cap = memory_cap
        self.stderr = tempfile.TemporaryFile()
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE if batch else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True,
            preexec_fn=limits.child_setup(memory_cap), close_fds=True)
        self.pid = self.popen.pid
        with _LIVE_LOCK:
            _LIVE.add(self.pid)
        self.fd = self.popen.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.buffer = bytearray()
        self.peak = 0
        self.last_rss = 0
        self.next_sample = 0.0
        self.samples = 0
        self.status = None          # (exit, signal name) once reaped
        self.cpu_start = 0.0        # the tree's CPU seconds when the current case began
        self.cpu_over = False       # whether the current case has used its timeout of CPU

    def _sample(self, now):
        if now < self.next_sample:
            return False
        # 1, 2, 4 ... ms after the start, then every SAMPLE_INTERVAL: short runs get samples
        self.samples += 1
        self.next_sample = now + min(SAMPLE_INTERVAL, 0.0005 * (1 << min(self.samples, 8)))
        rss = limits.tree_rss(self.pid)
        self.last_rss = rss
        self.peak = max(self.peak, rss, limits.peak_rss(self.pid) or 0)
        return bool(self.memory_cap) and rss > self.memory_cap

    def exited(self):
        """Whether the process has exited (without reaping it)."""
        if self.status is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def begin_case(self):
        """The current case's CPU time counts from now."""
        self.cpu_start = limits.tree_cpu(self.pid)
        self.cpu_over = False

    def _timed_out(self, now, deadline):
        """Past the deadline (a Deadline) in both clock and CPU time, or past its hang limit."""
        if now >= deadline.hang:
            return True
        if now < deadline.clock:
            return False
        if not self.cpu_over:
            self.cpu_over = limits.tree_cpu(self.pid) - self.cpu_start >= deadline.seconds
        return self.cpu_over

    def pump(self, deadline, want_line):
        """Reads stdout until a line (want_line) or EOF. Returns line, eof, exited (the
        process exited but something else holds its stdout), timeout, oom or toolong."""
        while True:
            now = time.monotonic()
            if self._sample(now):
                return "oom"
            if self._timed_out(now, deadline):
                return "timeout"
            ready, _, _ = select.select([self.fd], [], [],
                                        max(0.0, min(self.next_sample, deadline.hang) - now))
            if ready:
                try:
                    data = os.read(self.fd, 1 << 20)
                except BlockingIOError:
                    continue
                if not data:
                    return "eof"
                self.buffer += data
                if len(self.buffer) > MAX_STDOUT:
                    return "toolong"
                if want_line and b"\n" in data:
                    return "line"
            elif not want_line and self.exited():
                self._drain()
                return "exited"

    def _drain(self):
        while True:
            try:
                data = os.read(self.fd, 1 << 20)
            except (BlockingIOError, OSError):
                return
            if not data:
                return
            self.buffer += data

    def wait_exit(self, deadline):
        """Waits (sampling memory) until the process exits: exited, timeout or oom."""
        while not self.exited():
            now = time.monotonic()
            if self._sample(now):
                return "oom"
            if self._timed_out(now, deadline):
                return "timeout"
            time.sleep(0.002)
        return "exited"

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def reap(self):
        """Kills what is left of the process group, reaps the process: (exit, signal)."""
        if self.status is not None:
            return self.status
        self.kill()
        try:
            # (not wait4's ru_maxrss: it counts the runner's own memory, copied at fork)
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        with _LIVE_LOCK:
            _LIVE.discard(self.pid)
        if os.WIFSIGNALED(status):
            self.status = (None, signal_name(os.WTERMSIG(status)))
            self.popen.returncode = -os.WTERMSIG(status)
        else:
            self.status = (os.WEXITSTATUS(status), None)
            self.popen.returncode = self.status[0]
        for stream in (self.popen.stdout, self.popen.stdin):
            if stream:
                try:
                    stream.close()
                except OSError:
                    pass
        return self.status

    def stderr_since(self, offset):
        size = os.fstat(self.stderr.fileno()).st_size
        start = max(offset, size - STDERR_TAIL)
        self.stderr.seek(start)
        return self.stderr.read(size - start).decode("utf-8", "replace")

    def stderr_size(self):
        return os.fstat(self.stderr.fileno()).st_size

    def close(self):
        self.reap()
        self.stderr.close()


def run_process(argv, timeout, memory_cap):
    """Runs argv to its end: (reason, exit, signal name, stdout bytes, stderr text, last
    resident bytes, duration, peak bytes); reason is exited, timeout, oom or toolong, or
    cannot-start (stderr text then says why)."""
    start = time.monotonic()
    deadline = Deadline(start, timeout)
    try:
        process = _Process(argv, memory_cap, batch=False)
    except OSError as error:
        return ("cannot-start", None, None, b"", f"cannot start {argv[0]}: {error.strerror}",
                0, 0.0, None)
    try:
        reason = process.pump(deadline, want_line=False)
        if reason == "eof":
            reason = process.wait_exit(deadline)
        duration = time.monotonic() - start
        exit_status, signal_text = process.reap()
        peak = process.peak or None
        return (reason, exit_status, signal_text, bytes(process.buffer),
                process.stderr_since(0), process.last_rss, duration, peak)
    finally:
        process.close()


def run_once(argv, path, timeout, memory_cap):
    """`ADAPTER FILE`: a RawResult."""
    reason, exit_status, signal_text, stdout, stderr_text, rss, duration, peak = \
        run_process(argv + [path], timeout, memory_cap)
    if reason == "cannot-start":
        return RawResult("crash", error=stderr_text)
    return _classify(reason, exit_status, signal_text, stdout, stderr_text, timeout, memory_cap,
                     rss, duration, peak)


def _classify(reason, exit_status, signal_text, stdout, stderr_text, timeout, memory_cap, rss,
              duration, peak):
    if reason == "timeout":
        return RawResult("timeout", error=f"no answer within {timeout:g} s", duration=duration,
                         peak_rss=peak)
    if reason == "oom":
        return RawResult("oom", error=f"resident memory {limits.format_size(rss)} over the cap "
                         f"{limits.format_size(memory_cap)} (killed)", duration=duration,
                         peak_rss=peak)
    if reason == "toolong":
        return RawResult("crash", error=f"more than {limits.format_size(MAX_STDOUT)} on stdout",
                         duration=duration, peak_rss=peak)
    if signal_text:
        return _crash_or_oom(f"killed by {signal_text}", stderr_text, None, signal_text,
                             duration, peak)
    if exit_status not in (0, 1):
        return _crash_or_oom(f"exit status {exit_status}", stderr_text, exit_status, None,
                             duration, peak)
    kind, doc, error = parse_answer(stdout.decode("utf-8", "replace"), exit_status)
    if kind == "crash":
        return _crash_or_oom(error, stderr_text, exit_status, None, duration, peak)
    return RawResult(kind, doc=doc, error=error, exit=exit_status, duration=duration,
                     peak_rss=peak)


class BatchProcess:
    """`ADAPTER --batch`: one process answering one path per line."""

    def __init__(self, argv, memory_cap):
        self.argv = argv + ["--batch"]
        self.memory_cap = memory_cap
        self.process = None
        self.started = 0

    def alive(self):
        return self.process is not None and self.process.status is None

    def start(self, warmup_path, startup_timeout):
        """Starts the process; with a warm-up path, waits for its answer. False when the
        process could not start or did not answer the warm-up (it is then stopped)."""
        self.stop()
        try:
            self.process = _Process(self.argv, self.memory_cap, batch=True)
        except OSError:
            self.process = None
            return False
        self.started += 1
        if warmup_path is None:
            return True
        if not self._send(warmup_path):
            self.stop()
            return False
        self.process.begin_case()
        reason = self.process.pump(Deadline(time.monotonic(), startup_timeout), want_line=True)
        if reason != "line":
            self.stop()
            return False
        self._take_line()
        return True

    def _send(self, path):
        try:
            self.process.popen.stdin.write(path.encode() + b"\n")
            self.process.popen.stdin.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False

    def _take_line(self):
        buffer = self.process.buffer
        end = buffer.index(b"\n")
        line = bytes(buffer[:end])
        del buffer[:end + 1]
        return line

    def ask(self, path, timeout, grace=0.0):
        """A RawResult for one path. After a crash, timeout or oom the process is stopped."""
        process = self.process
        if process is None:
            return RawResult("crash", error=f"cannot start {self.argv[0]} --batch")
        if process.stderr_size() > (64 << 20):
            process.stderr.truncate(0)
        offset = process.stderr_size()
        limits.reset_peak(process.pid)
        process.peak = 0
        process.next_sample = 0.0
        process.samples = 0
        process.buffer.clear()         # an extra line of the previous answer: ignored
        start = time.monotonic()
        reason = "eof"
        process.begin_case()
        if self._send(path):
            reason = process.pump(Deadline(start, timeout + grace), want_line=True)
        duration = time.monotonic() - start
        if reason == "line":
            line = self._take_line().decode("utf-8", "replace")
            peak = max(process.peak, limits.peak_rss(process.pid) or 0) or None
            result = self._answer(line, duration, peak, process, offset)
            if result.kind in ("crash", "oom"):
                self.stop()
            return result
        if reason == "eof":
            process.wait_exit(Deadline.of_clock(1.0))
        exit_status, signal_text = process.reap()
        stderr_text = process.stderr_since(offset)
        peak = process.peak or None
        self.stop()
        if reason == "eof":
            if signal_text:
                detail = f"batch process killed by {signal_text}"
            else:
                detail = f"batch process exited with status {exit_status} without answering"
            return _crash_or_oom(detail, stderr_text, exit_status, signal_text, duration, peak)
        return _classify(reason, exit_status, signal_text, b"", stderr_text, timeout + grace,
                         self.memory_cap, process.last_rss, duration, peak)

    def _answer(self, line, duration, peak, process, offset):
        try:
            answer = json.loads(line)
        except RecursionError:
            answer = _too_deep(line)
            if answer is None:
                return _crash_or_oom(f"batch answer is not JSON: {_snippet(line)}",
                                     process.stderr_since(offset), duration=duration, peak=peak)
        except ValueError:
            return _crash_or_oom(f"batch answer is not JSON: {_snippet(line)}",
                                 process.stderr_since(offset), duration=duration, peak=peak)
        exit_status = answer.get("exit") if isinstance(answer, dict) else None
        if isinstance(exit_status, str) and exit_status in ("0", "1"):
            exit_status = int(exit_status)
        if exit_status is None and isinstance(answer, dict) and isinstance(answer.get("ok"), bool):
            exit_status = 0 if answer["ok"] else 1
        if exit_status not in (0, 1) or isinstance(exit_status, bool):
            return _crash_or_oom(f'batch answer has "exit": {json.dumps(exit_status)}',
                                 process.stderr_since(offset), exit_status=None,
                                 duration=duration, peak=peak)
        kind, doc, error = parse_answer(line, exit_status)
        if kind == "crash":
            return _crash_or_oom(error, process.stderr_since(offset), exit_status,
                                 duration=duration, peak=peak)
        return RawResult(kind, doc=doc, error=error, exit=exit_status, duration=duration,
                         peak_rss=peak)

    def stop(self):
        if self.process is not None:
            self.process.close()
            self.process = None

    def close(self):
        """End of the run: stdin closed, a moment to exit, then killed."""
        if self.process is None:
            return
        try:
            self.process.popen.stdin.close()
        except OSError:
            pass
        self.process.wait_exit(Deadline.of_clock(1.0))
        self.stop()

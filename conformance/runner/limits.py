"""The memory cap of adapter processes, and how an out-of-memory death is recognised.

The cap has two parts, both at the same number of bytes (default 1 GiB):

- RLIMIT_DATA, set in the child before exec. Since Linux 4.7 it bounds the private writable
  memory of a process (heap, anonymous mmap, thread stacks), which is what a parser grows
  when it believes a count of 2^62. The allocation fails at once, before any page is touched:
  malloc returns NULL, `new` throws std::bad_alloc, Python raises MemoryError, V8 reports
  "heap out of memory" or "Array buffer allocation failed". RLIMIT_AS is not used: V8 reserves
  address space it never commits (node under a 1 GiB RLIMIT_AS fails to commit a 40 MB heap,
  and any WebAssembly.Memory fails), while under RLIMIT_DATA node runs normally and stops
  at about 968 MB of ArrayBuffers.
- A watch of the resident memory (VmRSS, from /proc/PID/statm) of the adapter's whole process
  tree, sampled every 20 ms while the runner waits for it; over the cap, the process group is
  killed. It catches what RLIMIT_DATA does not count: shared anonymous memory, and a tree of
  processes each under the cap. It also gives the peak memory of a result.

The outcome is "oom" when the runner killed the process over the cap, or when the process
crashed (exit other than 0/1, a signal, or unusable stdout) and its stderr shows one of the
OOM_SIGNS below. A clean rejection (exit 1 with {"ok": false}) is never turned into oom.
`--memory 0` disables both parts (an ASan build of an adapter, say, needs that).
"""
import os
import re
import resource

# Substrings of stderr that mark a death by memory exhaustion.
OOM_SIGNS = (
    "std::bad_alloc",                    # C++ new
    "MemoryError",                       # Python (numpy's _ArrayMemoryError too)
    "heap out of memory",                # V8: "JavaScript heap out of memory"
    "Array buffer allocation failed",    # V8 ArrayBuffer / Buffer.alloc
    "Fatal process out of memory",       # V8 internal allocations
    "out of memory",                     # Go "runtime: out of memory", others
    "memory allocation of",              # Rust: "memory allocation of N bytes failed"
    "Cannot allocate memory",            # strerror(ENOMEM)
)
_OOM_RE = re.compile("|".join(re.escape(sign) for sign in OOM_SIGNS))

SIZE_SUFFIXES = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
                 "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
                 "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}
PAGE = os.sysconf("SC_PAGE_SIZE")


def parse_size(text):
    """'1G', '512M', '1073741824', '1.5GiB' -> bytes (binary units). ValueError if bad."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*", text)
    if not match or match.group(2).upper() not in SIZE_SUFFIXES:
        raise ValueError(f"not a size: {text!r} (use bytes or a K, M, G suffix)")
    return int(float(match.group(1)) * SIZE_SUFFIXES[match.group(2).upper()])


def format_size(size):
    if size is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} B"


def oom_sign(stderr_text):
    """The first OOM sign in stderr, or None."""
    match = _OOM_RE.search(stderr_text or "")
    return match.group(0) if match else None


def child_setup(memory_cap):
    """A preexec_fn: the cap, and no core files from crashing adapters. Only setrlimit calls
    (the runner forks from several threads)."""
    def setup():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if memory_cap:
            resource.setrlimit(resource.RLIMIT_DATA, (memory_cap, memory_cap))
    return setup


def _children(pid):
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            pass
    return found


def _tree_sum(pid, measure):
    """The sum of measure(p) over pid and all its descendants: a process that is gone (measure
    raises OSError, ValueError or IndexError) counts 0 and its children are not looked for."""
    total = 0
    pending, seen = [pid], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            total += measure(current)
        except (OSError, ValueError, IndexError):
            continue
        pending.extend(_children(current))
    return total


def _rss(pid):
    with open(f"/proc/{pid}/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


def tree_rss(pid):
    """Resident bytes of pid and all its descendants (0 when it is gone)."""
    return _tree_sum(pid, _rss)


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as handle:
        # after the command's ")": state is field 3, utime..cstime are fields 14 to 17
        fields = handle.read().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15])


def tree_cpu(pid):
    """CPU seconds (user and system) of pid and its live descendants, with the children each of
    them has reaped (0 when it is gone)."""
    return _tree_sum(pid, _cpu_ticks) / _TICKS


def reset_peak(pid):
    """Resets VmHWM of a (batch) process, so that the next read is the peak of one case."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak_rss(pid):
    """VmHWM of a live process in bytes, or None."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None

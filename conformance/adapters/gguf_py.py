#!/usr/bin/python3
"""The conformance adapter of gguf-py's GGUFReader (llama.cpp's Python reader).

  gguf_py.py FILE            canonical JSON of docs/dump.md (levels 0-3), exit 0 accepted, 1 rejected
  gguf_py.py --capabilities  what it supports
  gguf_py.py --batch         one path per stdin line -> one JSON line each, with "exit"

The verdict is GGUFReader(FILE)'s: accepted when the constructor returns, rejected when it raises.
Everything printed comes from the reader's object: its fields (ReaderField.parts, the numpy views
the reader made of the file), its tensors (ReaderTensor), alignment, data_offset, endianess.
Nothing is checked here that the reader does not check. A MemoryError or RecursionError is a
resource failure, not a rejection: the process exits 3 (in --batch too), so that the runner
records a crash. An exception of the adapter's own code exits 4 (a crash, never a verdict).

gguf-py is found in GGUF_CONFORMANCE_DEPS/llama.cpp/gguf-py (default: ../../.deps/conformance
from this file); numpy is Debian's (run with /usr/bin/python3).
"""
import hashlib
import traceback
import json
import os
import sys
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
DEPS = os.environ.get("GGUF_CONFORMANCE_DEPS") or os.path.join(HERE, "..", "..", ".deps", "conformance")
GGUF_PY = os.path.join(DEPS, "llama.cpp", "gguf-py")
sys.path.insert(0, GGUF_PY)

import numpy as np  # noqa: E402

try:
    import gguf  # noqa: E402
    from gguf.gguf_reader import GGUFReader  # noqa: E402
    from gguf.constants import GGUFEndian, GGUFValueType  # noqa: E402
except ImportError as e:  # not installed: not a rejection of any file
    sys.stderr.write(f"gguf_py.py: cannot import gguf-py from {GGUF_PY}: {e} (run conformance/setup)\n")
    sys.exit(3)

VALUE_TYPE_NAMES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
                    "bool", "string", "array", "uint64", "int64", "float64"]
RESOURCE_ERRORS = (MemoryError, RecursionError)
MISSING = object()


def type_name(type_id):
    return VALUE_TYPE_NAMES[type_id] if 0 <= type_id < len(VALUE_TYPE_NAMES) else "unknown"


def gguf_py_version():
    try:
        with open(os.path.join(GGUF_PY, "pyproject.toml")) as f:
            for line in f:
                if line.startswith("version"):
                    version = line.split("=", 1)[1].strip().strip('"')
                    break
            else:
                version = "?"
    except OSError:
        version = "?"
    try:
        with open(os.path.join(DEPS, "llama.cpp", ".installed")) as f:
            commit = f.read().strip()[:12]
    except OSError:
        commit = "?"
    return f"gguf-py {version} (llama.cpp {commit})"


# Floats: the shortest decimal that reads back to the same value at the stored width, written
# as std::to_chars writes it (ggufcheck dump): fixed or exponent form, whichever is shorter,
# fixed on a tie; the exponent has a sign and at least two digits ("1e-05", "3.4028235e+38").
def _to_chars(negative, digits, exponent, exact):
    """digits: the significant digits, no leading/trailing zeros; value = d.ddd x 10^exponent.
    exact: the value's exact integer, for the fixed form of an integer (to_chars prints its digits)."""
    n = len(digits)
    sci = digits[0] + ("." + digits[1:] if n > 1 else "") + "e" + ("-" if exponent < 0 else "+") + \
        f"{abs(exponent):02d}"
    if exponent >= n - 1:
        fixed = digits + "0" * (exponent - n + 1)
    elif exponent >= 0:
        fixed = digits[: exponent + 1] + "." + digits[exponent + 1:]
    else:
        fixed = "0." + "0" * (-exponent - 1) + digits
    if len(fixed) > len(sci):
        return ("-" if negative else "") + sci
    if exponent >= n - 1:
        fixed = str(abs(exact()))
    return ("-" if negative else "") + fixed


def _from_decimal_text(text, exact):
    d = Decimal(text)
    sign, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    exp += len(digit_tuple) - len(digits)  # leading zeros removed do not change the exponent
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    # value = int(stripped) * 10^exp -> d.ddd x 10^(exp + len - 1)
    return _to_chars(bool(sign), stripped, exp + len(stripped) - 1, exact)


def float_text(value, width):
    if value != value:
        return "nan"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "-0" if np.signbit(value) else "0"
    if width == 32:
        shortest = np.format_float_scientific(np.float32(value), unique=True, trim="-")
    else:
        shortest = repr(float(value))
    return _from_decimal_text(shortest, lambda: int(value))


def text_entry(out, name, raw):
    """A string as the reader's raw bytes: UTF-8 -> name, else name_bytes_hex."""
    try:
        out[name] = raw.decode("utf-8")
    except UnicodeDecodeError:
        out[name + "_bytes_hex"] = raw.hex()


def scalar(vtype, part):
    """(text, raw byte or None) of a one-element numpy view made by the reader."""
    if vtype == GGUFValueType.FLOAT32:
        return float_text(part[0], 32), None
    if vtype == GGUFValueType.FLOAT64:
        return float_text(float(part[0]), 64), None
    if vtype == GGUFValueType.BOOL:
        byte = int(part.view(np.uint8)[0])  # the np.bool_ view holds the file's byte
        return ("true" if byte else "false"), (str(byte) if byte > 1 else None)
    return str(int(part[0])), None


def value_of(parts, i, vtype):
    """Walks the reader's parts of one value from index i: (canonical element, next index).

    The reader keeps every part it read: a string is [length, bytes], an array is
    [element type, count, elements...] (nested arrays nest the same way), a scalar is [value].
    """
    vtype = int(vtype)
    if vtype == GGUFValueType.STRING:
        raw = parts[i + 1].tobytes()
        try:
            return raw.decode("utf-8"), i + 2
        except UnicodeDecodeError:
            return {"bytes_hex": raw.hex()}, i + 2
    if vtype == GGUFValueType.ARRAY:
        element = int(parts[i][0])  # any id when the array is empty: the reader never checks it
        count = int(parts[i + 1][0])
        i += 2
        items = []
        for _ in range(count):
            item, i = value_of(parts, i, element)
            if item is not MISSING:
                items.append(item)
        return {"type": "array", "element_type": type_name(element), "value": items}, i
    if parts[i].size == 0:
        # Past the end of the file the reader's numpy view is empty and it carries on: the
        # element has no value (ReaderField.contents() leaves it out of an array).
        return MISSING, i + 1
    text, raw = scalar(vtype, parts[i])
    return ({"value": text, "raw": raw} if raw is not None else text), i + 1


def field_entry(field):
    parts = field.parts
    entry = {}
    text_entry(entry, "key", parts[1].tobytes())  # field.name, as the bytes it was decoded from
    vtype = int(parts[2][0])
    entry["type"] = type_name(vtype)
    value, _ = value_of(parts, 3, vtype)
    if vtype == GGUFValueType.ARRAY:
        entry["element_type"] = value["element_type"]
        entry["value"] = value["value"]
    elif vtype == GGUFValueType.STRING:
        if isinstance(value, dict):
            entry["value_bytes_hex"] = value["bytes_hex"]
        else:
            entry["value"] = value
    elif value is MISSING:
        pass  # a scalar past the end of the file: the reader has no value for it
    elif isinstance(value, dict):
        entry["value"] = value["value"]
        entry["raw"] = value["raw"]
    else:
        entry["value"] = value
    return entry


def canonical(reader):
    fields = list(reader.fields.values())
    header, pairs = fields[:3], fields[3:]  # GGUF.version, GGUF.tensor_count, GGUF.kv_count
    out = {"ok": True}
    out["version"] = str(int(header[0].parts[0][0]))
    out["endianness"] = "big" if reader.endianess == GGUFEndian.BIG else "little"
    out["alignment"] = str(int(reader.alignment))
    out["tensor_count"] = str(len(reader.tensors))
    out["kv_count"] = str(int(header[2].parts[0][0]))
    if reader.tensors:
        out["data_offset"] = str(int(reader.data_offset))
    out["metadata"] = [field_entry(f) for f in pairs]
    tensors = []
    for t in reader.tensors:
        parts = t.field.parts  # name length, name, n_dims, dims, type, offset
        entry = {}
        text_entry(entry, "name", parts[1].tobytes())
        entry["type"] = t.tensor_type.name
        entry["type_id"] = str(int(parts[4][0]))
        entry["dims"] = [str(int(d)) for d in t.shape]
        entry["offset"] = str(int(parts[5][0]))
        entry["data_sha256"] = hashlib.sha256(t.data.tobytes()).hexdigest()
        tensors.append(entry)
    out["tensors"] = tensors
    return out


def run_one(path):
    """(object, exit status); a resource failure propagates."""
    try:
        reader = GGUFReader(path)  # the verdict: the reader raises on what it rejects
    except RESOURCE_ERRORS:
        raise
    except Exception as e:  # noqa: BLE001 - any other exception of the reader is its rejection
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}, 1
    # The walk over nested arrays recurses about as deep as the reader did: give it room, so
    # that a depth the reader managed is never the adapter's failure (the reader ran with the
    # default limit).
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + 10000)
    try:
        return canonical(reader), 0
    except RESOURCE_ERRORS:
        raise
    except Exception:  # noqa: BLE001 - the adapter's own fault: a crash, never a verdict
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(4)
    finally:
        sys.setrecursionlimit(limit)
        del reader


def emit(obj):
    # ASCII only, as ggufcheck writes it (json escapes non-ASCII; nlohmann also escapes DEL).
    sys.stdout.write(json.dumps(obj, separators=(",", ":")).replace("\x7f", "\\u007f") + "\n")
    sys.stdout.flush()


def resource_failure(error):
    """Exit 3 at once: no allocation, no interpreter teardown (near a memory cap, freeing the
    reader's millions of objects, or formatting the exception, can itself fail or crawl). The
    message names the error alone, so that the runner tells out-of-memory from a stack overflow
    (a crash)."""
    try:
        os.write(2, b"gguf_py.py: resource failure: MemoryError\n" if isinstance(error, MemoryError)
                 else b"gguf_py.py: resource failure: RecursionError (stack depth)\n")
    finally:
        os._exit(3)


def main(argv):
    if len(argv) == 2 and argv[1] == "--capabilities":
        emit({"name": "gguf-py", "version": gguf_py_version(), "levels": ["L0", "L1", "L2", "L3"],
              "gguf_versions": ["2", "3"], "endianness": ["little", "big"], "batch": True})
        return 0
    if len(argv) == 2 and argv[1] == "--batch":
        for line in sys.stdin:
            path = line.rstrip("\n")
            if not path:
                continue
            try:
                obj, status = run_one(path)
            except RESOURCE_ERRORS as error:
                resource_failure(error)
            obj["exit"] = status
            emit(obj)
        return 0
    if len(argv) == 2 and not argv[1].startswith("--"):
        try:
            obj, status = run_one(argv[1])
        except RESOURCE_ERRORS as error:
            resource_failure(error)
        emit(obj)
        return status
    sys.stderr.write("usage: gguf_py.py FILE | --capabilities | --batch\n")
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))

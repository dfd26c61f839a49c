"""Value comparison of canonical outputs (docs/dump.md) at a level.

  L0  the verdict only: nothing is compared
  L1  version, endianness, alignment, tensor_count, kv_count
  L2  + data_offset, metadata, tensors (without data_sha256)
  L3  + data_sha256

Scalars are strings. Integers (counts, offsets, dims, type ids, integer-typed values, a
bool's raw byte) are compared by value, so "007" equals "7". Floats are compared by value at
their declared width: both sides are rounded to float32 (struct 'f') or float64, "nan"
equals "nan" (any NaN), "-0" differs from "0" (the bits differ), a value too large for
float32 rounds to infinity. Everything else (keys, names, types, strings, hex, hashes) is
compared exactly. Keys of the level missing on one side, or present only on the other (an
extra "raw", a data_offset of a file without tensors), are differences.

compare() returns None or the first difference: (path, expected, actual), the path written
like `metadata[3].value[17]` or `tensors[0].dims[1]`, a missing value as MISSING.
"""
import math
import re
import struct

LEVELS = ("L0", "L1", "L2", "L3")
L1_KEYS = ("version", "endianness", "alignment", "tensor_count", "kv_count")
L2_KEYS = L1_KEYS + ("data_offset", "metadata", "tensors")

INTEGER_TYPES = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64"}
FLOAT_FORMATS = {"float32": "<f", "float64": "<d"}
INTEGER_FIELDS = {"version", "alignment", "tensor_count", "kv_count", "data_offset",
                  "type_id", "offset", "raw"}

class _Missing:
    """The value on the side of a difference that has no such key or element."""

    def __repr__(self):
        return "(missing)"


MISSING = _Missing()

_INTEGER = re.compile(r"[+-]?\d+\Z")
_DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_SPECIAL = {"nan": math.nan, "+nan": math.nan, "-nan": math.nan, "inf": math.inf,
            "+inf": math.inf, "-inf": -math.inf}


def level_number(level):
    return LEVELS.index(level)


def trim(doc, level):
    """The part of a canonical output that is compared at a level (a new dict)."""
    number = level_number(level)
    if number == 0 or not isinstance(doc, dict):
        return {}
    keys = L1_KEYS if number == 1 else L2_KEYS
    trimmed = {key: doc[key] for key in keys if key in doc}
    if number == 2 and isinstance(trimmed.get("tensors"), list):
        trimmed["tensors"] = [
            {k: v for k, v in tensor.items() if k != "data_sha256"}
            if isinstance(tensor, dict) else tensor
            for tensor in trimmed["tensors"]]
    return trimmed


def integer_equal(expected, actual):
    if isinstance(expected, str) and isinstance(actual, str) and \
            _INTEGER.match(expected) and _INTEGER.match(actual):
        return int(expected) == int(actual)
    return expected == actual


def _float_value(text, width_format):
    if text in _SPECIAL:
        value = _SPECIAL[text]
    elif _DECIMAL.match(text):
        value = float(text)
    else:
        return None
    if math.isnan(value):
        return "nan"
    try:
        return struct.pack(width_format, value)
    except OverflowError:      # beyond float32: rounds to infinity
        return struct.pack(width_format, math.copysign(math.inf, value))


def float_equal(expected, actual, value_type):
    if not (isinstance(expected, str) and isinstance(actual, str)):
        return expected == actual
    if expected == actual:
        return True
    width = FLOAT_FORMATS[value_type]
    left, right = _float_value(expected, width), _float_value(actual, width)
    return left is not None and left == right


def scalar_equal(expected, actual, value_type):
    if value_type in INTEGER_TYPES:
        return integer_equal(expected, actual)
    if value_type in FLOAT_FORMATS:
        return float_equal(expected, actual, value_type)
    return expected == actual


class _Difference(Exception):
    def __init__(self, path, expected, actual):
        super().__init__(path)
        self.path, self.expected, self.actual = path, expected, actual


def _join(path, key):
    return f"{path}.{key}" if path else key


def _field(expected, actual, key, path, value_type=None):
    """One field of an object: the document, a tensor, a metadata entry or an element."""
    if expected == actual:
        return
    if key == "metadata":
        _list(expected, actual, path, _entry)
    elif key == "tensors":
        _list(expected, actual, path, lambda e, a, p: _object(e, a, p))
    elif key == "dims":
        _list(expected, actual, path, _integer)
    elif key == "value" and value_type == "array":
        raise AssertionError("arrays are compared by _entry")
    elif key == "value":
        if not scalar_equal(expected, actual, value_type):
            raise _Difference(path, expected, actual)
    elif key in INTEGER_FIELDS:
        _integer(expected, actual, path)
    else:
        raise _Difference(path, expected, actual)


def _integer(expected, actual, path):
    if not integer_equal(expected, actual):
        raise _Difference(path, expected, actual)


def _object(expected, actual, path, value_type=None):
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        if expected != actual:
            raise _Difference(path, expected, actual)
        return
    for key, value in expected.items():
        if key not in actual:
            raise _Difference(_join(path, key), value, MISSING)
        _field(value, actual[key], key, _join(path, key), value_type)
    for key, value in actual.items():
        if key not in expected:
            raise _Difference(_join(path, key), MISSING, value)


def _entry(expected, actual, path, element_type=None):
    """A metadata entry, a nested array, or an object element of an array of element_type."""
    if not (isinstance(expected, dict) and isinstance(actual, dict)):
        raise _Difference(path, expected, actual)
    value_type = expected.get("type", element_type)
    if value_type != "array":
        _object(expected, actual, path, value_type)
        return
    for key, value in expected.items():
        if key not in actual:
            raise _Difference(_join(path, key), value, MISSING)
        if key == "value":
            _array(value, actual[key], _join(path, key), expected.get("element_type"))
        else:
            _field(value, actual[key], key, _join(path, key))
    for key, value in actual.items():
        if key not in expected:
            raise _Difference(_join(path, key), MISSING, value)


def _array(expected, actual, path, element_type):
    if expected == actual:
        return

    def element(e, a, p):
        if isinstance(e, str) and isinstance(a, str):
            if not scalar_equal(e, a, element_type):
                raise _Difference(p, e, a)
        elif isinstance(e, dict) and isinstance(a, dict):
            _entry(e, a, p, element_type)
        else:
            raise _Difference(p, e, a)

    _list(expected, actual, path, element)


def _list(expected, actual, path, compare_item):
    if not (isinstance(expected, list) and isinstance(actual, list)):
        raise _Difference(path, expected, actual)
    for index, (e, a) in enumerate(zip(expected, actual)):
        if e != a:
            compare_item(e, a, f"{path}[{index}]")
    if len(expected) != len(actual):
        index = min(len(expected), len(actual))
        raise _Difference(f"{path}[{index}]",
                          expected[index] if index < len(expected) else MISSING,
                          actual[index] if index < len(actual) else MISSING)


def compare(expected_doc, actual_doc, level):
    """None when equal at the level, else (path, expected value, actual value)."""
    expected, actual = trim(expected_doc, level), trim(actual_doc, level)
    if expected == actual:
        return None
    try:
        _object(expected, actual, "")
    except _Difference as difference:
        return difference.path, difference.expected, difference.actual
    return None

#!/usr/bin/env python3
"""How long ggml's own reader takes to open a file with many keys or many tensors.

    bench/reference_load_cost.py [--lib PATH] [--counts N,N,...]

gguf_init_from_file (libggml-base.so, fetched by scripts/setup.sh) looks for duplicate keys and
duplicate tensor names by comparing every pair, so its time grows with the square of the counts.
This measures it on generated files (one u32 key or one 1-element f32 tensor per count) and
prints seconds per file and the fitted seconds per pair, the constants GGUF7015
slow-reference-load uses (validator/src/llama_loader/model_checks.cpp). Each file is opened once, in
this process; the files are written to a temporary directory and removed.
"""

from __future__ import annotations

import argparse
import ctypes
import struct
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_LIB = ROOT / ".deps/node-llama-cpp-linux-x64-3.22.1/package/bins/linux-x64/libggml-base.so"


class InitParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


def gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write(path: Path, tensors: int, keys: int) -> None:
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, tensors, keys + 1))
    out += gguf_string("general.architecture") + struct.pack("<I", 8) + gguf_string("llama")
    for i in range(keys):
        out += gguf_string(f"test.key_{i:07d}") + struct.pack("<II", 4, i)
    for i in range(tensors):
        # name, n_dims 1, ne[0] 8, type F32, offset
        out += gguf_string(f"blk.{i}.tensor_{i:07d}.weight")
        out += struct.pack("<IQIQ", 1, 8, 0, 32 * i)
    out += b"\0" * ((-len(out)) % 32) + b"\0" * (32 * tensors)
    path.write_bytes(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", default=str(DEFAULT_LIB), help="libggml-base.so to measure")
    parser.add_argument("--counts", default="10000,20000,40000", help="counts to measure")
    args = parser.parse_args()
    lib = ctypes.CDLL(args.lib)
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, InitParams]
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "many.gguf"
        for what in ("tensors", "keys"):
            per_pair = []
            for n in (int(c) for c in args.counts.split(",")):
                write(path, n if what == "tensors" else 0, n if what == "keys" else 0)
                start = time.perf_counter()
                ctx = lib.gguf_init_from_file(str(path).encode(), InitParams(True, None))
                seconds = time.perf_counter() - start
                if not ctx:
                    print(f"{what} {n}: ggml refused the file")
                    return 1
                lib.gguf_free(ctx)
                per_pair.append(seconds / (n * n))
                print(f"{n:>7} {what}: {seconds:7.3f} s ({seconds / (n * n):.2e} s per n^2)")
            print(f"{what}: largest seconds per n^2 {max(per_pair):.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

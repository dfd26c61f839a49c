#!/usr/bin/env python3
"""`ggufcheck hash` against the pinned llama.cpp's own tools (docs/hash.md, "Compatibility").

1. llama-gguf-hash, built from the pinned tree (examples/gguf-hash, its vendored hashes, the
   pinned libggml-base.so; the llama_gguf_hash_judge target): the same bytes and exit status for
   every option set on every sample, corpus "valid" file and vocabulary file, and for --check
   against manifests it wrote, edited, of other kinds, unknown and missing. The only files it
   cannot hash are the big-endian ones (it crashes); ggufcheck hashes their bytes as stored.
2. gguf-py's gguf_hash.py (Debian's numpy and tqdm): its lines equal `ggufcheck hash --sha1
   --sha256 --uuid` on every file but those with a tensor named *.attention.masked_bias,
   *.attention.bias or *.rotary_emb.inv_freq, which it leaves out of its lines, its whole-model
   digests and its UUID (shown on a file written with gguf-py's writer).
3. The JSON manifest recomputed here: each tensor's sha256 from gguf-py's reader, the header
   digest over the bytes before its data offset, and the RFC 6962 Merkle root.

Exit 0 all agree, 1 a difference, 77 (skipped) without the pinned tree.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

OPTION_SETS = [[], ["--xxh64"], ["--sha1"], ["--sha256"], ["--uuid"], ["--all"], ["--no-layer"],
               ["--all", "--uuid", "--no-layer"], ["--sha1", "--uuid"]]
SKIPPED_BY_GGUF_HASH_PY = (".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq")


def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    return p.returncode, p.stdout


def gguf_files(source, vocabularies=None):
    """The samples, the corpus' valid files and llama.cpp's vocabulary files (no tensors; the
    first `vocabularies` of them, all by default)."""
    found = []
    for folder in ("examples/valid", "corpus/valid", ".deps/conformance/llama.cpp/models"):
        d = os.path.join(source, folder)
        if os.path.isdir(d):
            names = [n for n in sorted(os.listdir(d)) if n.endswith(".gguf")]
            if folder.endswith("models"):
                names = names[:vocabularies]
            found += [(d, n) for n in names]
    return found


def against_llama_gguf_hash(ggufcheck, judge, source, failures):
    same = refused = 0
    for d, name in gguf_files(source):
        # A vocabulary file has no tensor: two option sets say all there is to say. The samples
        # get every option set; the corpus files, which vary the tensors rather than the output,
        # the default, --all and --all --uuid --no-layer (every line kind between them).
        if "models" in d:
            option_sets = [OPTION_SETS[0], OPTION_SETS[7]]
        elif d.endswith("examples/valid"):
            option_sets = OPTION_SETS
        else:
            option_sets = [OPTION_SETS[0], OPTION_SETS[5], OPTION_SETS[7]]
        for options in option_sets:
            jr, jout = run([judge] + options + [name], d)
            gr, gout = run([ggufcheck, "hash"] + options + [name], d)
            if jr != 0:
                refused += 1
                if not name.startswith("big-endian"):
                    failures.append(f"llama-gguf-hash could not hash {d}/{name} ({jr})")
                elif gr != 0:
                    failures.append(f"ggufcheck could not hash {d}/{name} {options}")
                continue
            if (jr, jout) != (gr, gout):
                failures.append(f"{d}/{name} {options}: llama-gguf-hash exit {jr}, ggufcheck {gr}")
            else:
                same += 1
    print(f"llama-gguf-hash: {same} runs byte-identical, {refused} runs on the big-endian files "
          "it crashes on")

    # --check: manifests it wrote (all kinds, uuid only, no layer), one edited, an unknown kind,
    # none; with every option set; on the file the manifest names and on a copy under another
    # name (whose lines are not in the manifest).
    sample = os.path.join(source, "examples/valid/tiny-llama.gguf")
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(sample, "rb") as f:
            data = f.read()
        for name in ("m.gguf", "x.gguf"):
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        manifests = {}
        for kind, options in (("all", ["--all"]), ("uuid", ["--uuid"]),
                              ("nolayer", ["--xxh64", "--no-layer"])):
            manifests[kind] = run([judge] + options + ["m.gguf"], tmp)[1]
        edited = manifests["all"].replace(b"sha256    ", b"sha256    0", 1)
        manifests["edited"] = edited.replace(b"  m.gguf:", b" m.gguf:", 1)
        manifests["unknown"] = b"md5  0  m.gguf\n"
        for kind, text in manifests.items():
            with open(os.path.join(tmp, kind + ".manifest"), "wb") as f:
                f.write(text)
        for kind in list(manifests) + ["missing"]:
            for options in OPTION_SETS:
                for name in ("m.gguf", "x.gguf"):
                    args = ["--check", kind + ".manifest"] + options + [name]
                    expected = run([judge] + args, tmp)
                    actual = run([ggufcheck, "hash"] + args, tmp)
                    checks += 1
                    if expected != actual:
                        failures.append(f"--check {kind} {options} {name}: llama-gguf-hash exit "
                                        f"{expected[0]}, ggufcheck {actual[0]}")
    print(f"llama-gguf-hash --check: {checks} runs compared")


def python_env(source):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(source, ".deps/conformance/llama.cpp/gguf-py")
    env["NO_LOCAL_GGUF"] = "1"
    return env


def against_gguf_hash_py(ggufcheck, source, failures):
    script = os.path.join(source, ".deps/conformance/llama.cpp/gguf-py/gguf/scripts/gguf_hash.py")
    env = python_env(source)
    same = 0
    files = gguf_files(source, vocabularies=3)  # its reader is slow on a vocabulary
    # One Python process for every file (numpy's import is most of a run's time): gguf_hash.py's
    # own gguf_hash() on each, its printed lines captured per file.
    driver = (
        "import contextlib, io, json, os, sys, runpy\n"
        "module = runpy.run_path(sys.argv[1])\n"
        "out = []\n"
        "for d, name in json.load(sys.stdin):\n"
        "    os.chdir(d)\n"
        "    buffer = io.StringIO()\n"
        "    try:\n"
        "        with contextlib.redirect_stdout(buffer):\n"
        "            module['gguf_hash'](module['GGUFReader'](name), name, True, False)\n"
        "        out.append([0, buffer.getvalue()])\n"
        "    except Exception as e:\n"
        "        out.append([1, repr(e)])\n"
        "print(json.dumps(out))\n")
    p = subprocess.run(["/usr/bin/python3", "-c", driver, script], env=env,
                       input=json.dumps(files).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1200)
    if p.returncode != 0:
        failures.append(f"gguf_hash.py's driver failed: {p.stderr.decode()[-300:]}")
        return
    answers = json.loads(p.stdout.decode().splitlines()[-1])
    for (d, name), (status, text) in zip(files, answers):
        if status != 0:
            failures.append(f"gguf_hash.py failed on {d}/{name}: {text[-300:]}")
            continue
        gr, gout = run([ggufcheck, "hash", "--sha1", "--sha256", "--uuid", name], d)
        if (gr, gout) != (0, text.encode()):
            failures.append(f"gguf_hash.py and ggufcheck differ on {d}/{name}")
        else:
            same += 1
    print(f"gguf_hash.py: {same} files with the same lines as hash --sha1 --sha256 --uuid")

    # A tensor it skips: its lines and the whole-model digests differ, the rest is the same.
    sys.path.insert(0, env["PYTHONPATH"])
    import numpy as np
    from gguf import GGUFWriter
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "skip.gguf")
        w = GGUFWriter(path, "llama")
        w.add_tensor("blk.0.attn_q.weight", np.arange(16, dtype=np.float32))
        w.add_tensor("blk.0.attention.bias", np.ones(8, dtype=np.float32))
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        p = subprocess.run(["/usr/bin/python3", script, "skip.gguf"], cwd=tmp, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        ours = run([ggufcheck, "hash", "--sha1", "--sha256", "--uuid", "skip.gguf"], tmp)[1]
        theirs = p.stdout.decode().splitlines()
        mine = ours.decode().splitlines()
        layer = [l for l in mine if ":blk.0.attn_q.weight" in l]
        if [l for l in theirs if ":" in l] != layer:
            failures.append("gguf_hash.py: the lines of the tensor it keeps differ")
        if any("attention.bias" in l for l in theirs) or not any("attention.bias" in l for l in mine):
            failures.append("gguf_hash.py: expected it to leave blk.0.attention.bias out")
        theirs_model = [l for l in theirs if ":" not in l]
        mine_model = [l for l in mine if ":" not in l]
        if len(theirs_model) != 3 or any(a == b for a, b in zip(theirs_model, mine_model)):
            failures.append("gguf_hash.py: expected its whole-model lines to differ")
        # Its model digest is that of the tensors it keeps.
        q = np.arange(16, dtype=np.float32).tobytes()
        if theirs_model[1].split()[1] != hashlib.sha256(q).hexdigest():
            failures.append("gguf_hash.py: its model sha256 is not that of the kept tensor")
    print("gguf_hash.py: leaves *.attention.bias out of every digest (as documented)")


def merkle(leaves):
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + merkle(leaves[:k]) + merkle(leaves[k:])).digest()


def manifest_recomputed(ggufcheck, source, failures):
    sys.path.insert(0, python_env(source)["PYTHONPATH"])
    from gguf import GGUFReader
    checked = 0
    for d, name in gguf_files(source, vocabularies=3):
        if name.startswith("big-endian"):
            continue
        code, out = run([ggufcheck, "hash", "--format", "json", name], d)
        if code != 0:
            failures.append(f"hash --format json {d}/{name}: exit {code}")
            continue
        model = json.loads(out)["models"][0]
        reader = GGUFReader(os.path.join(d, name), "r")
        with open(os.path.join(d, name), "rb") as f:
            data = f.read()
        digests = [hashlib.sha256(bytes(t.data.data)).hexdigest() for t in reader.tensors]
        if digests != [t["sha256"] for t in model["tensors"]]:
            failures.append(f"{name}: per-tensor sha256 differ from gguf-py's tensor bytes")
        if reader.tensors:
            header = hashlib.sha256(data[:reader.data_offset]).hexdigest()
            if header != model["files"][0]["header_sha256"]:
                failures.append(f"{name}: header_sha256 is not that of the bytes before the data")
        root = merkle([bytes.fromhex(h) for h in digests]).hex()
        if root != model["digests"]["merkle_root"]:
            failures.append(f"{name}: merkle_root differs from RFC 6962's")
        # The gaps: every byte from gguf-py's data offset to the end outside its tensors' bytes.
        start = reader.data_offset if reader.tensors else len(data)
        covered = sorted((int(t.data_offset), int(t.n_bytes)) for t in reader.tensors
                         if int(t.n_bytes) > 0)
        gaps, at = b"", start
        for begin, length in covered:
            gaps += data[at:begin] if begin > at else b""
            at = max(at, begin + length)
        gaps += data[at:]
        entry = model["files"][0]
        if (entry.get("data_start"), entry.get("gap_bytes"), entry.get("gaps_sha256")) != (
                start, len(gaps), hashlib.sha256(gaps).hexdigest()):
            failures.append(f"{name}: data_start, gap_bytes or gaps_sha256 is not gguf-py's")
        checked += 1
    print(f"JSON manifest: {checked} files recomputed with gguf-py (tensor sha256, header, gaps, "
          "root)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ggufcheck", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--judge", help="llama-gguf-hash built from the pinned tree")
    args = parser.parse_args()
    if not os.path.isdir(os.path.join(args.source, ".deps/conformance/llama.cpp/gguf-py")):
        print("skipped: no pinned llama.cpp tree (conformance/setup)")
        return 77
    failures = []
    if args.judge and os.path.exists(args.judge):
        against_llama_gguf_hash(args.ggufcheck, args.judge, args.source, failures)
    else:
        failures.append("llama-gguf-hash was not built (the pinned tree and libggml-base.so)")
    against_gguf_hash_py(args.ggufcheck, args.source, failures)
    manifest_recomputed(args.ggufcheck, args.source, failures)
    for f in failures[:50]:
        print("FAIL:", f)
    print(f"{len(failures)} difference(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

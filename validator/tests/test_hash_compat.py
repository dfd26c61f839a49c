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

Usage: /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs test_hash_compat.py --ggufcheck PATH
       --source REPO [--judge PATH]
A test per file and option set; every test skips, saying so, without the pinned tree (ctest's
skip: conftest.py).
"""
import hashlib
import json
import os
import subprocess
import sys

import pytest

OPTION_SETS = [[], ["--xxh64"], ["--sha1"], ["--sha256"], ["--uuid"], ["--all"], ["--no-layer"],
               ["--all", "--uuid", "--no-layer"], ["--sha1", "--uuid"]]
SKIPPED_BY_GGUF_HASH_PY = (".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq")


GGUF_PY = os.path.join(".deps", "conformance", "llama.cpp", "gguf-py")


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


def python_env(source):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(source, GGUF_PY)
    env["NO_LOCAL_GGUF"] = "1"
    return env


def source_of(config):
    return os.path.abspath(config.getoption("--source") or
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def llama_gguf_hash_cases(source):
    """(folder, file, options) of every comparison with llama-gguf-hash."""
    cases = []
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
        cases += [(d, name, options) for options in option_sets]
    return cases


# --check: manifests it wrote (all kinds, uuid only, no layer), one edited, an unknown kind, none;
# with every option set; on the file the manifest names and on a copy under another name (whose
# lines are not in the manifest).
MANIFEST_KINDS = ["all", "uuid", "nolayer", "edited", "unknown", "missing"]
CHECKED_NAMES = ["m.gguf", "x.gguf"]


def case_id(d, name, options):
    return f"{os.path.basename(d)}/{name} {' '.join(options)}".strip()


def pytest_generate_tests(metafunc):
    source = source_of(metafunc.config)
    names = metafunc.fixturenames
    if "hash_case" in names:
        cases = llama_gguf_hash_cases(source)
        metafunc.parametrize("hash_case", cases, ids=[case_id(*c) for c in cases])
    if "check_case" in names:
        cases = [(kind, options, name) for kind in MANIFEST_KINDS for options in OPTION_SETS
                 for name in CHECKED_NAMES]
        metafunc.parametrize("check_case", cases,
                             ids=[f"{k} {' '.join(o)} {n}" for k, o, n in cases])
    if "py_file" in names or "manifest_file" in names:
        files = gguf_files(source, vocabularies=3)  # its reader is slow on a vocabulary
        if "manifest_file" in names:
            files = [f for f in files if not f[1].startswith("big-endian")]
        metafunc.parametrize("py_file" if "py_file" in names else "manifest_file", files,
                             ids=[f"{os.path.basename(d)}/{n}" for d, n in files])


@pytest.fixture(scope="module")
def tree(source):
    """The pinned llama.cpp tree's gguf-py, which every comparison needs."""
    if not os.path.isdir(os.path.join(source, GGUF_PY)):
        pytest.skip("no pinned llama.cpp tree (conformance/setup)")
    return source


@pytest.fixture(scope="module")
def judge(pytestconfig, tree):
    path = pytestconfig.getoption("--judge")
    assert path and os.path.exists(path), \
        "llama-gguf-hash was not built (the pinned tree and libggml-base.so)"
    return os.path.abspath(path)


# --- 1. llama-gguf-hash ------------------------------------------------------------------------

def test_the_same_as_llama_gguf_hash(ggufcheck, judge, hash_case):
    d, name, options = hash_case
    jr, jout = run([judge] + options + [name], d)
    gr, gout = run([ggufcheck, "hash"] + options + [name], d)
    if jr != 0:
        # The only files it cannot hash are the big-endian ones (it crashes); ggufcheck hashes
        # their bytes as stored.
        assert name.startswith("big-endian"), f"llama-gguf-hash could not hash {d}/{name} ({jr})"
        assert gr == 0, f"ggufcheck could not hash {d}/{name} {options}"
        return
    assert (jr, jout) == (gr, gout), f"{d}/{name} {options}: llama-gguf-hash exit {jr}, ggufcheck {gr}"


@pytest.fixture(scope="module")
def manifests(judge, source, tmp_path_factory):
    """A folder with m.gguf and its copy x.gguf (the sample) and the manifests of each kind."""
    tmp = str(tmp_path_factory.mktemp("check"))
    sample = os.path.join(source, "examples/valid/tiny-llama.gguf")
    with open(sample, "rb") as f:
        data = f.read()
    for name in CHECKED_NAMES:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    texts = {}
    for kind, options in (("all", ["--all"]), ("uuid", ["--uuid"]),
                          ("nolayer", ["--xxh64", "--no-layer"])):
        texts[kind] = run([judge] + options + ["m.gguf"], tmp)[1]
    edited = texts["all"].replace(b"sha256    ", b"sha256    0", 1)
    texts["edited"] = edited.replace(b"  m.gguf:", b" m.gguf:", 1)
    texts["unknown"] = b"md5  0  m.gguf\n"
    for kind, text in texts.items():
        with open(os.path.join(tmp, kind + ".manifest"), "wb") as f:
            f.write(text)
    return tmp


def test_check_as_llama_gguf_hash_checks(ggufcheck, judge, manifests, check_case):
    kind, options, name = check_case
    args = ["--check", kind + ".manifest"] + options + [name]
    expected = run([judge] + args, manifests)
    actual = run([ggufcheck, "hash"] + args, manifests)
    assert expected == actual, \
        f"--check {kind} {options} {name}: llama-gguf-hash exit {expected[0]}, ggufcheck {actual[0]}"


# --- 2. gguf-py's gguf_hash.py -----------------------------------------------------------------

@pytest.fixture(scope="module")
def gguf_hash_py(tree):
    return os.path.join(tree, GGUF_PY, "gguf", "scripts", "gguf_hash.py")


@pytest.fixture(scope="module")
def gguf_hash_py_lines(tree, gguf_hash_py):
    """{(folder, file): (status, its printed lines or the error)} from one Python process for
    every file (numpy's import is most of a run's time): gguf_hash.py's own gguf_hash() on each."""
    files = gguf_files(tree, vocabularies=3)
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
    p = subprocess.run(["/usr/bin/python3", "-c", driver, gguf_hash_py], env=python_env(tree),
                       input=json.dumps(files).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=1200)
    assert p.returncode == 0, f"gguf_hash.py's driver failed: {p.stderr.decode()[-300:]}"
    answers = json.loads(p.stdout.decode().splitlines()[-1])
    return {tuple(f): tuple(a) for f, a in zip(files, answers)}


def test_the_same_lines_as_gguf_hash_py(ggufcheck, gguf_hash_py_lines, py_file):
    d, name = py_file
    status, text = gguf_hash_py_lines[py_file]
    assert status == 0, f"gguf_hash.py failed on {d}/{name}: {text[-300:]}"
    gr, gout = run([ggufcheck, "hash", "--sha1", "--sha256", "--uuid", name], d)
    assert (gr, gout) == (0, text.encode()), f"gguf_hash.py and ggufcheck differ on {d}/{name}"


def test_gguf_hash_py_leaves_attention_bias_out(ggufcheck, tree, gguf_hash_py, tmp_path):
    """A tensor it skips: its lines and the whole-model digests differ, the rest is the same
    (shown on a file written with gguf-py's writer)."""
    env = python_env(tree)
    sys.path.insert(0, env["PYTHONPATH"])
    import numpy as np
    from gguf import GGUFWriter
    path = os.path.join(tmp_path, "skip.gguf")
    w = GGUFWriter(path, "llama")
    w.add_tensor("blk.0.attn_q.weight", np.arange(16, dtype=np.float32))
    w.add_tensor("blk.0.attention.bias", np.ones(8, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    p = subprocess.run(["/usr/bin/python3", gguf_hash_py, "skip.gguf"], cwd=tmp_path, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    ours = run([ggufcheck, "hash", "--sha1", "--sha256", "--uuid", "skip.gguf"], tmp_path)[1]
    theirs = p.stdout.decode().splitlines()
    mine = ours.decode().splitlines()
    layer = [line for line in mine if ":blk.0.attn_q.weight" in line]
    assert [line for line in theirs if ":" in line] == layer, \
        "gguf_hash.py: the lines of the tensor it keeps differ"
    assert not any("attention.bias" in line for line in theirs) and \
        any("attention.bias" in line for line in mine), \
        "gguf_hash.py: expected it to leave blk.0.attention.bias out"
    theirs_model = [line for line in theirs if ":" not in line]
    mine_model = [line for line in mine if ":" not in line]
    assert len(theirs_model) == 3 and not any(a == b for a, b in zip(theirs_model, mine_model)), \
        "gguf_hash.py: expected its whole-model lines to differ"
    # Its model digest is that of the tensors it keeps.
    q = np.arange(16, dtype=np.float32).tobytes()
    assert theirs_model[1].split()[1] == hashlib.sha256(q).hexdigest(), \
        "gguf_hash.py: its model sha256 is not that of the kept tensor"


# --- 3. the JSON manifest recomputed -----------------------------------------------------------

def merkle(leaves):
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + merkle(leaves[:k]) + merkle(leaves[k:])).digest()


def test_the_manifest_recomputed_with_gguf_py(ggufcheck, tree, manifest_file):
    sys.path.insert(0, python_env(tree)["PYTHONPATH"])
    from gguf import GGUFReader
    d, name = manifest_file
    code, out = run([ggufcheck, "hash", "--format", "json", name], d)
    assert code == 0, f"hash --format json {d}/{name}: exit {code}"
    model = json.loads(out)["models"][0]
    reader = GGUFReader(os.path.join(d, name), "r")
    with open(os.path.join(d, name), "rb") as f:
        data = f.read()
    digests = [hashlib.sha256(bytes(t.data.data)).hexdigest() for t in reader.tensors]
    assert digests == [t["sha256"] for t in model["tensors"]], \
        f"{name}: per-tensor sha256 differ from gguf-py's tensor bytes"
    if reader.tensors:
        header = hashlib.sha256(data[:reader.data_offset]).hexdigest()
        assert header == model["files"][0]["header_sha256"], \
            f"{name}: header_sha256 is not that of the bytes before the data"
    root = merkle([bytes.fromhex(h) for h in digests]).hex()
    assert root == model["digests"]["merkle_root"], f"{name}: merkle_root differs from RFC 6962's"
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
    assert (entry.get("data_start"), entry.get("gap_bytes"), entry.get("gaps_sha256")) == (
        start, len(gaps), hashlib.sha256(gaps).hexdigest()), \
        f"{name}: data_start, gap_bytes or gaps_sha256 is not gguf-py's"

#!/usr/bin/env node
// The conformance adapter of hyllama: ggufMetadata(arrayBuffer) on the file read into an
// ArrayBuffer, as its README shows. Accepted when it returns, rejected when it throws. The
// README reads the start of a big file (its first 10 MB); the adapter reads the whole file up to
// 256 MiB, more than any case's metadata and tensor infos, and the first 256 MiB of a bigger one
// (y_align_2p31_with_tensor_data is 2 GiB of which hyllama reads a few hundred bytes).
//
// hyllama returns {metadata: {version, tensorCount, ...file keys}, tensorInfos: [{name, nDims,
// shape, type, offset}]}: no GGUF types, no kv count, no alignment, no data offset. So, while it
// runs, the adapter records the DataView reads hyllama makes (method and result, in order), and
// follows them with hyllama's own control flow to learn, for each key read, its value type and
// array element types. Nothing of the file is read by the adapter itself. The canonical metadata
// is the returned object's keys (without version and tensorCount, which hyllama puts there),
// ordered as first read, with the types of the read that produced the returned value; kv_count
// is the number of pairs read.
//
// Levels 0-1: hyllama never locates tensor data, so there is no data_offset to report, and it
// applies no alignment (the adapter reports general.alignment as hyllama returned it when it is
// an integer, else the default 32). The L2 fields are printed anyway, without data_offset.
import fs from "node:fs";
import {
  ggmlTypeName, importDep, intText, packageVersion, runAdapter, scalarText, valueTypeName,
} from "./canonical.mjs";

const { ggufMetadata } = await importDep("hyllama/src/hyllama.js");

// The first `limit` bytes of the file (all of a smaller one), in an ArrayBuffer of their size.
const MAX_READ = 256 * 1024 * 1024;
function readStart(file, limit) {
  const fd = fs.openSync(file, "r");
  try {
    const size = Math.min(fs.fstatSync(fd).size, limit);
    const bytes = new Uint8Array(size);
    let done = 0;
    while (done < size) {
      const n = fs.readSync(fd, bytes, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return bytes.buffer.slice(0, done);
  } finally {
    fs.closeSync(fd);
  }
}

// --- the trace of DataView reads ---------------------------------------------------------------
const METHODS = ["getUint8", "getInt8", "getUint16", "getInt16", "getUint32", "getInt32",
  "getFloat32", "getFloat64", "getBigUint64", "getBigInt64"];
const U8 = 0;

class Trace {
  constructor() {
    this.ops = new Uint8Array(1 << 16);
    this.bytes = new Uint8Array(1 << 16); // getUint8 results
    this.numbers = new Float64Array(1 << 12); // other Number results
    this.bigints = []; // BigInt results
    this.nOps = this.nBytes = this.nNumbers = 0;
  }
  static grow(a, n) {
    if (n < a.length) return a;
    const b = new a.constructor(a.length * 2);
    b.set(a);
    return b;
  }
  push(code, v) {
    this.ops = Trace.grow(this.ops, this.nOps);
    this.ops[this.nOps++] = code;
    if (code === U8) {
      this.bytes = Trace.grow(this.bytes, this.nBytes);
      this.bytes[this.nBytes++] = v;
    } else if (typeof v === "bigint") {
      this.bigints.push(v);
    } else {
      this.numbers = Trace.grow(this.numbers, this.nNumbers);
      this.numbers[this.nNumbers++] = v;
    }
  }
}

let trace = null;
const originals = METHODS.map((m) => DataView.prototype[m]);
METHODS.forEach((m, code) => {
  const original = originals[code];
  DataView.prototype[m] = function (offset, littleEndian) {
    const v = original.call(this, offset, littleEndian);
    if (trace !== null) trace.push(code, v);
    return v;
  };
});

/** Follows the reads with hyllama's control flow -> [{key, node}] of the metadata, in order. */
function pairsOf(t) {
  let op = 0;
  let byte = 0;
  let number = 0;
  let bigint = 0;
  function next(method) {
    const code = METHODS.indexOf(method);
    if (t.ops[op] !== code) throw new Error(`trace: expected ${method} at read ${op}`);
    op++;
    if (code === U8) return t.bytes[byte++];
    if (method.startsWith("getBig")) return t.bigints[bigint++];
    return t.numbers[number++];
  }
  function string(keep) {
    const n = Number(next("getBigUint64"));
    for (let k = 0; k < n; k++) {
      if (t.ops[op + k] !== U8) throw new Error(`trace: expected the bytes of a string at read ${op}`);
    }
    const bytes = t.bytes.subarray(byte, byte + n);
    op += n;
    byte += n;
    if (!keep) return null;
    let s = "";
    for (let k = 0; k < n; k += 8192) s += String.fromCharCode(...bytes.subarray(k, k + 8192));
    return s; // hyllama's decoding: one char per byte
  }
  const scalarReads = ["getUint8", "getInt8", "getUint16", "getInt16", "getUint32", "getInt32",
    "getFloat32", "getUint8", null, null, "getBigUint64", "getBigInt64", "getFloat64"];
  function value(type) {
    const node = { type }; // a scalar's node is dropped by the caller inside arrays
    if (type === 8) {
      string(false);
    } else if (type === 9) {
      node.elementType = next("getUint32");
      const n = next("getBigUint64");
      if (node.elementType === 9) node.items = [];
      for (let k = 0n; k < n; k++) {
        const item = value(node.elementType);
        if (node.items) node.items.push(item); // element nodes kept for arrays of arrays only
      }
    } else if (scalarReads[type]) {
      next(scalarReads[type]);
    } else {
      throw new Error(`trace: hyllama accepted value type ${type}`);
    }
    return node;
  }
  next("getUint32"); // magic
  next("getUint32"); // version
  next("getBigUint64"); // tensor count
  const kvCount = next("getBigUint64");
  const pairs = [];
  for (let k = 0n; k < kvCount; k++) {
    const key = string(true);
    pairs.push({ key, node: value(next("getUint32")) });
  }
  return pairs;
}

function arrayOf(node, v) {
  const element = node.elementType;
  return {
    element_type: valueTypeName(element),
    value: element === 9
      ? v.map((item, k) => ({ type: "array", ...arrayOf(node.items[k], item) }))
      : v.map((item) => scalarText(element, item)),
  };
}

function canonical({ result, trace: t }) {
  const pairs = pairsOf(t);
  const { metadata, tensorInfos } = result;
  const order = [];
  const lastRead = new Map();
  for (const p of pairs) {
    if (!lastRead.has(p.key)) order.push(p.key);
    lastRead.set(p.key, p.node);
  }
  const a = metadata["general.alignment"];
  const alignment = (typeof a === "number" && Number.isInteger(a)) || typeof a === "bigint" ? intText(a) : "32";
  const out = {
    version: intText(metadata.version),
    endianness: "little",
    alignment,
    tensor_count: intText(metadata.tensorCount),
    kv_count: String(pairs.length),
  };
  out.metadata = order.filter((key) => Object.hasOwn(metadata, key)).map((key) => {
    const v = metadata[key];
    const node = lastRead.get(key);
    const entry = { key, type: valueTypeName(node.type) };
    if (node.type === 9) Object.assign(entry, arrayOf(node, v));
    else entry.value = scalarText(node.type, v);
    return entry;
  });
  out.tensors = tensorInfos.map((t) => ({
    name: t.name,
    type: ggmlTypeName(t.type),
    type_id: String(t.type),
    dims: t.shape.map(intText),
    offset: intText(t.offset),
  }));
  return out;
}

await runAdapter({
  capabilities: {
    name: "hyllama",
    version: packageVersion("hyllama"),
    levels: ["L0", "L1"],
    gguf_versions: ["2", "3"],
    endianness: ["little"],
    batch: true,
  },
  read: (file) => {
    const arrayBuffer = readStart(file, MAX_READ);
    trace = new Trace();
    try {
      return { result: ggufMetadata(arrayBuffer), trace };
    } finally {
      trace = null;
    }
  },
  canonical,
});

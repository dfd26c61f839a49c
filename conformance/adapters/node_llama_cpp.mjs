#!/usr/bin/env node
// The conformance adapter of node-llama-cpp's readGgufFileInfo (its GGUF reader, pure
// TypeScript). Imported from dist/gguf/readGgufFileInfo.js, which needs no native binary (the
// package is installed with --ignore-scripts). Accepted when the promise resolves, rejected when
// it rejects. Levels 0-2 (it does not read tensor data).
//
// readGgufFileInfo returns the metadata as a nested object ({general: {architecture: ...}}),
// without GGUF types, without the file order and without the header's kv count. So, while it
// runs, the adapter records the reads of the reader's GgufFileReader (readUint8 ... readFloat64,
// readStringWithLength: method and result, in call order) and follows them with GgufV2Parser's
// control flow to learn, for each key in the order read, its value type and array element
// types. Only these leaf calls are wrapped, so the parser's recursion (nested arrays) is no
// deeper than without the adapter. The canonical metadata is the returned object's keys
// (flattened back: the nesting only splits keys at "."), ordered as they were first read, with
// the types of the read that produced the returned value. kv_count is the number of pairs read.
// Nothing of the file is read by the adapter itself.
//
// The call is readGgufFileInfo(path, {spliceSplitFiles: false}): by default a file named as the
// first shard of a split set (<prefix>-00001-of-0000N.gguf) brings the other shards and their
// metadata and tensors are merged in, and a missing shard rejects the file. The profiles judge
// the file alone (the split set is the model column's, which this adapter does not have).
import {
  ggmlTypeName, importDep, intText, packageVersion, runAdapter, scalarText, valueTypeName,
} from "./canonical.mjs";

const { readGgufFileInfo } = await importDep("node-llama-cpp/dist/gguf/readGgufFileInfo.js");
const { GgufFileReader } = await importDep("node-llama-cpp/dist/gguf/fileReaders/GgufFileReader.js");
const { noDirectSubNestingGGufMetadataKeys } = await importDep("node-llama-cpp/dist/gguf/consts.js");
const noDirectSubNesting = new Set(noDirectSubNestingGGufMetadataKeys);

const STRING = 8;
const ARRAY = 9;

// --- the trace of the reader's reads -------------------------------------------------------------
// Kept small, since a hostile count makes the reader loop: a code per read (Uint8Array); the
// results of readUint32/readUint64 (Float64Array; a uint64 above 2^53 aside, exactly) and of
// readStringWithLength (references to the reader's strings); other results are not needed.
const READS = ["readUint8", "readInt8", "readUint16", "readInt16", "readUint32", "readInt32",
  "readFloat32", "readBool", "readStringWithLength", "readUint64", "readInt64", "readFloat64"];
const code = Object.fromEntries(READS.map((m, i) => [m, i]));
const NUMBER = new Set([code.readUint32, code.readUint64]);
const TEXT = code.readStringWithLength;

class Trace {
  constructor() {
    this.codes = new Uint8Array(1 << 12);
    this.numbers = new Float64Array(1 << 10);
    this.big = new Map(); // numbers index -> BigInt above 2^53
    this.texts = [];
    this.nCodes = this.nNumbers = 0;
  }
  static room(a, n) {
    if (n < a.length) return a;
    const b = new a.constructor(a.length * 2);
    b.set(a);
    return b;
  }
  /** Records a read; returns the function that stores its result, or null. */
  add(c) {
    this.codes = Trace.room(this.codes, this.nCodes);
    this.codes[this.nCodes++] = c;
    if (NUMBER.has(c)) {
      this.numbers = Trace.room(this.numbers, this.nNumbers);
      const at = this.nNumbers++;
      return (v) => {
        if (typeof v === "bigint" && v > BigInt(Number.MAX_SAFE_INTEGER)) this.big.set(at, v);
        else this.numbers[at] = Number(v);
      };
    }
    if (c === TEXT) {
      const at = this.texts.push(undefined) - 1;
      return (v) => { this.texts[at] = v; };
    }
    return null;
  }
}

let trace = null;
const then = (v, f) => (v instanceof Promise ? v.then(f) : f(v));
for (const method of READS) {
  const original = GgufFileReader.prototype[method];
  const c = code[method];
  GgufFileReader.prototype[method] = function (...args) {
    const store = trace === null ? null : trace.add(c);
    const result = original.apply(this, args);
    return store === null ? result : then(result, (v) => (store(v), v));
  };
}

/**
 * The reads -> [{key, node}] of the metadata in read order, following GgufV2Parser: magic,
 * version, tensor count, kv count, then per pair a string key, a uint32 type and the value
 * (a string is a uint64 length and the bytes; an array its uint32 element type, uint64 length
 * and elements). node: {type, elementType, items}, items only for arrays of arrays.
 */
function pairsOf(t) {
  let i = 0;
  let number = 0;
  let text = 0;
  function next(method) {
    const c = code[method];
    if (i >= t.nCodes || t.codes[i] !== c) throw new Error(`trace: expected ${method} at read ${i}`);
    i++;
    if (c === TEXT) return t.texts[text++];
    if (NUMBER.has(c)) {
      const at = number++;
      return t.big.has(at) ? t.big.get(at) : t.numbers[at];
    }
    return undefined;
  }
  const string = () => (next("readUint64"), next("readStringWithLength"));
  const scalar = ["readUint8", "readInt8", "readUint16", "readInt16", "readUint32", "readInt32",
    "readFloat32", "readBool", null, null, "readUint64", "readInt64", "readFloat64"];
  function value(type) {
    if (type === STRING) {
      string();
      return { type };
    }
    if (type === ARRAY) {
      const node = { type, elementType: next("readUint32") };
      const n = next("readUint64");
      if (node.elementType === ARRAY) node.items = [];
      for (let k = 0; k < n; k++) {
        const item = value(node.elementType);
        if (node.items) node.items.push(item);
      }
      return node;
    }
    if (!scalar[type]) throw new Error(`trace: the reader accepted value type ${type}`);
    next(scalar[type]);
    return { type };
  }
  next("readStringWithLength"); // magic
  next("readUint32"); // version
  next("readUint64"); // tensor count
  const kvCount = Number(next("readUint64")); // as the parser counts
  const pairs = [];
  for (let k = 0; k < kvCount; k++) {
    const key = string();
    pairs.push({ key, node: value(next("readUint32")) });
  }
  return pairs;
}

/**
 * The nested metadata object -> Map(dotted key -> value), the inverse of the parser's nesting.
 * Keys under noDirectSubNestingGGufMetadataKeys (tokenizer.chat_template.rerank) stay dotted on
 * purpose, and node-llama-cpp reads them so (tokenizer["chat_template.rerank"]). Any other key
 * that could not nest (general beside general.architecture) is kept under its whole dotted name
 * in the object it conflicts in, where the path node-llama-cpp's own code reads
 * (metadata.general.architecture, LlamaModel) no longer leads to it: left out, as lost.
 */
function flatten(object, prefix = [], out = new Map()) {
  for (const [k, v] of Object.entries(object)) {
    const unnested = k.includes(".");
    if (unnested && !noDirectSubNesting.has([...prefix, k.split(".")[0]].join("."))) continue;
    const keyPath = [...prefix, k];
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flatten(v, keyPath, out);
    else out.set(keyPath.join("."), v);
  }
  return out;
}

function arrayOf(node, v) {
  const element = node.elementType;
  return {
    element_type: valueTypeName(element),
    value: element === ARRAY
      ? v.map((item, k) => ({ type: "array", ...arrayOf(node.items[k], item) }))
      : v.map((item) => scalarText(element, item)),
  };
}

function canonical({ info, records }) {
  const pairs = pairsOf(records);
  const metadata = flatten(info.metadata);
  const firstRead = new Map();
  const lastRead = new Map();
  pairs.forEach((p, index) => {
    if (!firstRead.has(p.key)) firstRead.set(p.key, index);
    lastRead.set(p.key, p.node);
  });
  // The parser's own alignment expression (GgufV2Parser.parse).
  const a = metadata.get("general.alignment");
  const alignment = a != null && (typeof a === "number" || typeof a === "bigint") && Number.isFinite(Number(a))
    ? Number(a) : 32;
  const tensors = info.tensorInfo ?? [];
  const out = {
    version: intText(info.version),
    endianness: "little",
    alignment: String(alignment),
    tensor_count: intText(info.tensorCount),
    kv_count: String(pairs.length),
  };
  if (tensors.length > 0) out.data_offset = intText(info.infoEndOffset);
  const keys = [...metadata.keys()].sort((x, y) => (firstRead.get(x) ?? Infinity) - (firstRead.get(y) ?? Infinity));
  out.metadata = keys.map((key) => {
    const v = metadata.get(key);
    const node = lastRead.get(key);
    const entry = { key, type: valueTypeName(node?.type) };
    if (node?.type === ARRAY) Object.assign(entry, arrayOf(node, v));
    else entry.value = scalarText(node?.type, v);
    return entry;
  });
  out.tensors = tensors.map((t) => ({
    name: t.name,
    type: ggmlTypeName(t.ggmlType),
    type_id: String(t.ggmlType),
    dims: t.dimensions.map(intText),
    offset: intText(t.offset),
  }));
  return out;
}

await runAdapter({
  capabilities: {
    name: "node-llama-cpp",
    version: packageVersion("node-llama-cpp"),
    levels: ["L0", "L1", "L2"],
    gguf_versions: ["2", "3"],
    endianness: ["little"],
    batch: true,
  },
  read: async (file) => {
    trace = new Trace();
    try {
      const info = await readGgufFileInfo(file, { spliceSplitFiles: false });
      return { info, records: trace };
    } finally {
      trace = null;
    }
  },
  canonical,
});

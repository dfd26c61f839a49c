#!/usr/bin/env node
// The conformance adapter of @huggingface/gguf: gguf(path, {allowLocalFile: true,
// typedMetadata: true}). Accepted when the promise resolves, rejected when it rejects.
// Printed from what it returns: typedMetadata (value, GGUF type, element type of arrays),
// tensorInfos (name, shape, dtype, offset), tensorDataOffset, littleEndian. Levels 0-2 (it does
// not locate tensor data, so no level 3). See README.md for what it cannot express.
import {
  ggmlTypeName, importDep, intText, packageVersion, runAdapter, scalarText,
  untypedElement, valueTypeName,
} from "./canonical.mjs";

const { gguf } = await importDep("@huggingface/gguf/dist/index.mjs");

// typedMetadata starts with these three, from the header, in the same object as the file's keys.
const HEADER_KEYS = new Set(["version", "tensor_count", "kv_count"]);

function element(type, v) {
  // Nested arrays: the parser keeps their values but not their element types.
  if (type === 9) return untypedElement(v);
  return scalarText(type, v);
}

function entry(key, { value, type, subType }) {
  const out = { key, type: valueTypeName(type) };
  if (type === 9) {
    out.element_type = valueTypeName(subType);
    out.value = value.map((v) => element(subType, v));
  } else {
    out.value = scalarText(type, value);
  }
  return out;
}

function canonical(result) {
  const typed = result.typedMetadata;
  const tensors = result.tensorInfos;
  // The alignment the parser computed tensorDataOffset with (its own expression).
  const alignment = Number(result.metadata["general.alignment"] ?? 32);
  const out = {
    version: intText(typed.version.value),
    endianness: result.littleEndian ? "little" : "big",
    alignment: String(alignment),
    tensor_count: intText(typed.tensor_count.value),
    kv_count: intText(typed.kv_count.value),
  };
  if (tensors.length > 0) out.data_offset = intText(result.tensorDataOffset);
  out.metadata = Object.entries(typed)
    .filter(([key]) => !HEADER_KEYS.has(key))
    .map(([key, value]) => entry(key, value));
  out.tensors = tensors.map((t) => ({
    name: t.name,
    type: ggmlTypeName(t.dtype),
    type_id: String(t.dtype),
    dims: t.shape.map(intText),
    offset: intText(t.offset),
  }));
  return out;
}

await runAdapter({
  capabilities: {
    name: "@huggingface/gguf",
    version: packageVersion("@huggingface/gguf"),
    levels: ["L0", "L1", "L2"],
    gguf_versions: ["1", "2", "3"],
    endianness: ["little", "big"],
    batch: true,
  },
  read: (file) => gguf(file, { allowLocalFile: true, typedMetadata: true }),
  canonical,
});

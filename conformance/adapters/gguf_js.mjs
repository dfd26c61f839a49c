#!/usr/bin/env node
// The conformance adapter of gguf.js (npm "gguf"): parseRawMetadata(path), its CommonJS build.
// parseRawMetadata resolves to {error} or {metadata}: accepted when it resolves with metadata,
// rejected when it resolves with an error or rejects.
//
// Level 0 only: it returns the metadata as a nested object (keys split at "."; a key without a
// "." is dropped) with no GGUF types, no version, counts, alignment or tensor infos (it does not
// read them). So the output of an accepted file is {"ok": true}.
//
// parseRawMetadata opens the file and never closes it; in --batch the adapter closes the
// descriptors it opened after each file (fs-extra's open is wrapped to learn them), so that a
// long batch does not run out of descriptors: a difference to one-shot runs otherwise.
import fs from "node:fs";
import { packageVersion, requireDep, runAdapter } from "./canonical.mjs";

const fsExtra = requireDep("fs-extra");
const { parseRawMetadata } = requireDep("gguf");

const opened = [];
const open = fsExtra.open;
fsExtra.open = function (...args) {
  const r = open.apply(this, args);
  if (r && typeof r.then === "function") r.then((fd) => opened.push(fd), () => {});
  return r;
};

await runAdapter({
  capabilities: {
    name: "gguf.js",
    version: packageVersion("gguf"),
    levels: ["L0"],
    gguf_versions: ["1", "2", "3"],
    endianness: ["little"],
    batch: true,
  },
  read: async (file) => {
    try {
      const result = await parseRawMetadata(file);
      if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
      return result;
    } finally {
      for (const fd of opened.splice(0)) {
        try {
          fs.closeSync(fd);
        } catch {
          // already closed
        }
      }
    }
  },
  canonical: () => ({}),
});

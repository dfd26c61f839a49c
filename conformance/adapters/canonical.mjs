// Shared helpers of the JavaScript conformance adapters: where the npm packages are, the
// canonical scalars of docs/dump.md (integers, floats at their stored width, bools), the GGUF
// value type and ggml tensor type names, and the adapter protocol (one-shot, --capabilities,
// --batch; exit 0 accepted, 1 rejected, 3 resource failure, 4 adapter error).
//
// The packages are those conformance/setup installs: GGUF_CONFORMANCE_DEPS (the .deps/conformance
// directory), else ../../.deps/conformance from this file; they live in its js/node_modules.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const depsDir = process.env.GGUF_CONFORMANCE_DEPS
  ? path.resolve(process.env.GGUF_CONFORMANCE_DEPS)
  : path.resolve(here, "..", "..", ".deps", "conformance");
export const nodeModules = path.join(depsDir, "js", "node_modules");

/** require() that resolves packages from the installed node_modules. */
export const requireDep = createRequire(path.join(nodeModules, "_adapter_.cjs"));

/** import() of a file inside node_modules, by its path there ("hyllama/src/hyllama.js"). */
export async function importDep(relative) {
  const file = path.join(nodeModules, relative);
  if (!fs.existsSync(file)) {
    process.stderr.write(`adapter: ${file} is missing (run conformance/setup)\n`);
    process.exit(3);
  }
  return import(pathToFileURL(file).href);
}

export function packageVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(nodeModules, name, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
}

// GGUF value type ids -> the canonical names.
export const VALUE_TYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
  "bool", "string", "array", "uint64", "int64", "float64"];
export const valueTypeName = (id) => VALUE_TYPES[id] ?? "unknown";

// ggml tensor type ids -> the canonical (upper-case ggml) names: ggml.h's, with the removed ones.
const GGML_TYPES = ["F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1",
  "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",
  "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16",
  "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0", "TQ2_0", "IQ4_NL_4_4", "IQ4_NL_4_8",
  "IQ4_NL_8_8", "MXFP4", "NVFP4", "Q1_0", "Q2_0"];
export const ggmlTypeName = (id) => GGML_TYPES[Number(id)] ?? "unknown";

/** An integer as the parser returned it (BigInt or Number), in decimal. A lossy Number stays lossy. */
export const intText = (v) => (typeof v === "bigint" ? v.toString() : String(v));

// Floats: the shortest decimal that reads back to the same value at the stored width, written
// as std::to_chars writes it (ggufcheck dump): fixed or exponent form, whichever is shorter (fixed
// on a tie), the exponent signed with at least two digits: "0.1", "1e-05", "3.4028235e+38".
function toChars(negative, digits, exponent, exact) {
  // digits: no leading or trailing zeros; the value is d.ddd x 10^exponent; exact(): the value's
  // exact integer digits, for the fixed form of an integer (to_chars prints those, not zeros)
  const n = digits.length;
  const sci = digits[0] + (n > 1 ? "." + digits.slice(1) : "") + "e" + (exponent < 0 ? "-" : "+") +
    String(Math.abs(exponent)).padStart(2, "0");
  let fixed;
  if (exponent >= n - 1) fixed = digits + "0".repeat(exponent - n + 1);
  else if (exponent >= 0) fixed = digits.slice(0, exponent + 1) + "." + digits.slice(exponent + 1);
  else fixed = "0." + "0".repeat(-exponent - 1) + digits;
  if (fixed.length > sci.length) return (negative ? "-" : "") + sci;
  if (exponent >= n - 1) fixed = exact();
  return (negative ? "-" : "") + fixed;
}

function special(x) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  return null;
}

export function float64Text(x) {
  if (typeof x !== "number") return String(x);
  const s = special(x);
  if (s !== null) return s;
  const ax = Math.abs(x);
  const [mantissa, exponent] = ax.toExponential().split("e"); // shortest round trip
  return toChars(x < 0, mantissa.replace(".", "").replace(/0+$/, ""), parseInt(exponent, 10), () => BigInt(ax).toString());
}

// |d x 10^s - m x 2^e|, exactly, scaled by 2^max(0,-e) x 10^max(0,-s).
function distance(d, s, m, e) {
  const a = BigInt(Math.max(0, -e));
  const b = BigInt(Math.max(0, -s));
  const value = m * 2n ** (BigInt(e) + a) * 10n ** b;
  const candidate = d * 10n ** (BigInt(s) + b) * 2n ** a;
  return value > candidate ? value - candidate : candidate - value;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** x: a Number holding a float32 value (DataView.getFloat32, Buffer.readFloatLE). */
export function float32Text(x) {
  if (typeof x !== "number") return String(x);
  const s = special(x);
  if (s !== null) return s;
  const ax = Math.abs(x);
  if (Math.fround(ax) !== ax) return float64Text(x); // not a float32: print what was returned
  f32[0] = ax;
  const biased = u32[0] >>> 23;
  const m = BigInt(biased === 0 ? u32[0] & 0x7fffff : (u32[0] & 0x7fffff) | 0x800000);
  const e = biased === 0 ? -149 : biased - 150; // ax = m x 2^e exactly
  for (let p = 1; p <= 9; p++) {
    const [mantissa, exponent] = ax.toExponential(p - 1).split("e"); // nearest p digits
    const base = BigInt(mantissa.replace(".", ""));
    const scale = parseInt(exponent, 10) - (p - 1);
    // The nearest p-digit decimal, or a neighbour of it (at a binade's edge the interval that
    // rounds to x is lopsided; on a tie toExponential picks the larger): of those that round-trip,
    // the closest to x, the even one on a tie (as Ryu and std::to_chars).
    const fits = [base, base - 1n, base + 1n]
      .filter((d) => d > 0n && Math.fround(Number(`${d}e${scale}`)) === ax);
    let best = fits.length > 0 ? { d: fits[0] } : null;
    if (fits.length > 1) {
      best = null;
      for (const d of fits) {
        const dist = distance(d, scale, m, e);
        if (best === null || dist < best.dist || (dist === best.dist && d % 2n === 0n)) best = { d, dist };
      }
    }
    if (best !== null) {
      const all = best.d.toString();
      return toChars(x < 0, all.replace(/0+$/, ""), scale + all.length - 1, () => BigInt(ax).toString());
    }
  }
  return float64Text(x);
}

/**
 * A scalar of GGUF type `type` as the parser returned it -> the canonical string. Bools: the
 * parser's true/false (none of the JS parsers returns the byte).
 */
export function scalarText(type, v) {
  switch (type) {
    case 6: return float32Text(v);
    case 12: return float64Text(v);
    case 7: return v === true ? "true" : v === false ? "false" : String(v);
    case 8: return String(v);
    default: return intText(v);
  }
}

/**
 * An element of unknown GGUF type (inside a nested array whose element type the parser does
 * not return): by its JS type. Nested arrays -> {"type": "array", "element_type": "unknown"}.
 */
export function untypedElement(v) {
  if (Array.isArray(v)) return { type: "array", element_type: "unknown", value: v.map(untypedElement) };
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return Number.isInteger(v) && !Object.is(v, -0) ? String(v) : float64Text(v);
  return String(v);
}

const NON_ASCII = /[\u007f-\uffff]/g;
const escapeUnit = (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");

/** JSON, ASCII only as ggufcheck writes it: DEL and every non-ASCII UTF-16 unit as \uXXXX. */
export function asciiJson(value) {
  return JSON.stringify(value).replace(NON_ASCII, escapeUnit);
}

/** Writes asciiJson(value) and a newline, escaping a slice at a time (vocabularies are big). */
function writeJsonLine(value) {
  const text = JSON.stringify(value);
  const slice = 1 << 20;
  for (let i = 0; i < text.length; i += slice) {
    process.stdout.write(text.slice(i, i + slice).replace(NON_ASCII, escapeUnit));
  }
  return write("");
}

/**
 * A resource failure, not a rejection: the process must die so the runner records a crash.
 * V8 heap exhaustion is fatal by itself; these are the ones that arrive as exceptions.
 */
export function isResourceFailure(e) {
  if (e === null || typeof e !== "object") return false;
  const message = String(e.message ?? "");
  if (e instanceof RangeError &&
      /Invalid array length|Maximum call stack size exceeded|allocation failed|Invalid string length|Invalid typed array length|out of memory/i.test(message)) {
    return true;
  }
  if (["ERR_STRING_TOO_LONG", "ERR_BUFFER_TOO_LARGE", "ERR_FS_FILE_TOO_LARGE", "ENOMEM"].includes(e.code)) return true;
  // Buffer.alloc(size) refusing a size (over buffer.constants.MAX_LENGTH): an allocation failure.
  // Node 20 and later say ERR_OUT_OF_RANGE ("size"), Node 18 (Debian 12's) ERR_INVALID_ARG_VALUE.
  if (e.code === "ERR_OUT_OF_RANGE" && /"size"/.test(message)) return true;
  if (e.code === "ERR_INVALID_ARG_VALUE" && /'size'/.test(message)) return true;
  return false;
}

function die(status, what, e) {
  process.stderr.write(`adapter: ${what}: ${e?.stack ?? e}\n`);
  process.exit(status);
}

const errorText = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

function write(line) {
  return new Promise((resolve) => process.stdout.write(line + "\n", resolve));
}

/**
 * Runs the adapter protocol.
 *   capabilities: the --capabilities object;
 *   read(path): calls the parser: resolves to its result (accepted), throws (rejected);
 *   canonical(result): the canonical object of an accepted file (an exception here is the
 *   adapter's fault: exit 4, or 3 when it is a resource failure).
 */
export async function runAdapter({ capabilities, read, canonical }) {
  process.on("unhandledRejection", (e) => die(isResourceFailure(e) ? 3 : 4, "unhandled rejection", e));
  process.on("uncaughtException", (e) => die(isResourceFailure(e) ? 3 : 4, "uncaught exception", e));
  // The reader of stdout went away (a pipe to head): nobody is listening, stop quietly.
  process.stdout.on("error", (e) => process.exit(e.code === "EPIPE" ? 0 : 4));
  const args = process.argv.slice(2);

  async function one(file) {
    let result;
    try {
      result = await read(file);
    } catch (e) {
      if (isResourceFailure(e)) die(3, "resource failure", e);
      return [{ ok: false, error: errorText(e) }, 1];
    }
    try {
      return [{ ok: true, ...canonical(result) }, 0];
    } catch (e) {
      die(isResourceFailure(e) ? 3 : 4, isResourceFailure(e) ? "resource failure" : "adapter error", e);
    }
    return null;
  }

  if (args.length === 1 && args[0] === "--capabilities") {
    await write(JSON.stringify(capabilities));
    process.exit(0);
  }
  if (args.length === 1 && args[0] === "--batch") {
    const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const file of lines) {
      if (file === "") continue;
      const [value, status] = await one(file);
      value.exit = status;
      await writeJsonLine(value);
    }
    process.exit(0);
  }
  if (args.length === 1 && !args[0].startsWith("--")) {
    const [value, status] = await one(args[0]);
    await writeJsonLine(value);
    process.exit(status);
  }
  process.stderr.write("usage: ADAPTER FILE | --capabilities | --batch\n");
  process.exit(3);
}

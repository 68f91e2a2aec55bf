// The bridge's values for JavaScript: what crosses between the candidate (where the code under
// test runs) and the oracle (where the node:test files run), as JSON trees. The same frame as
// python/lmr_bridge/wire.py: the magic "LMRB", the JSON's length and the blob's length (two
// unsigned 64-bit big-endian numbers), then the JSON; the blob is empty here.
//
// Trees: strings, booleans, null and finite numbers are themselves; arrays are arrays; a plain
// object is an object (unless it has a "__lmr__" key). Everything else is tagged
// {"__lmr__": KIND, ...}: undefined, number (NaN, ±Infinity, -0), bigint, map, set, date,
// typed (a typed array, base64), object (a plain object with a "__lmr__" key, or an instance
// of a class: its own enumerable properties and its class's name). `decodeStrict` builds only
// values of JavaScript's own types (and `Instance` for a class instance): a subclass of Array,
// Map or Set, a Proxy, a function or a getter's result never reach an assertion as such.
import { types } from "node:util";

const TAG = "__lmr__";
const TYPED = [
  "Int8Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "Int16Array",
  "Uint16Array",
  "Int32Array",
  "Uint32Array",
  "Float32Array",
  "Float64Array",
  "BigInt64Array",
  "BigUint64Array",
];
const MAX_DEPTH = 200;

/** An instance of a class of the code under test, as the oracle sees it: its class's name and its own properties. */
export class Instance {
  constructor(typeName, attrs) {
    Object.defineProperty(this, "typeName", { value: typeName, enumerable: false });
    Object.assign(this, attrs);
    Object.freeze(this);
  }
}

class Unsupported extends Error {}

function isPlainObject(v) {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A value as a tree; throws Unsupported naming the path and the type of what cannot cross. */
export function encode(value, path = "", depth = 0, seen = new Set()) {
  if (depth > MAX_DEPTH) throw new Unsupported(`${path || "the value"} is nested too deeply`);
  const t = typeof value;
  if (value === null || t === "string" || t === "boolean") return value;
  if (t === "undefined") return { [TAG]: "undefined" };
  if (t === "number") {
    if (Number.isNaN(value)) return { [TAG]: "number", value: "NaN" };
    if (value === Infinity || value === -Infinity) return { [TAG]: "number", value: value > 0 ? "Infinity" : "-Infinity" };
    if (Object.is(value, -0)) return { [TAG]: "number", value: "-0" };
    return value;
  }
  if (t === "bigint") return { [TAG]: "bigint", value: value.toString() };
  if (t === "function") throw new Unsupported(`${path || "the value"} is a function, which cannot cross to the oracle`);
  if (t === "symbol") throw new Unsupported(`${path || "the value"} is a symbol, which cannot cross to the oracle`);
  if (types.isProxy(value)) throw new Unsupported(`${path || "the value"} is a Proxy, which cannot cross to the oracle`);
  if (seen.has(value)) throw new Unsupported(`${path || "the value"} contains itself (a cycle)`);
  seen.add(value);
  try {
    const ctor = Object.getPrototypeOf(value)?.constructor;
    const name = typeof ctor === "function" ? ctor.name : "Object";
    const exact = (C) => Object.getPrototypeOf(value) === C.prototype;
    if (Array.isArray(value)) {
      if (!exact(Array)) throw new Unsupported(`${path || "the value"} is a ${name}, a subclass of Array, which would come back as a plain Array`);
      return Array.from(value, (v, i) => encode(v, `${path}[${i}]`, depth + 1, seen));
    }
    if (types.isMap(value)) {
      if (!exact(Map)) throw new Unsupported(`${path || "the value"} is a ${name}, a subclass of Map`);
      return {
        [TAG]: "map",
        entries: [...value].map(([k, v], i) => [encode(k, `${path} key ${i}`, depth + 1, seen), encode(v, `${path}.get(${i})`, depth + 1, seen)]),
      };
    }
    if (types.isSet(value)) {
      if (!exact(Set)) throw new Unsupported(`${path || "the value"} is a ${name}, a subclass of Set`);
      return { [TAG]: "set", items: [...value].map((v, i) => encode(v, `${path} item ${i}`, depth + 1, seen)) };
    }
    if (types.isDate(value)) return { [TAG]: "date", value: Number.isNaN(value.getTime()) ? null : value.toISOString() };
    if (types.isTypedArray(value)) {
      const type = TYPED.find((n) => exact(globalThis[n]));
      if (!type) throw new Unsupported(`${path || "the value"} is a ${name}, a subclass of a typed array`);
      return { [TAG]: "typed", type, base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
    }
    if (types.isPromise(value)) throw new Unsupported(`${path || "the value"} is a Promise: await it in the candidate`);
    const entries = {};
    for (const key of Object.keys(value)) entries[key] = encode(value[key], `${path}.${key}`, depth + 1, seen);
    if (isPlainObject(value) && !(TAG in value)) return entries;
    if (isPlainObject(value)) return { [TAG]: "object", type: null, state: entries };
    return { [TAG]: "object", type: String(name), state: entries };
  } finally {
    seen.delete(value);
  }
}

export class Undecodable extends Error {}

/** The value a tree stands for, built from JavaScript's own types only. */
export function decodeStrict(tree, depth = 0) {
  if (depth > MAX_DEPTH) throw new Undecodable("a value nested too deeply");
  if (tree === null || typeof tree === "string" || typeof tree === "boolean") return tree;
  if (typeof tree === "number") return tree;
  if (Array.isArray(tree)) return tree.map((v) => decodeStrict(v, depth + 1));
  if (typeof tree !== "object") throw new Undecodable(`a value of JSON type ${typeof tree}`);
  if (!(TAG in tree)) {
    const out = {};
    for (const [k, v] of Object.entries(tree)) out[k] = decodeStrict(v, depth + 1);
    return out;
  }
  switch (tree[TAG]) {
    case "undefined":
      return undefined;
    case "number":
      if (!["NaN", "Infinity", "-Infinity", "-0"].includes(tree.value)) throw new Undecodable(`a number tagged ${JSON.stringify(tree.value)}`);
      return Number(tree.value);
    case "bigint":
      if (typeof tree.value !== "string" || !/^-?[0-9]{1,5000}$/.test(tree.value)) throw new Undecodable("a bigint that is not digits");
      return BigInt(tree.value);
    case "map":
      if (!Array.isArray(tree.entries)) throw new Undecodable("a map without entries");
      return new Map(
        tree.entries.map((e) => {
          if (!Array.isArray(e) || e.length !== 2) throw new Undecodable("a map entry that is not [key, value]");
          return [decodeStrict(e[0], depth + 1), decodeStrict(e[1], depth + 1)];
        }),
      );
    case "set":
      if (!Array.isArray(tree.items)) throw new Undecodable("a set without items");
      return new Set(tree.items.map((v) => decodeStrict(v, depth + 1)));
    case "date":
      return new Date(tree.value === null ? NaN : String(tree.value));
    case "typed": {
      if (!TYPED.includes(tree.type) || typeof tree.base64 !== "string") throw new Undecodable(`a typed array of type ${JSON.stringify(tree.type)}`);
      const bytes = Buffer.from(tree.base64, "base64");
      const C = globalThis[tree.type];
      if (bytes.length % C.BYTES_PER_ELEMENT !== 0) throw new Undecodable("a typed array whose bytes do not fill its elements");
      const copy = new Uint8Array(bytes.length);
      copy.set(bytes);
      return new C(copy.buffer);
    }
    case "object": {
      if (typeof tree.state !== "object" || tree.state === null || Array.isArray(tree.state)) throw new Undecodable("an object without its properties");
      const attrs = {};
      for (const [k, v] of Object.entries(tree.state)) attrs[k] = decodeStrict(v, depth + 1);
      return tree.type === null ? attrs : new Instance(String(tree.type), attrs);
    }
    default:
      throw new Undecodable(`a value tagged ${JSON.stringify(tree[TAG])}, which the oracle does not accept`);
  }
}

/** Full decoding in the candidate: the oracle's trees (plain data) back into values. */
export function decode(tree) {
  return decodeStrict(tree);
}

const MAGIC = Buffer.from("LMRB", "ascii");
const MAX_JSON = 256 * 1024 * 1024;

/** One frame's bytes for `doc`. */
export function frame(doc) {
  const body = Buffer.from(JSON.stringify({ ...doc, arrays: {} }), "utf8");
  const head = Buffer.alloc(20);
  MAGIC.copy(head, 0);
  head.writeBigUInt64BE(BigInt(body.length), 4);
  head.writeBigUInt64BE(0n, 12);
  return Buffer.concat([head, body]);
}

/** Reads frames from a stream of chunks: push(chunk) returns the documents it completed. */
export class FrameReader {
  constructor() {
    this.buf = Buffer.alloc(0);
  }

  push(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out = [];
    for (;;) {
      if (this.buf.length < 20) return out;
      if (!this.buf.subarray(0, 4).equals(MAGIC)) throw new Error("a frame that does not start with the bridge's magic bytes");
      const n = Number(this.buf.readBigUInt64BE(4));
      const blob = Number(this.buf.readBigUInt64BE(12));
      if (n > MAX_JSON || blob > MAX_JSON) throw new Error(`a frame of ${n + blob} bytes`);
      if (this.buf.length < 20 + n + blob) return out;
      const body = this.buf.subarray(20, 20 + n).toString("utf8");
      this.buf = this.buf.subarray(20 + n + blob);
      const doc = JSON.parse(body);
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new Error("a frame whose JSON is not an object");
      out.push(doc);
    }
  }
}

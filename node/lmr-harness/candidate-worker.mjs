// One candidate worker: imports the code under test and serves the oracle's requests, read
// from fd 3 as bridge frames (bridge-codec.mjs). Requests: {"op": "call", "module", "export",
// "args"} calls an export of a module of the tree (a path relative to the tree); {"op":
// "probe", "source", "helpers", "args"} runs a test file's probe function, whose source comes
// from the oracle, with `lmr.load(path)` to import a module of the tree; {"op": "report"}
// says what the tree's code imported. Replies: {"ok": TREE} | {"raised": {...}} | {"error",
// "import_failed"?}. Everything here is untrusted once the code under test is imported.
import net from "node:net";
import { isAbsolute, join, normalize } from "node:path";
import { pathToFileURL } from "node:url";
import { FrameReader, decode, encode, frame } from "./bridge-codec.mjs";

const state = globalThis[Symbol.for("lmr.candidate")] ?? { args: {}, imports: [] };
const args = state.args;
const conn = new net.Socket({ fd: 3, readable: true, writable: true });
const reader = new FrameReader();
const probes = new Map();

class ImportFailed extends Error {
  constructor(module, cause) {
    super(`${cause?.name ?? "Error"}: ${cause?.message ?? String(cause)}`);
    this.module = module;
    this.missing = cause?.code === "ERR_MODULE_NOT_FOUND" ? (/Cannot find (?:package|module) '([^']+)'/.exec(cause.message)?.[1] ?? null) : null;
    this.cause = cause;
  }
}

async function load(path) {
  const rel = normalize(String(path));
  if (isAbsolute(rel) || rel.startsWith("..")) throw new Error(`lmr.load: ${path} is not a path inside the workspace`);
  try {
    return await import(pathToFileURL(join(args.tree, rel)).href);
  } catch (err) {
    throw new ImportFailed(rel, err);
  }
}

const lmr = Object.freeze({ load });
let setupDone;
function setup() {
  setupDone ??= args.setup ? import(pathToFileURL(args.setup).href) : Promise.resolve();
  return setupDone;
}

function raised(err) {
  const chain = [];
  for (let p = err === null || typeof err !== "object" ? null : Object.getPrototypeOf(err); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    if (typeof p.constructor === "function") chain.push(p.constructor.name);
  }
  let message = "";
  try {
    message = err instanceof Error ? err.message : String(err);
  } catch {
    message = "<an exception whose text could not be read>";
  }
  return { type: chain[0] ?? typeof err, mro: chain, message: message.slice(0, 4000), traceback: String(err?.stack ?? "").slice(0, 6000) };
}

function probeFunction(doc) {
  const key = JSON.stringify([doc.source, doc.helpers ?? []]);
  let fn = probes.get(key);
  if (!fn) {
    const helpers = (doc.helpers ?? []).map((h) => `const ${h.name} = (${h.source});`).join("\n");
    fn = new Function("lmr", `"use strict";\n${helpers}\nreturn (${doc.source});`)(lmr);
    probes.set(key, fn);
  }
  return fn;
}

async function handle(doc) {
  await setup();
  const values = (doc.args ?? []).map(decode);
  let fn;
  if (doc.op === "call") {
    const mod = await load(doc.module);
    fn = doc.export.split(".").reduce((o, k) => (o == null ? o : o[k]), mod);
    if (typeof fn !== "function") return { error: `${doc.module} has no function ${doc.export}` };
  } else if (doc.op === "probe") {
    fn = probeFunction(doc);
  } else if (doc.op === "report") {
    return { report: { imports: state.imports } };
  } else {
    return { error: `unknown request ${JSON.stringify(doc.op)}` };
  }
  let result;
  try {
    result = await fn(...values);
  } catch (err) {
    if (err instanceof ImportFailed) throw err;
    return { raised: raised(err) };
  }
  return { ok: encode(result) };
}

let queue = Promise.resolve();
conn.on("data", (chunk) => {
  let docs;
  try {
    docs = reader.push(chunk);
  } catch (err) {
    process.stderr.write(`lmr candidate: a bad frame from the oracle: ${err.message}\n`);
    process.exit(1);
  }
  for (const doc of docs) {
    queue = queue.then(async () => {
      let reply;
      try {
        reply = await handle(doc);
      } catch (err) {
        if (err instanceof ImportFailed) {
          reply = {
            error: `the code under test could not be imported: ${err.message}`,
            import_failed: { module: err.module, missing: err.missing, message: err.message },
          };
        } else {
          reply = { error: `the candidate could not serve the request: ${err?.message ?? String(err)}` };
        }
      }
      conn.write(frame({ ...reply, rid: doc.rid }));
    });
  }
});
conn.on("end", () => process.exit(0));
conn.on("error", () => process.exit(0));

// What node:test grader files use to reach the code under test: `import { candidate, probe }
// from "@lmr/bridge"` (ts-hooks.mjs resolves the name here). The tests run in the oracle,
// which never imports the workspace; the code runs in the candidate (candidate.mjs), which
// sees the workspace and the arguments of each call, never the grader. Values cross as data
// (bridge-codec.mjs) and come back built from JavaScript's own types only.
//
//   const applyMerge = candidate.function("src/merge.ts", "applyMerge");
//   const changed = await applyMerge(vocab, stats, "l", "o");        // data back
//   const after = probe(async function mergeInPlace(counts) {        // runs in the candidate
//     const { buildVocab } = await lmr.load("src/vocab.ts");
//     ...
//     return { vocab, stats: [...stats] };
//   });
//
// A probe's source travels, not its closure: it may use its arguments, `lmr.load` and
// JavaScript's globals, and the helpers given as `probe(fn, { helpers: [f, g] })`.
import net from "node:net";
import { takeOver } from "./channel.mjs";
import { FrameReader, Instance, Undecodable, decodeStrict, encode, frame } from "./bridge-codec.mjs";

export { Instance };

/** The candidate could not answer (a crash, an exit, a hang, a frame the oracle does not accept). */
export class CandidateError extends Error {
  constructor(message) {
    super(message);
    this.name = "CandidateError";
  }
}

/** The code under test threw something whose class is not one of JavaScript's own errors. */
export class RemoteError extends Error {
  constructor(info) {
    super(`${info.type}: ${info.message}`);
    this.name = "RemoteError";
    this.typeName = info.type;
    this.chain = info.mro ?? [];
    this.remoteStack = info.traceback ?? "";
  }
}

const BUILTIN_ERRORS = { Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError };
const CONNECT_TIMEOUT_MS = 60_000;

let conn;
let reader;
let currentTest;
/** Tests in which the code under test could not be imported in the candidate (the reporter makes those errors). */
export const importFailures = [];

/** The test now running (the harness's beforeEach): import failures are charged to it. */
export function setTest(id) {
  currentTest = id;
}
let pending;
let rid = 0;
let connections = 0;

function socketPath() {
  const path = takeOver("args")?.bridge;
  if (!path) throw new CandidateError("there is no candidate process: these tests run under lmr's harness (lmr verify, lmr eval)");
  return path;
}

async function connect() {
  const path = socketPath();
  const deadline = Date.now() + CONNECT_TIMEOUT_MS;
  for (;;) {
    try {
      const sock = await new Promise((resolve, reject) => {
        const s = net.createConnection(path);
        s.once("connect", () => resolve(s));
        s.once("error", reject);
      });
      conn = sock;
      connections++;
      reader = new FrameReader();
      sock.on("data", (chunk) => {
        let docs;
        if (conn !== sock) return;
        try {
          docs = reader.push(chunk);
        } catch (err) {
          fail(new CandidateError(`the candidate answered with something that is not a bridge frame: ${err.message}`));
          return;
        }
        for (const doc of docs) {
          const p = pending;
          if (!p || doc.rid !== p.rid) {
            // fail() rejects the request still waiting (if any) and drops this candidate
            fail(new CandidateError("the candidate answered out of turn"));
            return;
          }
          pending = undefined;
          p.resolve(doc);
        }
      });
      // (a socket dropped earlier closes late: only the live one's end concerns the request waiting)
      sock.on("close", () => {
        if (conn === sock)
          fail(new CandidateError("the candidate process ended while it ran the call (it crashed, exited, or was killed for memory or by a signal)"));
      });
      sock.on("error", () => {});
      return;
    } catch (err) {
      // a candidate that served this run before and no longer listens is gone: waiting would only run out the clock
      if (connections > 0) throw new CandidateError("the candidate process is gone: nothing listens on the bridge any more");
      if ((err.code !== "ENOENT" && err.code !== "ECONNREFUSED") || Date.now() > deadline) {
        throw new CandidateError(`cannot reach the candidate process: ${err.message}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

function fail(err) {
  const p = pending;
  pending = undefined;
  restart();
  p?.reject(err);
}

/** Drops the candidate: the next call gets a fresh one (the old one is killed). */
export function restart() {
  const c = conn;
  conn = undefined;
  if (c) c.destroy();
  if (pending) {
    const p = pending;
    pending = undefined;
    p.reject(new CandidateError("the candidate was restarted while it ran a call"));
  }
}

/** Called by the harness after each test: a call the test abandoned (its timeout) leaves the candidate in an unknown state. */
export function afterTest() {
  if (pending) restart();
}

async function request(doc, what, raw = false) {
  if (!conn) await connect();
  if (pending) restart();
  if (!conn) await connect();
  const id = ++rid;
  const reply = await new Promise((resolve, reject) => {
    pending = { rid: id, resolve, reject };
    conn.write(frame({ ...doc, rid: id }));
  });
  return raw ? reply : answer(reply, what);
}

function answer(reply, what) {
  if ("ok" in reply) {
    try {
      return decodeStrict(reply.ok);
    } catch (err) {
      if (err instanceof Undecodable) throw new CandidateError(`${what} returned something the oracle does not accept: ${err.message}`);
      throw err;
    }
  }
  if (reply.raised && typeof reply.raised === "object") {
    const info = reply.raised;
    const name = (info.mro ?? []).find((n) => typeof n === "string" && n in BUILTIN_ERRORS);
    const err = name ? new BUILTIN_ERRORS[name](`${info.type}: ${info.message}`) : new RemoteError(info);
    err.lmrRemote = info;
    throw err;
  }
  if (typeof reply.error === "string") {
    if (reply.import_failed && typeof reply.import_failed === "object") {
      const f = reply.import_failed;
      importFailures.push({
        test: currentTest,
        module: String(f.module ?? "?"),
        missing: typeof f.missing === "string" ? f.missing : null,
        message: String(f.message ?? "").slice(0, 4000),
      });
    }
    throw new CandidateError(`${what}: ${reply.error.slice(0, 4000)}`);
  }
  throw new CandidateError(`the candidate's reply to ${what} has neither a value nor an error`);
}

function encodeArgs(values, what) {
  try {
    return values.map((v, i) => encode(v, `argument ${i}`));
  } catch (err) {
    throw new TypeError(`${what}: ${err.message}; pass plain data`);
  }
}

export const candidate = {
  /** Calls export `name` (a dotted path) of the tree's module `module` in the candidate. */
  call(module, name, ...args) {
    const what = `${module}#${name}(...)`;
    return request({ op: "call", module, export: name, args: encodeArgs(args, what) }, what);
  },
  /** A stand-in for an export of the tree that calls it in the candidate. */
  function(module, name) {
    return (...args) => candidate.call(module, name, ...args);
  },
  restart,
};

/** Makes a test-file function run in the candidate; calling the result returns a promise of its (plain) result. */
export function probe(fn, opts = {}) {
  if (typeof fn !== "function") throw new TypeError("probe takes a function");
  const source = fn.toString();
  const helpers = (opts.helpers ?? []).map((h) => {
    if (typeof h !== "function" || !h.name) throw new TypeError("probe helpers must be named functions");
    return { name: h.name, source: h.toString() };
  });
  const what = `probe ${fn.name || "(anonymous)"}`;
  return (...args) => request({ op: "probe", source, helpers, args: encodeArgs(args, what) }, what);
}

/** What the tree's code imported (trusted runs ask, at the end): null when the candidate never ran. */
export async function report() {
  if (!conn) return null;
  const reply = await request({ op: "report" }, "the report", true);
  return reply.report ?? null;
}

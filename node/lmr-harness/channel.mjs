// lmr's results channel for Node test runs: HMAC-signed records, one per line,
// `<hmac-sha256 hex> <json>`, on an inherited file descriptor or a unix socket, exactly
// as python/lmr_harness/run_pytest.py sends them (src/runner/channel.ts reads both).
//
// The key is a random nonce the parent writes on stdin; it is read before any code under
// test runs and then lives only in this module's closure. `claimSender()` hands the
// sender out once (to our reporter, which claims it before the first test file is
// imported); a later claim, by code under test, throws.
import { createHmac } from "node:crypto";
import { closeSync, openSync, readSync, writeSync } from "node:fs";
import net from "node:net";

const hmac = createHmac;
const write = writeSync;
const stringify = JSON.stringify;

let sender;
let claimed = false;
let resolveClaim;
/** Settles when the reporter has claimed the sender. */
export const reporterReady = new Promise((resolve) => {
  resolveClaim = resolve;
});

/** `--results-fd N` or `--results-socket PATH`, `--root`, `--mount`, `--per-test-s`, flags, then `--` and the test files. */
export function parseArgs(argv) {
  const out = {
    resultsFd: undefined,
    resultsSocket: undefined,
    root: undefined,
    mount: "lmr_tests",
    perTestS: 0,
    bail: false,
    reportImports: false,
    bridge: undefined,
    files: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out.files = argv.slice(i + 1);
      break;
    }
    if (a === "--results-fd") out.resultsFd = Number(argv[++i]);
    else if (a === "--results-socket") out.resultsSocket = argv[++i];
    else if (a === "--root") out.root = argv[++i];
    else if (a === "--mount") out.mount = argv[++i];
    else if (a === "--per-test-s") out.perTestS = Number(argv[++i]);
    else if (a === "--bail") out.bail = true;
    else if (a === "--report-imports") out.reportImports = true;
    else if (a === "--bridge") out.bridge = argv[++i];
  }
  return out;
}

/** Reads the key line from stdin (fd 0), then points fd 0 at /dev/null. */
function readKey() {
  const chunks = [];
  const buf = Buffer.alloc(256);
  for (let total = 0; total < 512;) {
    let n;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      if (err.code === "EAGAIN") continue;
      throw err;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(buf.subarray(0, n)));
    total += n;
    if (buf.subarray(0, n).includes(10)) break;
  }
  closeSync(0);
  openSync("/dev/null", "r"); // takes fd 0 again
  return Buffer.concat(chunks).toString("ascii").split("\n")[0].trim();
}

/** A sender that writes whole records to `fd` synchronously (a non-blocking fd may say EAGAIN). */
function fdWriter(fd) {
  return (text) => {
    let off = 0;
    const bytes = Buffer.from(text, "ascii");
    while (off < bytes.length) {
      try {
        off += write(fd, bytes, off);
      } catch (err) {
        if (err.code !== "EAGAIN") throw err;
      }
    }
  };
}

/** Kept for the life of the process: the socket's fd is ours only while this object lives. */
let resultsSocket;

/**
 * Where records go. `--results-fd N`: an inherited socket pair end from the parent
 * (/proc/self/fd cannot reopen a socket); processes the tests start inherit it too, but
 * without the key anything they write there only makes the channel untrusted: an error,
 * never a pass. `--results-socket PATH` (the docker backend): a unix socket bound into the
 * container, connected here before any code under test is imported, so the parent's first
 * connection is ours. Records are written to its fd synchronously, as to an inherited fd,
 * so none is lost to a buffered stream when the reporter ends the process; libuv opens
 * sockets close-on-exec, so processes the tests start do not inherit it.
 */
async function openResults(args) {
  if (args.resultsFd !== undefined && Number.isInteger(args.resultsFd)) return fdWriter(args.resultsFd);
  if (args.resultsSocket) {
    const sock = net.createConnection(args.resultsSocket);
    try {
      await new Promise((resolve, reject) => {
        sock.once("connect", resolve);
        sock.once("error", reject);
      });
    } catch (err) {
      process.stderr.write(`lmr harness: cannot connect to the results socket ${args.resultsSocket}: ${err.message}\n`);
      process.reallyExit(97);
    }
    sock.pause();
    sock.unref();
    sock.on("error", () => {});
    // net.Socket keeps its fd on its libuv handle (stable since Node 0.x, though not documented)
    const fd = sock._handle?.fd;
    if (!Number.isInteger(fd) || fd < 0) {
      process.stderr.write(`lmr harness: this Node (${process.version}) does not expose a unix socket's fd; give --results-fd N\n`);
      process.reallyExit(97);
    }
    resultsSocket = sock;
    return fdWriter(fd);
  }
  process.stderr.write("lmr harness: give --results-fd N or --results-socket PATH\n");
  process.reallyExit(97);
}

/** JSON with every non-ASCII character escaped, as Python's ensure_ascii. */
function asciiJson(record) {
  return stringify(record).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Reads the key, opens the channel and returns the sender (the preload's); the reporter's comes from claimSender(). */
export async function openChannel(args) {
  const key = readKey();
  if (key.length < 32) {
    process.stderr.write("lmr harness: no results key on stdin\n");
    process.reallyExit(97);
  }
  const out = await openResults(args);
  let seq = 0;
  const send = (record) => {
    const body = asciiJson({ ...record, seq: seq++ });
    const mac = hmac("sha256", key).update(body, "ascii").digest("hex");
    out(`${mac} ${body}\n`);
  };
  sender = send;
  return send;
}

export function claimSender() {
  if (claimed || !sender) throw new Error("lmr harness: the results channel is not available");
  claimed = true;
  const s = sender;
  sender = undefined;
  resolveClaim();
  return s;
}

/** One-time hand-over of values from the entry to the reporter (the suites it will wait for). */
const handed = new Map();
export function handOver(name, value) {
  if (handed.has(name)) throw new Error(`lmr harness: ${name} was already handed over`);
  handed.set(name, value);
}
export function takeOver(name) {
  return handed.get(name);
}

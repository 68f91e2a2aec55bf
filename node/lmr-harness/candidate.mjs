// The candidate for node:test runs: the only process tree that imports the code under test.
// It runs in a sandbox of its own holding the tree, the grader's candidate files and the
// bridge's socket folder, nothing else of the host; it holds no key and decides nothing.
// For each connection of the oracle it starts a worker (candidate-worker.mjs, with the
// TypeScript hooks) and relays the connection's bytes to the worker's fd 3 and back; when
// the oracle hangs up, the worker's process group is killed, and when the worker dies, the
// connection is closed, so the oracle sees every crash as the end of the stream.
//
//   node candidate.mjs --socket PATH --tree DIR [--copy-from DIR] [--support DIR] [--setup FILE] [--report-imports]
import { spawn } from "node:child_process";
import { cpSync, rmSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";

const args = { socket: "", tree: "", copyFrom: "", support: "", setup: "", reportImports: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--socket") args.socket = argv[++i];
  else if (a === "--tree") args.tree = argv[++i];
  else if (a === "--copy-from") args.copyFrom = argv[++i];
  else if (a === "--support") args.support = argv[++i];
  else if (a === "--setup") args.setup = argv[++i];
  else if (a === "--report-imports") args.reportImports = true;
}
if (!args.socket || !args.tree) {
  process.stderr.write("lmr candidate: give --socket PATH --tree DIR\n");
  process.exit(2);
}

const worker = fileURLToPath(new URL("./candidate-worker.mjs", import.meta.url));
const register = fileURLToPath(new URL("./candidate-register.mjs", import.meta.url));
rmSync(args.socket, { force: true });
// the run's tree into its own (size-capped) folder, before any of its code runs
if (args.copyFrom) cpSync(args.copyFrom, args.tree, { recursive: true, verbatimSymlinks: true, force: true });
const server = net.createServer((conn) => {
  conn.pause();
  const child = spawn(process.execPath, ["--import", register, worker], {
    cwd: args.tree,
    env: { ...process.env, LMR_CANDIDATE: JSON.stringify(args) },
    stdio: ["ignore", "inherit", "inherit", "pipe"],
    detached: true,
  });
  const pipe = child.stdio[3];
  const killChild = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone already
    }
  };
  conn.on("error", () => {});
  pipe.on("error", () => {});
  conn.on("close", killChild);
  child.on("exit", () => conn.destroy());
  child.on("error", () => conn.destroy());
  conn.pipe(pipe);
  pipe.pipe(conn);
  conn.resume();
});
server.listen(args.socket, () => {
  // before any code under test runs: the runner tells a candidate that could not start (ours)
  // from one the code under test brought down (the submission's doing)
  process.stdout.write('{"t": "ready"}\n');
});

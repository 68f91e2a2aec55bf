import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { hashTree } from "../core/hash.js";
import { toolkitPath } from "../core/paths.js";
import { selectBackend } from "./backends.js";
import { RecordReader } from "./channel.js";
import { harnessArgs } from "./harness-args.js";
import { buildChildEnv } from "./limits.js";
import { openResultsSocket } from "./results-socket.js";
import { prepareScratch } from "./scratch.js";
import type { Backend, PythonEnv, RunOutcome, RunRequest, SandboxChoice } from "./types.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";

const SERVER = toolkitPath("python", "lmr_harness", "fork_server.py");
const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");
const READY_TIMEOUT_MS = 120_000;

export interface ForkServerOptions {
  python: PythonEnv;
  sandbox: SandboxChoice;
  /** Installed modules to import once in the server (torch, numpy, …). */
  preload: string[];
  network: boolean;
  threads?: number;
  /** Folders hidden inside the sandbox (the task folder, the bundle). */
  hidePaths: string[];
}

type Message = { t: string; id?: string; pid?: number; code?: number | null; signal?: string | null; timed_out?: boolean; preloaded?: string[]; failed?: string[] };

/**
 * One long-lived Python process, in one sandbox, that has imported pytest and the
 * task's heavy modules, and forks a harness child per run: a run costs a fork and
 * the tests, not an interpreter start and `import torch`. For trusted runs only
 * (verify's stub, alternatives and mutants): children share the sandbox, so one
 * could see another's scratch folder, and there is no per-run pids cgroup. The
 * child's records come over its own signed socket, exactly as in a plain run; the
 * verdict is decided by the same code.
 */
export class ForkServer {
  private constructor(
    private readonly proc: ChildProcess,
    private readonly dir: string,
    private readonly backend: Backend,
    private readonly opts: ForkServerOptions,
    readonly preloaded: string[],
  ) {}

  private waiting = new Map<string, (m: Message) => void>();
  private next = 0;

  /** Starts a server, or returns undefined where it cannot run (docker backend, no interpreter): callers use plain runs then. */
  static async start(opts: ForkServerOptions): Promise<ForkServer | undefined> {
    if (!existsSync(opts.python.path) || (opts.python as { image?: unknown }).image) return undefined;
    const sel = await selectBackend(opts.sandbox === "auto" ? "auto" : opts.sandbox, undefined, { quiet: true });
    if ("reason" in sel || sel.backend.name === "docker") return undefined;
    const dir = await mkdtemp(join(tmpdir(), "lmr-fork-"));
    const keep = new Set<string>([dirname(SERVER), ...(opts.python.prefixes ?? [])]);
    for (const exe of [opts.python.path, safeRealpath(opts.python.path)]) if (exe) keep.add(dirname(dirname(exe)));
    keep.delete("/");
    const argv = sel.backend.wrap([opts.python.path, "-s", "-B", SERVER, ...opts.preload.flatMap((m) => ["--preload", m])], {
      scratch: dir,
      readOnly: [],
      keepVisible: [...keep],
      hide: opts.hidePaths.map((p) => resolve(p)),
      network: opts.network,
    });
    const env = buildChildEnv({ pythonPath: opts.python.path, home: join(dir, "home"), tmp: dir, threads: opts.threads ?? 1, network: opts.network });
    const proc = spawn(argv[0]!, argv.slice(1), { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    const lines = createInterface({ input: proc.stdout! });
    const ready = await new Promise<Message | undefined>((resolveReady) => {
      const timer = setTimeout(() => resolveReady(undefined), READY_TIMEOUT_MS);
      lines.once("line", (l) => {
        clearTimeout(timer);
        resolveReady(parse(l));
      });
      proc.once("exit", () => resolveReady(undefined));
    });
    if (ready?.t !== "ready") {
      killTree(proc);
      await rm(dir, { recursive: true, force: true });
      return undefined;
    }
    const server = new ForkServer(proc, dir, sel.backend, opts, ready.preloaded ?? []);
    lines.on("line", (l) => server.dispatch(parse(l)));
    proc.once("exit", () => {
      for (const done of server.waiting.values()) done({ t: "exit", code: null, signal: "SIGKILL", timed_out: false });
      server.waiting.clear();
    });
    void stderr;
    return server;
  }

  private dispatch(m: Message | undefined): void {
    if (!m?.id) return;
    const key = `${m.t}:${m.id}`;
    const done = this.waiting.get(key);
    if (done) {
      this.waiting.delete(key);
      done(m);
    }
  }

  private expect(t: string, id: string): Promise<Message> {
    return new Promise((r) => this.waiting.set(`${t}:${id}`, r));
  }

  /** One run, as `runTests` would do it, in a forked child of the server. */
  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const mount = req.mount ?? "lmr_tests";
    const memoryMb = req.memoryMb ?? 4096;
    const scratch = await prepareScratch(req.tree, req.grader, mount, req.overlay, this.dir);
    const id = String(this.next++);
    const key = randomBytes(32).toString("hex");
    const sock = await openResultsSocket(join(scratch.dir, "results.sock"));
    const reader = new RecordReader(key, () => {});
    const streamDone = new Promise<void>((r) => {
      sock.stream.on("data", (d: Buffer) => reader.feed(d));
      sock.stream.on("end", () => r());
      sock.stream.on("close", () => r());
    });
    try {
      const before = await hashTree(scratch.mountDir);
      const argv = harnessArgs({ req, harness: HARNESS, ini: HARNESS_INI, root: scratch.root, mountDir: scratch.mountDir, mount, results: ["--results-socket", sock.path], asBytes: memoryMb * 1024 * 1024 });
      const env = { HOME: scratch.home, TMPDIR: scratch.tmp };
      const exited = this.expect("exit", id);
      this.proc.stdin!.write(`${JSON.stringify({ id, argv: argv.slice(3), key, env, log: join(scratch.dir, "log.txt"), timeout_s: req.timeoutTotalS })}\n`);
      const exit = await exited;
      sock.endIfUnused();
      await Promise.race([streamDone, new Promise((r) => setTimeout(r, 2000))]);
      const after = await hashTree(scratch.mountDir).catch(() => ({ files: {} as Record<string, string> }));
      const facts: ProcessFacts = {
        exitCode: exit.code ?? null,
        signal: exit.signal ?? null,
        graderModified: changed(before.files, after.files),
        stderrTail: "",
        ...(exit.timed_out ? { wallTimeoutS: req.timeoutTotalS } : {}),
        ...(req.stopAtFirstFailure ? { stopAtFirstFailure: true } : {}),
      };
      if (sock.extraConnections() > 0) reader.state.problems.push("a second connection to the results socket");
      const verdict = decideVerdict(reader.state, facts);
      const log = await import("node:fs/promises").then((f) => f.readFile(join(scratch.dir, "log.txt"), "utf8")).catch(() => "");
      return {
        ...verdict,
        exit_code: facts.exitCode,
        duration_s: (performance.now() - t0) / 1000,
        backend: this.backend.name,
        python: { path: this.opts.python.path, version: reader.state.hello?.python ?? this.opts.python.version },
        log: log.slice(-64 * 1024),
        ...(reader.state.junit !== undefined ? { junit_xml: reader.state.junit } : {}),
        ...(reader.state.imports ? { imports: reader.state.imports } : {}),
        ...(req.traceLines ? { lines: reader.state.lines } : {}),
        isolation: { ...this.backend.describe({ scratch: this.dir, readOnly: [], keepVisible: [], hide: [], network: this.opts.network }), memory_mb: memoryMb, pids: "none" },
      };
    } finally {
      await sock.close().catch(() => undefined);
      await rm(scratch.dir, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    this.proc.stdin!.end();
    await new Promise<void>((r) => {
      const timer = setTimeout(() => {
        killTree(this.proc);
        r();
      }, 5000);
      this.proc.once("exit", () => {
        clearTimeout(timer);
        r();
      });
      if (this.proc.exitCode !== null) r();
    });
    killTree(this.proc);
    await rm(this.dir, { recursive: true, force: true });
  }
}

function parse(line: string): Message | undefined {
  try {
    return JSON.parse(line) as Message;
  } catch {
    return undefined;
  }
}

function changed(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).sort();
}

function safeRealpath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function killTree(proc: ChildProcess): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    // gone already
  }
}

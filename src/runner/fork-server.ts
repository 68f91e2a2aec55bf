import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { hashTree } from "../core/hash.js";
import { toolkitPath } from "../core/paths.js";
import { dockerBin, removeContainers } from "../env/docker-cli.js";
import { IMAGE_TOOLKIT_PYTHON } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";
import { selectBackend } from "./backends.js";
import { RecordReader } from "./channel.js";
import { harnessArgs } from "./harness-args.js";
import { chownTree, containerEnv, containerUser, dockerRunArgs, isRoot } from "./docker-run.js";
import type { DockerTarget } from "./docker-image.js";
import { trackContainer } from "./docker-sweep.js";
import { buildChildEnv } from "./limits.js";
import { openResultsSocket } from "./results-socket.js";
import { prepareScratch } from "./scratch.js";
import type { Backend, PythonEnv, RunOutcome, RunRequest, SandboxChoice } from "./types.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";

const SERVER = toolkitPath("python", "lmr_harness", "fork_server.py");
const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");
const READY_TIMEOUT_MS = 120_000;
const IN_SERVER = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/fork_server.py`;
const IN_HARNESS = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/run_pytest.py`;
const IN_INI = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/pytest.ini`;
/** A server container outliving every verify by far kills itself: a guard for when nobody is left to stop it. */
const CONTAINER_LIFETIME_S = 6 * 3600;

export interface ForkServerOptions {
  python: PythonEnv;
  sandbox: SandboxChoice;
  /** Installed modules to import once in the server (torch, numpy, …), in this order. */
  preload: string[];
  /** Names mapped to None in the server for good (a first run's conftest blocked them). */
  blocked?: string[];
  /** Names mapped to None while the server imports (the tree's and grader's modules, fakes): nothing preloaded binds an installed module of that name. */
  standIns?: string[];
  network: boolean;
  threads?: number;
  /** Folders hidden inside the sandbox (the task folder, the bundle). */
  hidePaths: string[];
  /** The task's environment: under docker, the image the server runs in. */
  environment?: Readonly<Environment>;
  /** Each child's memory (its address-space cap); under docker the server's container gets a few times this. */
  memoryMb?: number;
  /** Each child's processes; under docker the server's container gets a few times this. */
  maxProcs?: number;
  /**
   * What a fresh run's conftest left changed in the environment (RunOutcome.env_changes):
   * the server preloads under it, as a fresh run imports those modules after the conftest ran.
   */
  envChanges?: { set: Record<string, string>; unset: string[] };
  /** The folder the server's own folder (and its runs' scratch copies) is made in; default: the system's temp folder. */
  scratchParent?: string;
}

/**
 * The server's preload arguments: the plan goes in a file in the server's own folder (a plan
 * from a torch run names a thousand modules and more), which the sandbox and the container
 * both show at the same path.
 */
async function preloadArgs(dir: string, opts: ForkServerOptions): Promise<string[]> {
  const plan = { modules: opts.preload, blocked: opts.blocked ?? [], stand_ins: opts.standIns ?? [] };
  if (plan.modules.length + plan.blocked.length + plan.stand_ins.length === 0) return [];
  const file = join(dir, "plan.json");
  await writeFile(file, JSON.stringify(plan), { mode: 0o644 });
  return ["--plan", file];
}

/** `env` with a run's environment changes applied. */
function withChanges(env: Record<string, string>, c: ForkServerOptions["envChanges"]): Record<string, string> {
  if (!c) return env;
  const out = { ...env, ...c.set };
  for (const k of c.unset) delete out[k];
  return out;
}

/** Under docker: the server's container, and what a run must do for its user to use its scratch folder. */
interface InContainer {
  name: string;
  target: DockerTarget;
  user: { uid: number; gid: number };
  untrack: () => void;
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
    private readonly container?: InContainer,
  ) {}

  private waiting = new Map<string, (m: Message) => void>();
  private next = 0;

  /** Starts a server, or returns undefined where it cannot run (docker backend, no interpreter): callers use plain runs then. */
  static async start(opts: ForkServerOptions): Promise<ForkServer | undefined> {
    if (process.env.LMR_FORK_SERVER !== "1") return undefined; // TODO(bridge): the oracle/candidate server pair
    const inImage = (opts.python as { image?: unknown }).image !== undefined;
    const sel = await selectBackend(opts.sandbox === "auto" ? "auto" : opts.sandbox, inImage ? opts.environment : undefined, { quiet: true });
    if ("reason" in sel) return undefined;
    if (sel.backend.name === "docker") return sel.image ? ForkServer.startInContainer(opts, sel.backend, sel.image) : undefined;
    if (!existsSync(opts.python.path) || inImage) return undefined;
    const dir = await mkdtemp(join(opts.scratchParent ?? tmpdir(), "lmr-fork-"));
    const keep = new Set<string>([dirname(SERVER), ...(opts.python.prefixes ?? [])]);
    for (const exe of [opts.python.path, safeRealpath(opts.python.path)]) if (exe) keep.add(dirname(dirname(exe)));
    keep.delete("/");
    const argv = sel.backend.wrap([opts.python.path, "-s", "-B", SERVER, ...(await preloadArgs(dir, opts))], {
      readOnly: [...keep],
      writable: [dir],
      tmpfs: [{ path: "/tmp", sizeMb: 512 }],
      chdir: dir,
      network: opts.network,
    });
    const env = withChanges(buildChildEnv({ pythonPath: opts.python.path, home: join(dir, "home"), tmp: dir, threads: opts.threads ?? 1, network: opts.network }), opts.envChanges);
    return ForkServer.connect(argv, env, dir, sel.backend, opts);
  }

  /**
   * The server in the task's image: one container (no network unless the task has it,
   * read-only root, tmpfs /tmp, an unprivileged user, no capabilities, memory and pids
   * cgroups) whose only writable mount is the folder the runs' scratch copies go in,
   * bound at the same path, so a child's tree, log and results socket have the paths
   * the host gave them. Labelled like every run's container, so a later run removes it
   * if lmr dies without closing it.
   */
  private static async startInContainer(opts: ForkServerOptions, backend: Backend, target: DockerTarget): Promise<ForkServer | undefined> {
    const dir = await mkdtemp(join(opts.scratchParent ?? tmpdir(), "lmr-fork-"));
    const user = containerUser();
    if (isRoot()) await chown(dir, user.uid, user.gid);
    else await chmod(dir, 0o700);
    const name = `lmr-fork-${process.pid}-${randomBytes(5).toString("hex")}`;
    const threads = opts.threads ?? 1;
    const memoryMb = opts.memoryMb ?? 4096;
    const argv = [dockerBin(), ...dockerRunArgs({
      name,
      image: target.id,
      writable: [dir],
      readOnly: [],
      workdir: dir,
      env: withChanges(containerEnv({ home: "/tmp", tmp: "/tmp" }, threads, opts.network), opts.envChanges),
      user,
      network: opts.network,
      // children run side by side (one per run slot), each under its own address-space cap
      memoryMb: memoryMb * 3,
      maxProcs: (opts.maxProcs ?? 256) * 4,
      cpus: cpus().length,
      gpu: target.gpu,
      cmd: ["timeout", "--signal=KILL", `${CONTAINER_LIFETIME_S}s`, target.python, "-s", "-B", IN_SERVER, ...(await preloadArgs(dir, opts))],
    })];
    const untrack = trackContainer(name);
    const server = await ForkServer.connect(argv, { ...(process.env as Record<string, string>) }, dir, backend, opts, { name, target, user, untrack });
    if (!server) {
      await removeContainers([name]);
      untrack();
    }
    return server;
  }

  private static async connect(argv: string[], env: Record<string, string>, dir: string, backend: Backend, opts: ForkServerOptions, container?: InContainer): Promise<ForkServer | undefined> {
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
    const server = new ForkServer(proc, dir, backend, opts, ready.preloaded ?? [], container);
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
    const c = this.container;
    if (c && isRoot()) {
      // the container's user runs the child: it must own its copy and be able to connect
      await chownTree(scratch.dir, c.user.uid, c.user.gid);
      await chown(sock.path, c.user.uid, c.user.gid);
    }
    const reader = new RecordReader(key, () => {});
    const streamDone = new Promise<void>((r) => {
      sock.stream.on("data", (d: Buffer) => reader.feed(d));
      sock.stream.on("end", () => r());
      sock.stream.on("close", () => r());
    });
    try {
      const before = await hashTree(scratch.mountDir);
      const argv = harnessArgs({ req, harness: c ? IN_HARNESS : HARNESS, ini: c ? IN_INI : HARNESS_INI, root: scratch.root, mountDir: scratch.mountDir, mount, results: ["--results-socket", sock.path], asBytes: memoryMb * 1024 * 1024 });
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
      const log = await readFile(join(scratch.dir, "log.txt"), "utf8").catch(() => "");
      return {
        ...verdict,
        exit_code: facts.exitCode,
        duration_s: (performance.now() - t0) / 1000,
        backend: this.backend.name,
        python: { path: c ? c.target.python : this.opts.python.path, version: reader.state.hello?.python ?? this.opts.python.version },
        ...(c ? { image: { tag: c.target.tag, id: c.target.id, digest: c.target.digest } } : {}),
        log: log.slice(-64 * 1024),
        ...(reader.state.junit !== undefined ? { junit_xml: reader.state.junit } : {}),
        ...(reader.state.imports ? { imports: reader.state.imports } : {}),
        ...(reader.state.loaded ? { loaded_modules: reader.state.loaded } : {}),
        ...(req.traceLines ? { lines: reader.state.lines } : {}),
        isolation: c
          ? { network: this.opts.network ? "on" : "off", filesystem: "minimal", memory_mb: memoryMb, pids: "cgroup", uid: c.user.uid }
          : { ...this.backend.describe({ readOnly: [], writable: [], tmpfs: [], chdir: this.dir, network: this.opts.network }), memory_mb: memoryMb, pids: "none" },
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
    if (this.container) {
      // the CLI gone does not always mean the container is: ask the daemon
      await removeContainers([this.container.name]).catch(() => undefined);
      this.container.untrack();
    }
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

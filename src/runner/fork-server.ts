import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import { LmrError } from "../core/errors.js";
import { VALIDATORS, schemaCheck } from "../core/schema-validator.js";
import { hashTree } from "../core/hash.js";
import { toolkitPath } from "../core/paths.js";
import { dockerBin, removeContainers } from "../env/docker-cli.js";
import { IMAGE_TOOLKIT_PYTHON } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";
import { selectBackend } from "./backends.js";
import { backendOf, type RunTarget } from "./run-target.js";
import { CANDIDATE_SCRIPT, CANDIDATE_SHM_MB, CANDIDATE_SOCKET, CANDIDATE_TMP_MB } from "./candidate.js";
import { RecordReader } from "./channel.js";
import { chownTree, containerEnv, containerUser, dockerRunArgs, isRoot } from "./docker/run.js";
import type { DockerTarget } from "./docker/image.js";
import { trackContainer } from "./docker/sweep.js";
import { harnessArgs } from "./harness-args.js";
import { buildChildEnv } from "./limits.js";
import { outcomeExtras } from "./outcome-extras.js";
import { openResultsSocket } from "./results-socket.js";
import { interpreterFolders, scratchLayout } from "./run-tests.js";
import { makeSocketDir, prepareScratch, removeScratch } from "./scratch.js";
import type { Backend, PythonEnv, RunOutcome, RunRequest, SandboxChoice, WrapOptions } from "./types.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";

const SERVER = toolkitPath("python", "lmr_harness", "fork_server.py");
const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");
const READY_TIMEOUT_MS = 120_000;
const IN_SERVER = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/fork_server.py`;
const IN_HARNESS = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/run_pytest.py`;
const IN_INI = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/pytest.ini`;
const IN_CANDIDATE = `${IMAGE_TOOLKIT_PYTHON}/lmr_bridge/candidate.py`;
/** A server container outliving every verify by far kills itself: a guard for when nobody is left to stop it. */
const CONTAINER_LIFETIME_S = 6 * 3600;

/** What one server imports before it forks: modules in order, names blocked for good, names None while importing. */
export interface PreloadPlan {
  preload: string[];
  blocked?: string[];
  standIns?: string[];
  /** What a fresh run's set-up left changed in the environment: the server imports under it. */
  envChanges?: { set: Record<string, string>; unset: string[] };
}

export interface ForkServerOptions extends PreloadPlan {
  python: PythonEnv;
  sandbox: SandboxChoice;
  /** The task's run target, resolved once (it wins over `sandbox`). */
  target?: RunTarget;
  /** The candidates' server's plan (what the code under test's side loaded in a fresh run). */
  candidate?: PreloadPlan;
  network: boolean;
  threads?: number;
  /** The task's environment: under docker, the image the servers run in. */
  environment?: Readonly<Environment>;
  /** Each child's memory (its address-space cap); under docker a server's container gets a few times this. */
  memoryMb?: number;
  /** Each child's processes; under docker a server's container gets a few times this. */
  maxProcs?: number;
  /** The folder the servers' own folder (and their runs' scratch copies) is made in; default: the system's temp folder. */
  scratchParent?: string;
}

type Message = {
  t: string;
  id?: string;
  pid?: number;
  code?: number | null;
  signal?: string | null;
  timed_out?: boolean;
  preloaded?: string[];
  failed?: string[];
  error?: string;
};

/** The folders of a pair of servers: the oracles' runs, the candidates' runs, and the sockets between them. */
interface Folders {
  dir: string;
  oracle: string;
  candidate: string;
  bridge: string;
}

/** A plan as a file in a folder both the host and the server see (a torch plan names a thousand modules and more). */
export async function planArgs(dir: string, name: string, plan: PreloadPlan | undefined): Promise<string[]> {
  if (!plan) return [];
  const body = { modules: plan.preload, blocked: plan.blocked ?? [], stand_ins: plan.standIns ?? [] };
  if (body.modules.length + body.blocked.length + body.stand_ins.length === 0) return [];
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(body), { mode: 0o644 });
  return ["--plan", file];
}

/** `env` with a run's environment changes applied. */
export function withChanges(env: Record<string, string>, c: PreloadPlan["envChanges"]): Record<string, string> {
  if (!c) return env;
  const out = { ...env, ...c.set };
  for (const k of c.unset) delete out[k];
  return out;
}

/** One long-lived Python process that speaks JSON lines: a job on stdin, records on stdout. */
export class Speaker {
  private waiting = new Map<string, (m: Message) => void>();
  constructor(readonly proc: ChildProcess) {}

  static async connect(argv: string[], env: Record<string, string>, cwd: string): Promise<{ speaker?: Speaker; ready?: Message; stderr: () => string }> {
    const proc = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stderr = "";
    proc.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    proc.stdin!.on("error", () => {});
    const lines = createInterface({ input: proc.stdout! });
    const ready = await new Promise<Message | undefined>((resolveReady) => {
      const timer = setTimeout(() => resolveReady(undefined), READY_TIMEOUT_MS);
      lines.once("line", (l) => {
        clearTimeout(timer);
        resolveReady(parse(l));
      });
      proc.once("exit", () => resolveReady(undefined));
      proc.once("error", () => resolveReady(undefined));
    });
    if (ready?.t !== "ready") {
      killTree(proc);
      return { stderr: () => stderr };
    }
    const speaker = new Speaker(proc);
    lines.on("line", (l) => {
      const m = parse(l);
      if (m === undefined || followsControlProtocol(m)) speaker.dispatch(m);
      else
        speaker.fail(
          `the server broke the control protocol (schema/fork-server-message.schema.json): ${followsControlProtocol.firstError()} in ${JSON.stringify(l.slice(0, 160))}`,
        );
    });
    proc.once("exit", () => {
      for (const done of speaker.waiting.values()) done({ t: "gone", error: `the server ended: ${stderr.trim().split("\n").slice(-3).join(" | ")}` });
      speaker.waiting.clear();
    });
    return { speaker, ready, stderr: () => stderr };
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

  /** A server that says what the protocol does not allow is ended: every run waiting on it gets `gone`. */
  fail(why: string): void {
    for (const done of this.waiting.values()) done({ t: "gone", error: why });
    this.waiting.clear();
    killTree(this.proc);
  }

  /** Sends `msg` and resolves with the reply of type `t` for `id` (or a `gone` message). */
  ask(msg: Record<string, unknown>, t: string, id: string): Promise<Message> {
    if (!followsControlProtocol(msg)) {
      throw new LmrError({
        code: "run/fork-protocol",
        message: `lmr built a fork-server request the protocol does not allow: ${followsControlProtocol.firstError()}`,
        hint: "a bug in lmr: report it with the command that ran",
      });
    }
    const reply = new Promise<Message>((r) => this.waiting.set(`${t}:${id}`, r));
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) {
      this.waiting.delete(`${t}:${id}`);
      return Promise.resolve({ t: "gone", error: "the server is not running" });
    }
    this.proc.stdin!.write(`${JSON.stringify(msg)}\n`);
    return reply;
  }

  async close(): Promise<void> {
    this.proc.stdin!.end();
    await new Promise<void>((r) => {
      const timer = setTimeout(() => r(), 5000);
      this.proc.once("exit", () => {
        clearTimeout(timer);
        r();
      });
      if (this.proc.exitCode !== null) r();
    });
    killTree(this.proc);
  }
}

/** Under docker: the servers' containers, and the user the runs' folders must belong to. */
interface InContainers {
  names: string[];
  target: DockerTarget;
  user: { uid: number; gid: number };
  untrack: () => void;
}

/**
 * A pair of long-lived Python processes, each in a sandbox of its own, for verify's trusted
 * runs (stub, alternatives, mutants, the reference's later runs): the oracles' server
 * (python/lmr_harness/fork_server.py) has imported pytest and what the tests import, and forks
 * one harness child per run; the candidates' server (python/lmr_bridge/server.py --control)
 * has imported what the code under test imports, and forks a worker per connection of a run's
 * oracle. A run costs two forks and the tests, not two interpreter starts and `import torch`
 * twice. As in a plain run, the candidates' sandbox holds the trees and the bridge's sockets,
 * never a grader; the oracles' holds the graders and the sockets, never a tree. Runs of one
 * server share its sandbox (one may see another's folder), which is why only our own code runs
 * here: a submission's candidate is always a fresh process (lmr eval forks only its oracles:
 * oracle-server.ts). The child's records come over its own
 * signed socket, exactly as in a plain run; the verdict is decided by the same code.
 */
export class ForkServer {
  private constructor(
    private readonly oracle: Speaker,
    private readonly candidate: Speaker,
    private readonly folders: Folders,
    private readonly backend: Backend,
    private readonly opts: ForkServerOptions,
    readonly preloaded: string[],
    private readonly containers?: InContainers,
  ) {}

  private next = 0;

  /** Starts the pair, or returns undefined where it cannot run (no interpreter, a failed start): callers use plain runs then. */
  static async start(opts: ForkServerOptions): Promise<ForkServer | undefined> {
    const inImage = (opts.python as { image?: unknown }).image !== undefined;
    const sel = opts.target
      ? { backend: backendOf(opts.target), ...(opts.target.image ? { image: opts.target.image } : {}), why: opts.target.reason }
      : await selectBackend(opts.sandbox === "auto" ? "auto" : opts.sandbox, inImage ? opts.environment : undefined, { quiet: true });
    if ("reason" in sel) return undefined;
    if (sel.backend.name === "docker" && !sel.image) return undefined;
    if (sel.backend.name !== "docker" && (!existsSync(opts.python.path) || inImage)) return undefined;
    const dir = await mkdtemp(join(opts.scratchParent ?? tmpdir(), "lmr-fork-"));
    const folders: Folders = { dir, oracle: join(dir, "o"), candidate: join(dir, "c"), bridge: await makeSocketDir() };
    await Promise.all([folders.oracle, folders.candidate].map((d) => mkdir(d)));
    const server =
      sel.backend.name === "docker"
        ? await ForkServer.startInContainers(opts, sel.backend, sel.image!, folders)
        : await ForkServer.startOnHost(opts, sel.backend, folders);
    if (!server) await Promise.all([dir, folders.bridge].map((d) => rm(d, { recursive: true, force: true })));
    return server;
  }

  private static async startOnHost(opts: ForkServerOptions, backend: Backend, f: Folders): Promise<ForkServer | undefined> {
    const folders = interpreterFolders(opts.python);
    const threads = opts.threads ?? 1;
    const oracleWrap: WrapOptions = {
      readOnly: folders,
      writable: [f.oracle, f.bridge],
      tmpfs: [
        { path: "/tmp", sizeMb: 512 },
        { path: "/dev/shm", sizeMb: 64 },
      ],
      chdir: f.oracle,
      network: false,
    };
    const candidateWrap: WrapOptions = {
      readOnly: folders,
      writable: [f.candidate, f.bridge],
      tmpfs: [
        { path: "/tmp", sizeMb: CANDIDATE_TMP_MB * 2 },
        { path: "/dev/shm", sizeMb: CANDIDATE_SHM_MB },
      ],
      chdir: f.candidate,
      network: opts.network,
    };
    const oracleArgv = backend.wrap([opts.python.path, "-s", "-B", SERVER, ...(await planArgs(f.oracle, "plan.json", opts))], oracleWrap);
    const candidateArgv = backend.wrap(
      [opts.python.path, "-s", "-B", CANDIDATE_SCRIPT, "--control", ...(await planArgs(f.candidate, "plan.json", opts.candidate))],
      candidateWrap,
    );
    const env = (home: string, network: boolean, changes: PreloadPlan["envChanges"]): Record<string, string> =>
      withChanges(buildChildEnv({ pythonPath: opts.python.path, home, tmp: backend.name === "local" ? home : "/tmp", threads, network }), changes);
    const [o, c] = await Promise.all([
      Speaker.connect(oracleArgv, env(backend.name === "local" ? f.oracle : "/tmp", false, opts.envChanges), f.oracle),
      Speaker.connect(candidateArgv, env(backend.name === "local" ? f.candidate : "/tmp", opts.network, opts.candidate?.envChanges), f.candidate),
    ]);
    if (!o.speaker || !c.speaker) {
      if (o.speaker) killTree(o.speaker.proc);
      if (c.speaker) killTree(c.speaker.proc);
      return undefined;
    }
    return new ForkServer(o.speaker, c.speaker, f, backend, opts, [...(o.ready?.preloaded ?? []), ...(c.ready?.preloaded ?? [])]);
  }

  /**
   * The servers in the task's image: two containers (no network unless the task has it for the
   * candidates, read-only root, tmpfs /tmp, an unprivileged user, no capabilities, memory and
   * pids cgroups), whose writable mounts are their runs' folders and the sockets' folder, bound
   * at the same paths, so a run's paths mean the same on the host and in the containers.
   * Labelled like every run's container, so a later run removes them if lmr dies first.
   */
  private static async startInContainers(opts: ForkServerOptions, backend: Backend, target: DockerTarget, f: Folders): Promise<ForkServer | undefined> {
    const user = containerUser();
    for (const d of [f.dir, f.oracle, f.candidate, f.bridge]) {
      if (isRoot()) await chown(d, user.uid, user.gid);
      else await chmod(d, 0o700);
    }
    const base = `lmr-fork-${process.pid}-${randomBytes(5).toString("hex")}`;
    const threads = opts.threads ?? 1;
    const memoryMb = opts.memoryMb ?? 4096;
    const common = {
      image: target.id,
      user,
      // children run side by side (one per run slot), each under its own address-space cap
      memoryMb: memoryMb * 3,
      maxProcs: (opts.maxProcs ?? 256) * 4,
      cpus: cpus().length,
      gpu: target.gpu,
    };
    const oracleArgv = [
      dockerBin(),
      ...dockerRunArgs({
        ...common,
        name: `${base}-o`,
        writable: [f.oracle, f.bridge],
        readOnly: [],
        workdir: f.oracle,
        network: false,
        env: withChanges(containerEnv({ home: "/tmp", tmp: "/tmp" }, threads, false), opts.envChanges),
        cmd: ["timeout", "--signal=KILL", `${CONTAINER_LIFETIME_S}s`, target.python, "-s", "-B", IN_SERVER, ...(await planArgs(f.oracle, "plan.json", opts))],
      }),
    ];
    const candidateArgv = [
      dockerBin(),
      ...dockerRunArgs({
        ...common,
        name: `${base}-c`,
        writable: [f.candidate, f.bridge],
        readOnly: [],
        workdir: f.candidate,
        network: opts.network,
        tmpMb: CANDIDATE_TMP_MB * 2,
        shmMb: CANDIDATE_SHM_MB,
        env: withChanges(containerEnv({ home: "/tmp", tmp: "/tmp" }, threads, opts.network), opts.candidate?.envChanges),
        cmd: [
          "timeout",
          "--signal=KILL",
          `${CONTAINER_LIFETIME_S}s`,
          target.python,
          "-s",
          "-B",
          IN_CANDIDATE,
          "--control",
          ...(await planArgs(f.candidate, "plan.json", opts.candidate)),
        ],
      }),
    ];
    const names = [`${base}-o`, `${base}-c`];
    const untracks = names.map((n) => trackContainer(n));
    const untrack = (): void => untracks.forEach((u) => u());
    const hostEnv = { ...(process.env as Record<string, string>) };
    const [o, c] = await Promise.all([Speaker.connect(oracleArgv, hostEnv, f.oracle), Speaker.connect(candidateArgv, hostEnv, f.candidate)]);
    if (!o.speaker || !c.speaker) {
      if (o.speaker) killTree(o.speaker.proc);
      if (c.speaker) killTree(c.speaker.proc);
      await removeContainers(names);
      untrack();
      return undefined;
    }
    return new ForkServer(o.speaker, c.speaker, f, backend, opts, [...(o.ready?.preloaded ?? []), ...(c.ready?.preloaded ?? [])], {
      names,
      target,
      user,
      untrack,
    });
  }

  /** One run, as `runTests` would do it, in a forked child of each server. */
  async run(req: RunRequest): Promise<RunOutcome> {
    const t0 = performance.now();
    const mount = req.mount ?? "lmr_tests";
    const memoryMb = req.memoryMb ?? 4096;
    const id = String(this.next++);
    const f = this.folders;
    const staged = await prepareScratch(req.tree, req.grader, mount, req.overlay, f.dir, scratchLayout(req));
    // each side's part of the run goes to the folder its server sees
    const oDir = join(f.oracle, id);
    const cDir = join(f.candidate, id);
    const bDir = join(f.bridge, id);
    await Promise.all([mkdir(oDir), mkdir(cDir), mkdir(bDir)]);
    await Promise.all([
      rename(staged.oracleRoot, join(oDir, "root")),
      rename(staged.root, join(cDir, "tree")),
      rename(staged.support, join(cDir, "support")),
      rename(staged.home, join(cDir, "home")),
      rename(staged.tmp, join(cDir, "tmp")),
      rename(staged.oracleHome, join(oDir, "home")),
      rename(staged.oracleTmp, join(oDir, "tmp")),
    ]);
    await removeScratch(staged);
    const oracleRoot = join(oDir, "root");
    const mountDir = join(oracleRoot, mount);
    const tree = join(cDir, "tree");
    const support = join(cDir, "support");
    const socket = join(bDir, CANDIDATE_SOCKET);
    const key = randomBytes(32).toString("hex");
    const sock = await openResultsSocket(join(oDir, "results.sock"));
    const c = this.containers;
    if (c && isRoot()) {
      // the containers' user runs the children: it must own the run's folders and reach the sockets
      for (const d of [oDir, cDir, bDir]) await chownTree(d, c.user.uid, c.user.gid);
      await chown(sock.path, c.user.uid, c.user.gid);
    }
    const reader = new RecordReader(key, () => {});
    const streamDone = new Promise<void>((r) => {
      sock.stream.on("data", (d: Buffer) => reader.feed(d));
      sock.stream.on("end", () => r());
      sock.stream.on("close", () => r());
    });
    const asBytes = memoryMb * 1024 * 1024;
    try {
      const opened = await this.candidate.ask(
        {
          op: "open",
          id,
          socket,
          tree,
          support,
          ...(req.candidateSetup ? { setup: join(support, basename(req.candidateSetup)) } : {}),
          trace: req.traceLines ?? [],
          report_imports: req.reportImports === true,
          warm: req.warmModules ?? [],
          env: { HOME: join(cDir, "home"), TMPDIR: join(cDir, "tmp") },
          as_bytes: asBytes,
          log: join(cDir, "log.txt"),
        },
        "opened",
        id,
      );
      const before = await hashTree(mountDir);
      const argv = harnessArgs({
        req,
        harness: c ? IN_HARNESS : HARNESS,
        ini: c ? IN_INI : HARNESS_INI,
        root: oracleRoot,
        mountDir,
        mount,
        results: ["--results-socket", sock.path],
        bridge: socket,
        asBytes,
      });
      const env = { HOME: join(oDir, "home"), TMPDIR: join(oDir, "tmp") };
      const exit =
        opened.t === "opened" && !opened.error
          ? await this.oracle.ask({ id, argv: argv.slice(3), key, env, log: join(oDir, "log.txt"), timeout_s: req.timeoutTotalS }, "exit", id)
          : { t: "exit", code: null, signal: null, timed_out: false };
      await this.candidate.ask({ op: "close", id }, "closed", id);
      sock.endIfUnused();
      await Promise.race([streamDone, new Promise((r) => setTimeout(r, 2000))]);
      const after = await hashTree(mountDir).catch(() => ({ files: {} as Record<string, string> }));
      const facts: ProcessFacts = {
        exitCode: exit.code ?? null,
        signal: exit.signal ?? null,
        graderModified: changed(before.files, after.files),
        stderrTail: "",
        ...(opened.t !== "opened" || opened.error ? { candidateStartError: `the candidates' server could not open the run: ${opened.error ?? opened.t}` } : {}),
        ...(exit.timed_out ? { wallTimeoutS: req.timeoutTotalS } : {}),
        ...(req.stopAtFirstFailure ? { stopAtFirstFailure: true } : {}),
      };
      if (sock.extraConnections() > 0) reader.state.problems.push("a second connection to the results socket");
      const verdict = decideVerdict(reader.state, facts);
      const oracleLog = await readFile(join(oDir, "log.txt"), "utf8").catch(() => "");
      const candidateLog = await readFile(join(cDir, "log.txt"), "utf8").catch(() => "");
      const log = oracleLog.slice(-48 * 1024) + (candidateLog ? `\n----- the candidate (the code under test) -----\n${candidateLog.slice(-16 * 1024)}` : "");
      return {
        ...verdict,
        exit_code: facts.exitCode,
        duration_s: (performance.now() - t0) / 1000,
        backend: this.backend.name,
        python: { path: c ? c.target.python : this.opts.python.path, version: reader.state.hello?.python ?? this.opts.python.version },
        ...(c ? { image: { tag: c.target.tag, id: c.target.id, digest: c.target.digest } } : {}),
        log,
        ...(reader.state.junit !== undefined ? { junit_xml: reader.state.junit } : {}),
        ...outcomeExtras(reader, req),
        isolation: c
          ? { network: this.opts.network ? "on" : "off", filesystem: "minimal", memory_mb: memoryMb, memory: "rlimit", pids: "cgroup", uid: c.user.uid }
          : {
              ...this.backend.describe({ readOnly: [], writable: [], tmpfs: [], chdir: oDir, network: this.opts.network }),
              memory_mb: memoryMb,
              memory: "rlimit",
              pids: "none",
            },
      };
    } finally {
      await sock.close().catch(() => undefined);
      await Promise.all([oDir, cDir, bDir].map((d) => rm(d, { recursive: true, force: true })));
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.oracle.close(), this.candidate.close()]);
    if (this.containers) {
      // the CLI gone does not always mean the container is: ask the daemon
      await removeContainers(this.containers.names).catch(() => undefined);
      this.containers.untrack();
    }
    await Promise.all([this.folders.dir, this.folders.bridge].map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** Every control message, both ways, against schema/fork-server-message.schema.json. */
const followsControlProtocol = schemaCheck(VALIDATORS.forkServerMessage);

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

function killTree(proc: ChildProcess): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    // gone already
  }
}

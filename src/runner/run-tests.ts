import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Readable } from "node:stream";
import { LmrError } from "../core/errors.js";
import { hashTree } from "../core/hash.js";
import { checkRelativePath, toolkitPath } from "../core/paths.js";
import { selectBackend } from "./backends.js";
import { RecordReader } from "./channel.js";
import { buildChildEnv, createPidsLimit, findPrlimit } from "./limits.js";
import { prepareScratch, type Scratch } from "./scratch.js";
import type { Backend, RunOutcome, RunRequest, WrapOptions } from "./types.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";

const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");
/** Seconds a test may outlive its per-test alarm before the parent kills the run. */
const PER_TEST_GRACE_S = 3;
const KILL_GRACE_MS = 2000;
const LOG_HEAD = 16 * 1024;
const LOG_TAIL = 48 * 1024;

/** Keeps the start and the end of a long log. */
class LogBuffer {
  private head = "";
  private tail = "";
  private dropped = 0;
  add(s: string): void {
    if (this.head.length < LOG_HEAD) {
      const take = s.slice(0, LOG_HEAD - this.head.length);
      this.head += take;
      s = s.slice(take.length);
    }
    this.tail += s;
    if (this.tail.length > LOG_TAIL) {
      this.dropped += this.tail.length - LOG_TAIL;
      this.tail = this.tail.slice(-LOG_TAIL);
    }
  }
  text(): string {
    return this.dropped > 0 ? `${this.head}\n...[${this.dropped} characters dropped]...\n${this.tail}` : this.head + this.tail;
  }
}

function validate(req: RunRequest): void {
  const bad = (pointer: string, message: string): LmrError =>
    new LmrError({ code: "RUN_BAD_REQUEST", message, pointer, kind: "usage" });
  if (!(req.timeoutTotalS > 0)) throw bad("timeoutTotalS", `timeoutTotalS must be > 0, got ${req.timeoutTotalS}`);
  if (req.timeoutPerTestS !== undefined && !(req.timeoutPerTestS > 0)) throw bad("timeoutPerTestS", "timeoutPerTestS must be > 0");
  if (req.memoryMb !== undefined && !(req.memoryMb >= 64)) throw bad("memoryMb", "memoryMb must be at least 64");
  for (const p of req.testPaths ?? []) {
    const why = checkRelativePath(p.split("::")[0] ?? "");
    if (why) throw bad("testPaths", `test path "${p}": ${why}`);
  }
}

/**
 * Folders the interpreter needs that may sit under a path bwrap hides (/tmp):
 * the harness, the prefixes, and the folder above bin/ (a venv's pyvenv.cfg
 * lives there; without it the venv's python silently becomes its base).
 */
function visibleFolders(req: RunRequest): string[] {
  const out = new Set<string>([dirname(HARNESS), ...(req.python.prefixes ?? [])]);
  const exes = [req.python.path];
  try {
    exes.push(realpathSync(req.python.path));
  } catch {
    // reported as a missing interpreter later
  }
  for (const exe of exes) out.add(dirname(dirname(exe)));
  out.delete("/");
  return [...out];
}

function changedFiles(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((k) => before[k] !== after[k]).sort();
}

/**
 * Run the grader's pytest tests against a copy of `tree` and decide the outcome
 * from the harness's authenticated records plus the exit status; nothing the
 * tests print is ever read for the verdict.
 *
 * What each backend leaves open (see also python/lmr_harness/run_pytest.py for
 * what in-process code can still do): `local` is hygiene, not a boundary: the
 * code can use the network, read and write anything the user can (the
 * toolkit, site-packages, other runs), and as root without a pids cgroup a
 * setsid'd child outlives the run. `bwrap` leaves reads of the host
 * filesystem outside /tmp and `hidePaths` possible, and shares the host's
 * CPU and GPU; memory is an address-space cap, not an RSS cap.
 */
export async function runTests(req: RunRequest): Promise<RunOutcome> {
  validate(req);
  const t0 = performance.now();
  const mount = req.mount ?? "lmr_tests";
  const memoryMb = req.memoryMb ?? 4096;
  const network = req.network ?? false;
  const python = { path: req.python.path, version: req.python.version };
  const sel = await selectBackend(req.sandbox ?? "auto");
  const infra = (backend: RunOutcome["backend"], reason: string): RunOutcome => ({
    status: "infra",
    tests: [],
    counts: { passed: 0, failed: 0, errors: 0, skipped: 0 },
    exit_code: null,
    duration_s: (performance.now() - t0) / 1000,
    backend,
    python,
    log: "",
    reason,
  });
  if ("reason" in sel) return infra("bwrap", sel.reason);
  if (!existsSync(req.python.path)) return infra(sel.backend.name, `python interpreter not found: ${req.python.path}`);

  const scratch = await prepareScratch(req.tree, req.grader, mount, req.overlay, req.scratchParent);
  try {
    const before = await hashTree(scratch.mountDir);
    const { facts, reader, log, isolation } = await execute(req, sel.backend, scratch, mount, memoryMb, network);
    const after = await hashTree(scratch.mountDir).catch(() => ({ files: {} as Record<string, string> }));
    facts.graderModified = changedFiles(before.files, after.files);
    const verdict = decideVerdict(reader.state, facts);
    return {
      ...verdict,
      exit_code: facts.exitCode,
      duration_s: (performance.now() - t0) / 1000,
      backend: sel.backend.name,
      python,
      log,
      ...(reader.state.junit !== undefined ? { junit_xml: reader.state.junit } : {}),
      ...(reader.state.imports ? { imports: reader.state.imports } : {}),
      isolation,
      ...(req.keepDir ? { scratch_dir: scratch.dir } : {}),
    };
  } finally {
    if (!req.keepDir) await rm(scratch.dir, { recursive: true, force: true });
  }
}

async function execute(req: RunRequest, backend: Backend, scratch: Scratch, mount: string, memoryMb: number, network: boolean) {
  const runId = `${process.pid}-${randomBytes(6).toString("hex")}`;
  const key = randomBytes(32).toString("hex");
  const maxProcs = req.maxProcs ?? 256;
  const perTest = req.timeoutPerTestS;
  const pids = await createPidsLimit(maxProcs, runId);
  const prlimit = findPrlimit();
  const asBytes = memoryMb * 1024 * 1024;
  const paths = (req.testPaths ?? ["."]).map((p) => (p === "." ? mount : `${mount}/${p}`));
  const pytestArgs = [
    "-c", HARNESS_INI, `--rootdir=${scratch.root}`, `--confcutdir=${scratch.mountDir}`,
    "-p", "no:cacheprovider", "-o", "addopts=", "--color=no", "-rfE", "--tb=short",
    ...(req.pytestArgs ?? []), ...paths,
  ];
  const cmd = [
    ...(prlimit ? [prlimit, `--as=${asBytes}`, `--nproc=${maxProcs}`, "--"] : []),
    req.python.path, "-s", "-B", HARNESS,
    "--results-fd", "3", "--root", scratch.root, "--mount", mount, "--per-test-s", String(perTest ?? 0),
    ...(prlimit ? [] : ["--as-bytes", String(asBytes)]),
    ...(req.allowPlugins ?? []).flatMap((p) => ["--allow-plugin", p]),
    ...(req.reportImports ? ["--report-imports"] : []),
    "--", ...pytestArgs,
  ];
  const wrapOpts: WrapOptions = {
    scratch: scratch.dir,
    readOnly: [scratch.mountDir],
    keepVisible: visibleFolders(req),
    hide: (req.hidePaths ?? [req.tree, req.grader]).map((p) => resolve(p)),
    network,
  };
  const argv = [...pids.prefix, ...backend.wrap(cmd, wrapOpts)];
  const env = buildChildEnv({ pythonPath: req.python.path, home: scratch.home, tmp: scratch.tmp, threads: req.threads ?? 1, network });

  const log = new LogBuffer();
  if (scratch.removed.length > 0) log.add(`lmr: removed from the tree copy: ${scratch.removed.join(", ")}\n`);
  const facts: ProcessFacts = { exitCode: null, signal: null, graderModified: [], stderrTail: "" };
  let stderrTail = "";
  let perTestTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let child: ReturnType<typeof spawn> | undefined;

  const killGroup = (sig: NodeJS.Signals): void => {
    if (child?.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // group already gone
    }
  };
  const stop = (): void => {
    killGroup("SIGTERM");
    killTimer ??= setTimeout(() => killGroup("SIGKILL"), KILL_GRACE_MS);
  };
  const reader = new RecordReader(key, (kind, state) => {
    if (perTest === undefined) return;
    if (kind === "start" && state.running) {
      clearTimeout(perTestTimer);
      const id = state.running;
      perTestTimer = setTimeout(() => {
        facts.perTestKilled = { id, limitS: perTest };
        stop();
      }, (perTest + PER_TEST_GRACE_S) * 1000);
    } else if (kind === "result" || kind === "done") {
      clearTimeout(perTestTimer);
    }
  });

  await new Promise<void>((resolveRun) => {
    const c = spawn(argv[0]!, argv.slice(1), {
      cwd: scratch.root,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
    });
    child = c;
    const wall = setTimeout(() => {
      facts.wallTimeoutS = req.timeoutTotalS;
      stop();
    }, req.timeoutTotalS * 1000);
    const results = c.stdio[3] as Readable;
    const streams = [c.stdout!, c.stderr!, results];
    let open = streams.length;
    let exited = false;
    const finish = (): void => {
      if (!exited || open > 0) return;
      clearTimeout(wall);
      clearTimeout(perTestTimer);
      clearTimeout(killTimer);
      resolveRun();
    };
    for (const s of streams) {
      s.on("error", () => {});
      s.on("close", () => {
        open--;
        finish();
      });
    }
    c.stdout!.on("data", (d: Buffer) => log.add(d.toString()));
    c.stderr!.on("data", (d: Buffer) => {
      const text = d.toString();
      log.add(text);
      stderrTail = (stderrTail + text).slice(-4000);
    });
    results.on("data", (d: Buffer) => reader.feed(d));
    c.stdin!.on("error", () => {});
    c.stdin!.end(`${key}\n`);
    c.on("error", (e) => {
      facts.spawnError = `cannot start ${argv[0]}: ${e.message}`;
      exited = true;
      open = 0;
      finish();
    });
    c.on("exit", (code, signal) => {
      facts.exitCode = code;
      facts.signal = signal;
      exited = true;
      // Whatever the tests left behind (daemons holding the pipes) goes now.
      killGroup("SIGKILL");
      setTimeout(() => {
        for (const s of streams) s.destroy();
      }, KILL_GRACE_MS).unref();
      finish();
    });
  });
  await pids.release();
  reader.end();
  facts.stderrTail = stderrTail;
  const isolation = { ...backend.describe(wrapOpts), memory_mb: memoryMb, pids: pids.kind };
  return { facts, reader, log: log.text(), isolation };
}

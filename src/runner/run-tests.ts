import { randomBytes } from "node:crypto";
import { existsSync, realpathSync } from "node:fs";
import { rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { hashTree } from "../core/hash.js";
import { checkRelativePath, toolkitPath } from "../core/paths.js";
import { selectBackend } from "./backends.js";
import { backendOf } from "./run-target.js";
import { executeInDocker, missingModuleVerdict } from "./docker/run.js";
import { harnessArgs, nodeCandidateArgs, nodeHarnessArgs } from "./harness-args.js";
import { CANDIDATE_SCRIPT, CANDIDATE_SHM_MB, CANDIDATE_SOCKET, CANDIDATE_TMP_MB, candidateArgs, spawnCandidate } from "./candidate.js";
import { buildChildEnv, createRunLimits, findPrlimit, type RunLimits } from "./limits.js";
import { deferCleanup } from "./deferred-cleanup.js";
import { prepareScratch, removeScratch, type Scratch, type ScratchLayout } from "./scratch.js";
import { outcomeExtras } from "./outcome-extras.js";
import { LogBuffer, killGroup, superviseRun } from "./supervise.js";
import type { Backend, Isolation, RunOutcome, RunRequest, WrapOptions } from "./types.js";
import { decideVerdict, type ProcessFacts } from "./verdict.js";
import type { RecordReader } from "./channel.js";
import type { Execution, OracleHost, OracleRunResult } from "./execution.js";

const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");
const NODE_HARNESS = toolkitPath("node", "lmr-harness");

function validate(req: RunRequest): void {
  const bad = (pointer: string, message: string): LmrError => new LmrError({ code: "run/bad-request", message, pointer });
  if (!(req.timeoutTotalS > 0)) throw bad("timeoutTotalS", `timeoutTotalS must be > 0, got ${req.timeoutTotalS}`);
  if (req.timeoutPerTestS !== undefined && !(req.timeoutPerTestS > 0)) throw bad("timeoutPerTestS", "timeoutPerTestS must be > 0");
  if (req.memoryMb !== undefined && !(req.memoryMb >= 64)) throw bad("memoryMb", "memoryMb must be at least 64");
  if (req.cpus !== undefined && !(req.cpus > 0)) throw bad("cpus", "cpus must be > 0");
  for (const p of req.testPaths ?? []) {
    const why = checkRelativePath(p.split("::")[0] ?? "");
    if (why) throw bad("testPaths", `test path "${p}": ${why}`);
  }
}

/** The scratch layout a request asks for: the candidate's files, or the grader in the tree for node:test. */
export function scratchLayout(req: RunRequest): ScratchLayout {
  const files = [...(req.candidateFiles ?? []), ...(req.candidateSetup ? [req.candidateSetup] : [])];
  return { candidateFiles: [...new Set(files)] };
}

/** The toolkit's python folder: the oracle's harness, lmr_bridge and the record codec. */
const TOOLKIT_PYTHON = toolkitPath("python");

/**
 * What of the host a run's processes need besides the system folders: the toolkit's python
 * folder, the interpreter's prefixes and the folder above its bin/ (a venv's pyvenv.cfg lives
 * there; without it the venv's python silently becomes its base). For node:test, the Node
 * harness and the toolkit's TypeScript (ts-morph) its loader hooks transpile with.
 */
export function interpreterFolders(python: { path: string; prefixes?: string[] }, testRunner?: RunRequest["testRunner"]): string[] {
  const out = new Set<string>([TOOLKIT_PYTHON, ...(python.prefixes ?? [])]);
  if (testRunner === "node-test") {
    out.add(NODE_HARNESS);
    try {
      // the real folder: bwrap cannot bind over a symlink
      out.add(realpathSync(toolkitPath("node_modules")));
    } catch {
      // no node_modules next to the toolkit: resolved from further up
    }
  }
  const exes = [python.path];
  try {
    exes.push(realpathSync(python.path));
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
 * CPU and GPU; memory is an address-space cap, not an RSS cap. `docker` sees
 * only its image and the scratch copy, as a non-root user with no
 * capabilities, under memory, pids and CPU cgroups; it shares the host's
 * kernel (a kernel exploit is out of scope) and, with `gpu`, its GPUs.
 */
export async function runTests(req: RunRequest, via: { oracles?: OracleHost } = {}): Promise<RunOutcome> {
  validate(req);
  const t0 = performance.now();
  const mount = req.mount ?? "lmr_tests";
  const memoryMb = req.memoryMb ?? 4096;
  const network = req.network ?? false;
  const node = req.testRunner === "node-test";
  // a node:test task's image is its environment's with Node added (EnvSpec.node)
  // a caller that resolved the task's target once (verify, eval) runs there; others choose now
  const sel = req.target
    ? { backend: backendOf(req.target), ...(req.target.image ? { image: req.target.image } : {}), why: req.target.reason }
    : await selectBackend(req.sandbox ?? "auto", req.environment, { runner: req.testRunner ?? "pytest" });
  const docker = "backend" in sel && sel.backend.name === "docker" ? sel.image : undefined;
  let python = docker ? { path: docker.python, version: docker.pythonVersion } : { path: req.python.path, version: req.python.version };
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
  if ("reason" in sel) return infra(sel.wanted, sel.reason);
  if (!docker && !existsSync(req.python.path)) return infra(sel.backend.name, `${node ? "node" : "python interpreter"} not found: ${req.python.path}`);

  const scratch = await prepareScratch(req.tree, req.grader, mount, req.overlay, req.scratchParent, scratchLayout(req));
  try {
    // bwrap and docker mount the grader read-only (and the candidate never sees it): only a
    // local run can change it, so only a local run pays for hashing it before and after (a run
    // whose oracle is forked hashes it where its server sees it: execute)
    const oracles = node ? undefined : via.oracles;
    const watchGrader = !docker && sel.backend.name === "local" && !oracles;
    const before = watchGrader ? await hashTree(scratch.mountDir) : undefined;
    const run = docker
      ? await executeInDocker(req, docker, scratch, mount, memoryMb, network)
      : await execute(req, sel.backend, scratch, mount, memoryMb, network, oracles);
    const { facts, reader, log, isolation } = run;
    if (before) {
      const after = await hashTree(scratch.mountDir).catch(() => ({ files: {} as Record<string, string> }));
      facts.graderModified = changedFiles(before.files, after.files);
    }
    let verdict = decideVerdict(reader.state, { ...facts, ...(req.stopAtFirstFailure ? { stopAtFirstFailure: true } : {}) });
    if (docker) {
      // The version the image really has, as the harness saw it.
      if (reader.state.hello?.python) python = { path: docker.python, version: reader.state.hello.python };
      // Python modules only: a node-test image installs no npm packages, so no manifest field would fix one
      if (!node) verdict = missingModuleVerdict(verdict, reader.state, scratch.root, docker, req.missingModule ?? "infra");
    }
    return {
      ...verdict,
      exit_code: facts.exitCode,
      duration_s: (performance.now() - t0) / 1000,
      backend: sel.backend.name,
      python,
      log,
      ...(reader.state.junit !== undefined ? { junit_xml: reader.state.junit } : {}),
      ...outcomeExtras(reader, req),
      isolation,
      ...(docker ? { image: { tag: docker.tag, id: docker.id, digest: docker.digest } } : {}),
      ...(req.keepDir ? { scratch_dir: scratch.dir } : {}),
    };
  } finally {
    if (req.keepDir) await rm(scratch.bridge, { recursive: true, force: true });
    else if (req.deferCleanup) deferCleanup(removeScratch(scratch));
    else await removeScratch(scratch);
  }
}

const MIB = 1024 * 1024;
/** The log's first line where the tests' process was forked from the task's oracles' server (lmr eval). */
export const FORKED_NOTE = "lmr: the tests ran in a child forked from this task's oracles' server; the code under test ran in a fresh candidate process";
/** tmpfs sizes (MiB) inside a bwrap sandbox: the tests' /tmp and /dev/shm (the candidate's are in candidate.ts). */
const ORACLE_TMP_MB = 256;
const ORACLE_SHM_MB = 64;

/**
 * The host backends (bwrap, local): two process trees. The candidate (python/lmr_bridge)
 * imports the code under test in a sandbox that holds the tree, the grader's candidate files
 * and the bridge's socket folder; the oracle runs pytest and the tests in a sandbox that holds
 * the grader and the socket folder, never the tree. Each has its own pids and memory cgroups
 * and address-space cap; under bwrap the candidate's tree is a size-capped tmpfs (its disk
 * quota) filled from the prepared copy before any of its code runs.
 */
async function execute(
  req: RunRequest,
  backend: Backend,
  scratch: Scratch,
  mount: string,
  memoryMb: number,
  network: boolean,
  oracles?: OracleHost,
): Promise<Execution> {
  const node = req.testRunner === "node-test";
  const runId = `${process.pid}-${randomBytes(6).toString("hex")}`;
  const key = randomBytes(32).toString("hex");
  const maxProcs = req.maxProcs ?? 256;
  const sandboxed = backend.name !== "local";
  // the tests forked from the task's oracles' server, where the caller keeps one: the candidate is fresh either way
  const slot = oracles ? await oracles.open(scratch, mount) : undefined;
  // where the oracle's side is: a slot moved it into its server's folder (a fresh oracle runs there too if the server is not up)
  const o = slot?.paths ?? scratch;
  const graderBefore = slot ? await hashTree(o.mountDir) : undefined;
  const cLimits = await createRunLimits(maxProcs, memoryMb, `${runId}-c`);
  let oLimits: RunLimits | undefined;
  const prlimit = findPrlimit();
  const asBytes = memoryMb * MIB;
  const cap = prlimit ? [prlimit, `--as=${asBytes}`, `--nproc=${maxProcs}`, "--"] : [];
  const folders = interpreterFolders(req.python, req.testRunner);
  const bridge = slot?.socketDir ?? scratch.bridge;
  const socket = join(bridge, CANDIDATE_SOCKET);
  const diskMb = Math.ceil(scratch.treeBytes / MIB) + (req.diskMb ?? 512);
  const treeSource = join(scratch.dir, "tree-source");
  const threads = req.threads ?? 1;
  const setup = req.candidateSetup ? join(scratch.support, basename(req.candidateSetup)) : undefined;

  const candidateCmd = [
    ...cap,
    req.python.path,
    ...(node
      ? nodeCandidateArgs({
          dir: NODE_HARNESS,
          socket,
          tree: scratch.root,
          ...(sandboxed ? { copyFrom: treeSource } : {}),
          support: scratch.support,
          ...(setup ? { setup } : {}),
          ...(req.reportImports ? { reportImports: true } : {}),
        })
      : candidateArgs({
          script: CANDIDATE_SCRIPT,
          socket,
          tree: scratch.root,
          ...(sandboxed ? { copyFrom: treeSource } : {}),
          support: scratch.support,
          ...(setup ? { setup } : {}),
          ...(req.traceLines ? { traceLines: req.traceLines } : {}),
          ...(req.reportImports ? { reportImports: true } : {}),
          ...(req.warmModules ? { warm: req.warmModules } : {}),
        })),
  ];
  const candidateWrap: WrapOptions = {
    readOnly: [...folders, scratch.support],
    readOnlyAt: [{ src: scratch.root, dest: treeSource }],
    writable: [bridge],
    tmpfs: [
      { path: "/tmp", sizeMb: req.tmpMb ?? CANDIDATE_TMP_MB },
      { path: "/dev/shm", sizeMb: CANDIDATE_SHM_MB },
      { path: scratch.root, sizeMb: diskMb },
    ],
    chdir: scratch.root,
    network,
  };
  const candidateEnv = buildChildEnv({
    pythonPath: req.python.path,
    home: sandboxed ? "/tmp" : scratch.home,
    tmp: sandboxed ? "/tmp" : scratch.tmp,
    threads,
    network,
  });
  const candidate = spawnCandidate([...cLimits.prefix, ...backend.wrap(candidateCmd, candidateWrap)], candidateEnv, sandboxed ? scratch.dir : scratch.root);

  const results = ["--results-fd", "3"];
  const oracleCmd = [
    ...cap,
    req.python.path,
    ...(node
      ? nodeHarnessArgs({ req, dir: NODE_HARNESS, root: o.oracleRoot, mount, results, bridge: socket })
      : harnessArgs({
          req,
          harness: HARNESS,
          ini: HARNESS_INI,
          root: o.oracleRoot,
          mountDir: o.mountDir,
          mount,
          results,
          bridge: socket,
          ...(prlimit ? {} : { asBytes }),
        })),
  ];
  const oracleWrap: WrapOptions = {
    readOnly: [...folders, o.oracleRoot],
    writable: [bridge],
    tmpfs: [
      { path: "/tmp", sizeMb: ORACLE_TMP_MB },
      { path: "/dev/shm", sizeMb: ORACLE_SHM_MB },
    ],
    chdir: o.oracleRoot,
    network: false,
  };
  const oracleEnv = buildChildEnv({
    pythonPath: req.python.path,
    home: sandboxed ? "/tmp" : o.oracleHome,
    tmp: sandboxed ? "/tmp" : o.oracleTmp,
    threads,
    network: false,
  });
  const log = new LogBuffer();
  if (scratch.removed.length > 0) log.add(`lmr: removed from the tree copy: ${scratch.removed.join(", ")}\n`);
  let facts: ProcessFacts;
  let reader: RecordReader;
  let forked: OracleRunResult | undefined;
  try {
    forked = slot ? await slot.run({ req, socket, memoryMb }) : undefined;
    if (forked) ({ facts, reader } = forked);
    else {
      oLimits = await createRunLimits(maxProcs, memoryMb, `${runId}-o`);
      ({ facts, reader } = await superviseRun({
        argv: [...oLimits.prefix, ...backend.wrap(oracleCmd, oracleWrap)],
        env: oracleEnv,
        cwd: o.oracleRoot,
        key,
        timeoutTotalS: req.timeoutTotalS,
        timeoutPerTestS: req.timeoutPerTestS,
        results: "fd3",
        // Whatever the tests left behind (daemons holding the pipes) goes now.
        afterExit: (pid) => killGroup(pid, "SIGKILL"),
        log,
      }));
    }
    if (graderBefore) {
      const after = await hashTree(o.mountDir).catch(() => ({ files: {} as Record<string, string> }));
      facts.graderModified = changedFiles(graderBefore.files, after.files);
    }
  } finally {
    // the tests have ended: their cgroups go while the candidate is brought down
    const oracleReleased = oLimits?.release();
    await candidate.stop();
    const released = Promise.all([oracleReleased, cLimits.release(), slot?.close()]);
    if (req.deferCleanup) deferCleanup(released);
    else await released;
  }
  const startError = candidate.startError();
  if (startError) facts.candidateStartError = startError;
  const candidateLog = candidate.log.text();
  if (forked) log.add(`${FORKED_NOTE}\n${forked.log}`);
  const text = log.text() + (candidateLog ? `\n----- the candidate (the code under test) -----\n${candidateLog}` : "");
  const isolation: Isolation = {
    ...backend.describe(oracleWrap),
    // the code under test runs in the candidate: what it can reach is what counts
    network: sandboxed && !network ? "off" : "on",
    memory_mb: memoryMb,
    memory: cLimits.memory,
    ...(sandboxed ? { disk_mb: diskMb } : {}),
    pids: cLimits.pids,
  };
  return { facts, reader, log: text, isolation };
}

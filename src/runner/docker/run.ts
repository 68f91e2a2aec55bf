import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, lchown, readdir, rm } from "node:fs/promises";
import { constants as osConstants } from "node:os";
import { basename, join } from "node:path";
import { dockerBin, removeContainers } from "../../env/docker-cli.js";
import { IMAGE_NODE_HARNESS, IMAGE_TOOLKIT_PYTHON, IMAGE_UID, describeSpec } from "../../env/spec.js";
import type { ChannelState } from "../channel.js";
import type { DockerTarget } from "./image.js";
import { OWNER_LABEL, ownerLabel, trackContainer } from "./sweep.js";
import { CANDIDATE_SHM_MB, CANDIDATE_SOCKET, CANDIDATE_TMP_MB, candidateArgs, spawnCandidate, type CandidateProcess } from "../candidate.js";
import { harnessArgs, nodeCandidateArgs, nodeHarnessArgs } from "../harness-args.js";
import { buildChildEnv } from "../limits.js";
import { openResultsSocket } from "../results-socket.js";
import type { Execution } from "../execution.js";
import { makeSocketDir, type Scratch } from "../scratch.js";
import { LogBuffer, killGroup, superviseRun } from "../supervise.js";
import type { RunRequest } from "../types.js";
import type { Verdict } from "../verdict.js";

const IN_CHAN = "/lmr/chan";
const IN_SOCKET = `${IN_CHAN}/results.sock`;
const IN_HARNESS = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/run_pytest.py`;
const IN_INI = `${IMAGE_TOOLKIT_PYTHON}/lmr_harness/pytest.ini`;
/** The container kills itself this long after the run's wall limit, should nobody be left to do it. */
const SELF_DESTRUCT_GRACE_S = 60;
const TMPFS_MB = 256;
/** Creating and starting a container takes ~0.25 s here, but seconds on a loaded machine; beyond this it is broken. */
const CONTAINER_START_TIMEOUT_S = 120;

export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** The uid:gid tests run as: the image's unprivileged user when lmr is root, else the caller's own ids. */
export function containerUser(): { uid: number; gid: number } {
  if (isRoot() || !process.getuid || !process.getgid) return { uid: IMAGE_UID, gid: IMAGE_UID };
  return { uid: process.getuid(), gid: process.getgid() };
}

/** Give the scratch copy to the container's user (root only: everyone else runs as themselves). */
export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await chown(dir, uid, gid);
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await chownTree(p, uid, gid);
    else await lchown(p, uid, gid);
  }
}

export interface DockerRunArgs {
  name: string;
  image: string;
  /** Bound at the same path, writable: the scratch copy. */
  writable: string[];
  /** Bound at the same path, read-only: the grader copy inside it, the toolkit's python/ for lmr record. */
  readOnly: string[];
  /** Bound read-only at another path: [source, target]. */
  readOnlyAt?: [string, string][];
  /** Extra size-capped tmpfs mounts (MiB), writable by everyone: a candidate's tree. */
  tmpfs?: { path: string; sizeMb: number }[];
  /** /tmp's size (MiB), default 256. */
  tmpMb?: number;
  /** /dev/shm's size (MiB), docker's default 64. */
  shmMb?: number;
  /** The results socket's folder, bound at /lmr/chan. */
  chanDir?: string;
  workdir: string;
  env: Record<string, string>;
  user: { uid: number; gid: number };
  network: boolean;
  memoryMb: number;
  maxProcs: number;
  cpus: number;
  gpu: boolean;
  cmd: string[];
}

/**
 * `docker run` for one test run: no network, a read-only root with a private
 * tmpfs /tmp, the scratch folder as the only writable mount (the grader in it
 * bound read-only again), the results socket's folder, a non-root user with no
 * capabilities, and memory, pids and CPU cgroups. `--rm` removes it when it
 * exits; the owner label lets a later run remove it if lmr dies first.
 */
export function dockerRunArgs(a: DockerRunArgs): string[] {
  const bind = (src: string, dst: string, ro = false): string[] => ["--mount", `type=bind,source=${src},target=${dst}${ro ? ",readonly" : ""}`];
  return [
    // --log-driver none: output comes over the attached pipes; no json log written to disk per run.
    "run",
    "--rm",
    "--interactive",
    "--log-driver",
    "none",
    "--name",
    a.name,
    "--label",
    `${OWNER_LABEL}=${ownerLabel()}`,
    "--network",
    a.network ? "bridge" : "none",
    "--read-only",
    "--tmpfs",
    `/tmp:rw,exec,nosuid,nodev,size=${a.tmpMb ?? TMPFS_MB}m`,
    ...(a.shmMb ? ["--shm-size", `${a.shmMb}m`] : []),
    ...(a.tmpfs ?? []).flatMap((t) => [
      "--mount",
      `type=tmpfs,destination=${t.path},tmpfs-size=${Math.max(1, Math.floor(t.sizeMb)) * 1024 * 1024},tmpfs-mode=1777`,
    ]),
    ...a.writable.flatMap((w) => bind(w, w)),
    ...a.readOnly.flatMap((r) => bind(r, r, true)),
    ...(a.readOnlyAt ?? []).flatMap(([src, dst]) => bind(src, dst, true)),
    ...(a.chanDir ? bind(a.chanDir, IN_CHAN) : []),
    "--user",
    `${a.user.uid}:${a.user.gid}`,
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--memory",
    `${a.memoryMb}m`,
    "--memory-swap",
    `${a.memoryMb}m`,
    "--pids-limit",
    String(a.maxProcs),
    "--cpus",
    String(a.cpus),
    ...(a.gpu ? ["--gpus", "all"] : []),
    "--workdir",
    a.workdir,
    ...Object.entries(a.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    a.image,
    ...a.cmd,
  ];
}

/** The test process's environment inside the container: the host's variables never leak in. */
export function containerEnv(scratch: Pick<Scratch, "home" | "tmp">, threads: number, network: boolean): Record<string, string> {
  const env = buildChildEnv({ pythonPath: "/opt/lmr/venv/bin/python", home: scratch.home, tmp: scratch.tmp, threads, network });
  env.PATH = "/opt/lmr/venv/bin:/usr/local/bin:/usr/bin:/bin";
  delete env.LD_LIBRARY_PATH;
  return env;
}

const IN_CANDIDATE = `${IMAGE_TOOLKIT_PYTHON}/lmr_bridge/candidate.py`;
const MIB = 1024 * 1024;

/**
 * Runs a test run in the task's environment image. A pytest run is two containers from the
 * same image, as on the host: the candidate (lmr_bridge's server, or the Node harness's
 * candidate.mjs for node:test: the tree, in a size-capped tmpfs filled from a read-only copy,
 * the grader's candidate files and the bridge's socket folder) and the oracle (the harness
 * and the tests: the grader read-only, the socket folder, the results socket). Neither sees
 * anything else of the host. The same signed records as on the host, over a unix socket,
 * and the same limits.
 */
export async function executeInDocker(
  req: RunRequest,
  target: DockerTarget,
  scratch: Scratch,
  mount: string,
  memoryMb: number,
  network: boolean,
): Promise<Execution> {
  const name = `lmr-run-${process.pid}-${randomBytes(5).toString("hex")}`;
  const key = randomBytes(32).toString("hex");
  const user = containerUser();
  const maxProcs = req.maxProcs ?? 256;
  const threads = req.threads ?? 1;
  const cpus = req.cpus ?? threads;
  const node = req.testRunner === "node-test";
  const chanDir = await makeSocketDir();
  const log = new LogBuffer();
  if (scratch.removed.length > 0) log.add(`lmr: removed from the tree copy: ${scratch.removed.join(", ")}\n`);
  const chan = await openResultsSocket(join(chanDir, "results.sock"));
  let stopped = false;
  const untrack = trackContainer(name);
  const candidateName = `${name}-c`;
  const untrackCandidate = trackContainer(candidateName);
  let candidate: CandidateProcess | undefined;
  const diskMb = Math.ceil(scratch.treeBytes / MIB) + (req.diskMb ?? 512);
  const socket = join(scratch.bridge, CANDIDATE_SOCKET);
  const selfDestruct = `${Math.ceil(req.timeoutTotalS) + CONTAINER_START_TIMEOUT_S + SELF_DESTRUCT_GRACE_S}s`;
  try {
    if (isRoot()) {
      await chownTree(scratch.dir, user.uid, user.gid);
      await chown(scratch.bridge, user.uid, user.gid);
      await chown(chanDir, user.uid, user.gid);
      await chown(chan.path, user.uid, user.gid);
    } else await chmod(chan.path, 0o600);
    const asBytes = memoryMb * MIB;
    {
      const treeSource = join(scratch.dir, "tree-source");
      const setup = req.candidateSetup ? join(scratch.support, basename(req.candidateSetup)) : undefined;
      const cmd = [
        "timeout",
        "--signal=KILL",
        selfDestruct,
        "prlimit",
        `--as=${asBytes}`,
        "--",
        target.python,
        ...(node
          ? nodeCandidateArgs({
              dir: IMAGE_NODE_HARNESS,
              socket,
              tree: scratch.root,
              copyFrom: treeSource,
              support: scratch.support,
              ...(setup ? { setup } : {}),
              ...(req.reportImports ? { reportImports: true } : {}),
            })
          : candidateArgs({
              script: IN_CANDIDATE,
              socket,
              tree: scratch.root,
              copyFrom: treeSource,
              support: scratch.support,
              ...(setup ? { setup } : {}),
              ...(req.traceLines ? { traceLines: req.traceLines } : {}),
              ...(req.reportImports ? { reportImports: true } : {}),
              ...(req.warmModules ? { warm: req.warmModules } : {}),
            })),
      ];
      const argv = [
        dockerBin(),
        ...dockerRunArgs({
          name: candidateName,
          image: target.id,
          writable: [scratch.bridge],
          readOnly: [scratch.support],
          readOnlyAt: [[scratch.root, treeSource]],
          tmpfs: [{ path: scratch.root, sizeMb: diskMb }],
          tmpMb: req.tmpMb ?? CANDIDATE_TMP_MB,
          shmMb: CANDIDATE_SHM_MB,
          workdir: "/tmp",
          env: containerEnv({ home: "/tmp", tmp: "/tmp" }, threads, network),
          user,
          network,
          memoryMb,
          maxProcs,
          cpus,
          gpu: target.gpu,
          cmd,
        }).filter((a) => a !== "--interactive"),
      ];
      candidate = spawnCandidate(argv, { ...(process.env as Record<string, string>) }, scratch.dir, () => {
        spawn(dockerBin(), ["kill", "--signal", "KILL", candidateName], { stdio: "ignore" }).on("error", () => {});
      });
    }
    const cmd = [
      "timeout",
      "--signal=KILL",
      selfDestruct,
      "prlimit",
      `--as=${asBytes}`,
      "--",
      target.python,
      ...(node
        ? nodeHarnessArgs({ req, dir: IMAGE_NODE_HARNESS, root: scratch.oracleRoot, mount, results: ["--results-socket", IN_SOCKET], bridge: socket })
        : harnessArgs({
            req,
            harness: IN_HARNESS,
            ini: IN_INI,
            root: scratch.oracleRoot,
            mountDir: scratch.mountDir,
            mount,
            results: ["--results-socket", IN_SOCKET],
            bridge: socket,
          })),
    ];
    const argv = [
      dockerBin(),
      ...dockerRunArgs({
        name,
        image: target.id,
        writable: [scratch.bridge],
        readOnly: [scratch.oracleRoot],
        chanDir,
        workdir: scratch.oracleRoot,
        env: containerEnv({ home: "/tmp", tmp: "/tmp" }, threads, false),
        user,
        network: false,
        memoryMb,
        maxProcs,
        cpus,
        gpu: target.gpu,
        cmd,
      }),
    ];
    const { facts, reader } = await superviseRun({
      argv,
      env: { ...(process.env as Record<string, string>) },
      cwd: scratch.dir,
      key,
      timeoutTotalS: req.timeoutTotalS,
      timeoutPerTestS: req.timeoutPerTestS,
      results: chan.stream,
      wallFrom: "hello",
      startTimeoutS: CONTAINER_START_TIMEOUT_S,
      stop: (pid, hard) => {
        stopped = true;
        // Signalling the CLI does not stop a container (PID 1 ignores SIGTERM): ask the daemon.
        if (!hard) spawn(dockerBin(), ["kill", "--signal", "KILL", name], { stdio: "ignore" }).on("error", () => {});
        else killGroup(pid, "SIGKILL");
      },
      afterExit: () => chan.endIfUnused(),
      log,
    });
    readDockerExit(facts);
    if (chan.extraConnections() > 0) reader.state.problems.push(`${chan.extraConnections()} more connection(s) to the results socket than the harness's`);
    stopped ||= facts.exitCode === null || (facts.exitCode ?? 0) >= 125;
    let text = log.text();
    if (candidate) {
      await candidate.stop();
      const startError = candidate.startError();
      if (startError) facts.candidateStartError = startError;
      const candidateLog = candidate.log.text();
      if (candidateLog) text += `\n----- the candidate (the code under test) -----\n${candidateLog}`;
    }
    return {
      facts,
      reader,
      log: text,
      isolation: {
        network: network ? "on" : "off",
        filesystem: "minimal",
        memory_mb: memoryMb,
        memory: "cgroup",
        disk_mb: diskMb,
        pids: "cgroup",
        cpus,
        uid: user.uid,
      },
    };
  } finally {
    await candidate?.stop();
    await chan.close();
    // --rm removed a container that exited by itself; one we stopped or that failed to start may linger.
    // A candidate is always killed, and removed here, so that none of its processes outlive the
    // run (`docker kill` returns before they are gone; --rm alone removes it later)
    await removeContainers(stopped ? [name, candidateName] : [candidateName]);
    untrack();
    untrackCandidate();
    await rm(chanDir, { recursive: true, force: true });
  }
}

/**
 * `docker run` exits with the container's status, 125 when Docker itself
 * failed, and 128+n when the container's process died of signal n.
 */
function readDockerExit(facts: Execution["facts"]): void {
  const code = facts.exitCode;
  if (code === 125) {
    const tail = facts.stderrTail.trim().split("\n").slice(-3).join(" ");
    facts.spawnError = `docker could not start the container: ${tail || "exit 125"}`;
  } else if (code !== null && code > 128 && code < 128 + 65) {
    const sig = Object.entries(osConstants.signals).find(([, n]) => n === code - 128)?.[0];
    if (sig) {
      facts.signal = sig;
      facts.exitCode = null;
      if (sig === "SIGKILL" && facts.wallTimeoutS === undefined && !facts.perTestKilled) {
        facts.stderrTail += "\nlmr: the container was killed (SIGKILL): most likely it ran out of memory (--memory)";
      }
    }
  }
}

const NO_MODULE = /No module named '([^']+)'/g;

/**
 * Top-level modules the tests could not import that the tree does not
 * provide either: in a container those are packages the image lacks.
 */
export function findMissingModules(state: ChannelState, root: string): string[] {
  const texts = [...state.collectErrors.map((e) => e.message), ...state.results.filter((r) => r.status !== "passed").map((r) => r.message ?? "")];
  const names = new Set<string>();
  for (const t of texts) for (const m of t.matchAll(NO_MODULE)) names.add(m[1]!.split(".")[0]!);
  for (const i of state.imports ?? []) if (i.origin === "missing") names.add(i.module.split(".")[0]!);
  return [...names].filter((n) => !existsSync(join(root, `${n}.py`)) && !existsSync(join(root, n))).sort();
}

/** Names the missing modules and the manifest fields that fix them; `infra` unless the caller grades untrusted code. */
export function missingModuleVerdict(
  verdict: Verdict,
  state: ChannelState,
  root: string,
  target: DockerTarget,
  mode: "infra" | "error",
): Verdict & { missing_modules?: string[] } {
  if (verdict.status !== "error" && verdict.status !== "failed") return verdict;
  const missing = findMissingModules(state, root);
  if (missing.length === 0) return verdict;
  const list = missing.map((m) => `'${m}'`).join(", ");
  const reason =
    `module${missing.length > 1 ? "s" : ""} ${list} ${missing.length > 1 ? "are" : "is"} not installed in ${target.tag} (${describeSpec(target.spec)}): ` +
    "declare it in the manifest's environment.requirements (pip, pinned), environment.system_packages (Debian, e.g. python3-<name>) " +
    "or environment.stand_ins (a stand-in the grader's conftest.py provides), then `lmr env build`";
  if (mode === "error") return { ...verdict, reason: `${verdict.reason ?? verdict.status}; ${reason}`, missing_modules: missing };
  return { ...verdict, status: "infra", reason, missing_modules: missing };
}

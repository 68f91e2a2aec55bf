import { constants, existsSync, readFileSync } from "node:fs";
import { access, mkdir, readFile, readdir, rmdir, writeFile } from "node:fs/promises";
import { delimiter, dirname, join } from "node:path";
import type { Isolation } from "./types.js";

const CGROUP_V1_PIDS = "/sys/fs/cgroup/pids";

/** A process-count cap for one run, and the command prefix that puts the run under it. */
export interface PidsLimit {
  kind: Isolation["pids"];
  /** Goes in front of the whole command: joins the cgroup before anything else starts. */
  prefix: string[];
  /** Kill everything still in the cgroup (children that escaped the process group) and remove it. */
  release(): Promise<void>;
}

function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/**
 * RLIMIT_NPROC is never enforced for uid 0, so as root a fork bomb is only
 * contained by a pids cgroup. cgroup v1's pids controller is used when it is
 * writable (root on these machines); otherwise non-root runs rely on
 * prlimit --nproc, and root runs without a cgroup report "none".
 */
export async function createPidsLimit(maxProcs: number, runId: string): Promise<PidsLimit> {
  const none: PidsLimit = { kind: isRoot() ? "none" : "rlimit", prefix: [], release: async () => {} };
  try {
    await access(join(CGROUP_V1_PIDS, "cgroup.procs"), constants.W_OK);
  } catch {
    return none;
  }
  const dir = join(CGROUP_V1_PIDS, "lmr", runId);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "pids.max"), String(maxProcs));
  } catch {
    await rmdir(dir).catch(() => {});
    return none;
  }
  const procs = join(dir, "cgroup.procs");
  return {
    kind: "cgroup",
    // The shell writes its own pid into the cgroup and then becomes the real command.
    prefix: ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', procs],
    release: () => emptyAndRemoveCgroup(dir),
  };
}

const CGROUP_V1_MEMORY = "/sys/fs/cgroup/memory";

/** Caps for one sandboxed process tree: processes, and memory that counts tmpfs pages. */
export interface RunLimits {
  pids: Isolation["pids"];
  memory: NonNullable<Isolation["memory"]>;
  /** Goes in front of the whole command: joins the cgroups before anything else starts. */
  prefix: string[];
  /** Kill everything still in the cgroups and remove them. */
  release(): Promise<void>;
}

/**
 * A pids cgroup (as createPidsLimit) and, where cgroup v1's memory controller is writable, a
 * memory cgroup capped at `memoryMb`. A memory cgroup charges the pages a process writes into
 * a tmpfs to that process's cgroup, so one limit covers the heap and /tmp, /dev/shm and a
 * tmpfs tree together; where there is none the caller relies on RLIMIT_AS and tmpfs sizes.
 */
export async function createRunLimits(maxProcs: number, memoryMb: number, runId: string): Promise<RunLimits> {
  const pids = await createPidsLimit(maxProcs, runId);
  const procs = pids.kind === "cgroup" ? [pids.prefix[3]!] : [];
  let memDir: string | undefined;
  try {
    await access(join(CGROUP_V1_MEMORY, "cgroup.procs"), constants.W_OK);
    const dir = join(CGROUP_V1_MEMORY, "lmr", runId);
    await mkdir(dir, { recursive: true });
    try {
      await writeFile(join(dir, "memory.limit_in_bytes"), String(memoryMb * 1024 * 1024));
      // no swap to hide in where the kernel accounts it
      await writeFile(join(dir, "memory.memsw.limit_in_bytes"), String(memoryMb * 1024 * 1024)).catch(() => undefined);
      memDir = dir;
      procs.push(join(dir, "cgroup.procs"));
    } catch {
      await rmdir(dir).catch(() => {});
    }
  } catch {
    // no writable memory controller: RLIMIT_AS and tmpfs sizes only
  }
  return {
    pids: pids.kind,
    memory: memDir ? "cgroup" : "rlimit",
    prefix: procs.length === 0 ? [] : shellPrefix(procs),
    release: async () => {
      await Promise.all([pids.release(), memDir ? emptyAndRemoveCgroup(memDir) : undefined]);
    },
  };
}

/** The shell writes its own pid into each cgroup, then becomes the real command:
 * `sh -c 'echo $$ > "$0" && echo $$ > "$1" && shift 1 && exec "$@"' FILE0 FILE1 CMD…`. */
function shellPrefix(files: string[]): string[] {
  const writes = files.map((_, i) => (i === 0 ? 'echo $$ > "$0"' : `echo $$ > "$${i}"`)).join(" && ");
  const shift = files.length > 1 ? ` && shift ${files.length - 1}` : "";
  return ["/bin/sh", "-c", `${writes}${shift} && exec "$@"`, ...files];
}

/**
 * Kill what is left in the pids cgroups of an evaluator process that died
 * without releasing them (kill -9), and remove those cgroups. `ownerPid` is
 * the dead process: its cgroups are named `<pid>-<random>`.
 */
export async function releaseStalePidsLimits(ownerPid: number): Promise<void> {
  for (const controller of [CGROUP_V1_PIDS, CGROUP_V1_MEMORY]) {
    const root = join(controller, "lmr");
    const names = await readdir(root).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.startsWith(`${ownerPid}-`))) {
      await emptyAndRemoveCgroup(join(root, name));
    }
  }
}

/**
 * SIGKILL every process in a cgroup until it is empty (forks may race), then remove it. The
 * run's processes were killed just before, so the group is usually empty at once or within a
 * millisecond or two: the wait doubles from 1 ms (a fixed 20 ms sleep was a tenth of a short
 * sample's grading time), up to about a second in all.
 */
async function emptyAndRemoveCgroup(dir: string): Promise<void> {
  for (let waitMs = 1, waited = 0; waited < 1000; waited += waitMs, waitMs = Math.min(waitMs * 2, 50)) {
    const pids = (await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => "")).split("\n").filter(Boolean).map(Number);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, waitMs));
  }
  await rmdir(dir).catch(() => {});
}

let prlimitBin: string | null | undefined;

/** prlimit from util-linux, if installed; without it the harness sets RLIMIT_AS itself. */
export function findPrlimit(): string | undefined {
  if (prlimitBin === undefined) {
    const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/bin"].filter((d) => d.startsWith("/"));
    prlimitBin = dirs.map((d) => join(d, "prlimit")).find((p) => existsSync(p)) ?? null;
  }
  return prlimitBin ?? undefined;
}

const THREAD_VARS = [
  "OMP_NUM_THREADS",
  "MKL_NUM_THREADS",
  "OPENBLAS_NUM_THREADS",
  "NUMEXPR_NUM_THREADS",
  "NUMEXPR_MAX_THREADS",
  "VECLIB_MAXIMUM_THREADS",
  "BLIS_NUM_THREADS",
  "RAYON_NUM_THREADS",
];

/**
 * Which vector kernels OpenBLAS, torch's CPU code, oneDNN and numpy's own loops pick depends on
 * the processor, and an AVX-512 kernel sums in another order than an AVX2 one: fixtures recorded
 * on one machine differed from their regeneration on another in the last digits (14 of the
 * dataset's tasks, recorded on AVX2 and regenerated on an AVX-512 machine). Every run lmr starts
 * therefore asks for the AVX2 kernels where the processor has AVX2, so recordings, their
 * regeneration and the tests compute the same numbers on any such x86-64 machine. Elsewhere
 * nothing is pinned.
 */
export function pinnedKernelEnv(): Record<string, string> {
  pinnedKernels ??= kernelPinsFor(readCpuinfo(), process.arch);
  return pinnedKernels;
}

/** The pins for a processor described by /proc/cpuinfo's text: AVX2 kernels where it has AVX2 and FMA. */
export function kernelPinsFor(cpuinfo: string, arch: string): Record<string, string> {
  const flags = /^flags\s*:(.*)$/m.exec(cpuinfo)?.[1]?.trim().split(/\s+/) ?? [];
  if (arch !== "x64" || !flags.includes("avx2") || !flags.includes("fma")) return {};
  return {
    OPENBLAS_CORETYPE: "Haswell",
    ATEN_CPU_CAPABILITY: "avx2",
    ONEDNN_MAX_CPU_ISA: "AVX2",
    DNNL_MAX_CPU_ISA: "AVX2",
    NPY_DISABLE_CPU_FEATURES: NUMPY_AVX512,
  };
}
let pinnedKernels: Record<string, string> | undefined;
// numpy's own AVX-512 loops (exp, log, sin…): the names numpy 1.24 dispatches, which later versions
// dispatch too; a name a numpy does not dispatch would only earn a warning at import.
const NUMPY_AVX512 = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL";

function readCpuinfo(): string {
  try {
    return readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    return "";
  }
}

/** Passed through from the caller's environment; everything else is dropped. */
const PASS_THROUGH = ["LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "TZ"];

/**
 * The test process's whole environment, built from nothing: no PYTHONPATH,
 * PYTEST_ADDOPTS, PYTHONSTARTUP or user site from the caller. The interpreter's
 * folder comes first on PATH so `python` in a subprocess is the same one.
 */
export function buildChildEnv(o: { pythonPath: string; home: string; tmp: string; threads: number; network: boolean }): Record<string, string> {
  const env: Record<string, string> = {
    PATH: [dirname(o.pythonPath), process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"].join(delimiter),
    HOME: o.home,
    TMPDIR: o.tmp,
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONNOUSERSITE: "1",
    PYTHONUNBUFFERED: "1",
    PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1",
    TOKENIZERS_PARALLELISM: "false",
    MPLBACKEND: "Agg",
  };
  for (const v of THREAD_VARS) env[v] = String(o.threads);
  Object.assign(env, pinnedKernelEnv());
  for (const v of PASS_THROUGH) {
    const val = process.env[v];
    if (val !== undefined) env[v] = val;
  }
  if (!o.network) {
    env.HF_HUB_OFFLINE = "1";
    env.TRANSFORMERS_OFFLINE = "1";
    env.HF_DATASETS_OFFLINE = "1";
  }
  return env;
}

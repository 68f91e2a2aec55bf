import { sweepSocketFolders } from "../runner/scratch.js";
import { open, readFile, readdir, readlink, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { LOCK_FILE, SCRATCH_DIR } from "../run-folder/index.js";
import { releaseStalePidsLimits } from "../runner/limits.js";
import { processStart } from "../core/process.js";

interface LockInfo {
  pid: number;
  /** Process start time (clock ticks since boot, /proc/PID/stat field 22): tells a live owner from a reused pid. */
  start: string;
  started_at: string;
  /** The command holding the lock (absent in locks of older lmr: lmr eval). */
  command?: string;
}

export interface RunDirLock {
  /** Absolute RUN_DIR/.scratch, empty when the lock was taken. */
  scratch: string;
  /** What a previous, killed run left and this one cleaned up. */
  recovered: { previousPid?: number; killed: number[]; swept: string[] };
  release(): Promise<void>;
}

async function isAlive(lock: LockInfo): Promise<boolean> {
  try {
    process.kill(lock.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const start = processStart(lock.pid);
  return start === undefined || lock.start === "" || start === lock.start;
}

async function readLock(file: string): Promise<LockInfo | undefined> {
  try {
    const v = JSON.parse(await readFile(file, "utf8")) as Partial<LockInfo>;
    return typeof v.pid === "number"
      ? { pid: v.pid, start: String(v.start ?? ""), started_at: String(v.started_at ?? ""), ...(typeof v.command === "string" ? { command: v.command } : {}) }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Processes a killed run left behind: the runner gives every test process
 * TMPDIR inside the scratch folder and starts it there, and children inherit
 * both, so a process whose environment or cwd points into `scratch` is ours.
 * (A child that both changed its cwd and exec'd with a clean environment is
 * caught only by the pids cgroup sweep, where there is one.)
 */
async function findProcessesUsing(scratch: string): Promise<number[]> {
  const found: number[] = [];
  const entries = await readdir("/proc").catch(() => [] as string[]);
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "");
    let mine = cwd === scratch || cwd.startsWith(`${scratch}/`);
    if (!mine) {
      const env = await readFile(`/proc/${pid}/environ`, "latin1").catch(() => "");
      mine = env.split("\0").some((kv) => kv.startsWith(`TMPDIR=${scratch}/`));
    }
    if (mine) found.push(pid);
  }
  return found;
}

async function killAll(pids: number[]): Promise<number[]> {
  const killed: number[] = [];
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // gone already
    }
  }
  return killed;
}

/** Temp entries an interrupted atomic write leaves: `.NAME.tmp-*` files and folders. */
async function sweepAtomicLeftovers(dir: string, depth: number, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = join(dir, e.name);
    if (/^\..+\.tmp-/.test(e.name)) {
      await rm(p, { recursive: true, force: true });
      out.push(p);
    } else if (e.isDirectory() && depth > 0 && !e.name.startsWith(".")) {
      await sweepAtomicLeftovers(p, depth - 1, out);
    }
  }
}

/**
 * Takes RUN_DIR for this process. A lock held by a live `lmr eval` stops the
 * command; a lock left by a killed one is taken over after its leftovers are
 * cleaned: its test processes are killed (a kill -9 of the evaluator cannot
 * run the runner's cleanup, and without bwrap's --die-with-parent they keep
 * running), its scratch copies and half-written files are removed.
 */
export async function lockRunDir(runDir: string, command = "lmr eval"): Promise<RunDirLock> {
  const root = resolve(runDir);
  const file = join(root, LOCK_FILE);
  const scratch = join(root, SCRATCH_DIR);
  const me: LockInfo = {
    pid: process.pid,
    start: processStart(process.pid) ?? "",
    started_at: new Date().toISOString(),
    ...(command !== "lmr eval" ? { command } : {}),
  };
  const recovered: RunDirLock["recovered"] = { killed: [], swept: [] };
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await open(file, "wx");
      await fh.writeFile(JSON.stringify(me) + "\n");
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 0) throw lockError(file, err);
    }
    const held = await readLock(file);
    if (held && held.pid !== process.pid && (await isAlive(held))) {
      throw new LmrError({
        code: "eval/run-dir-busy",
        file: root,
        message: `another ${held.command ?? "lmr eval"} (pid ${held.pid}, started ${held.started_at}) is ${held.command === undefined ? "grading into" : "writing into"} this run folder`,
        hint: `wait for it to finish, or use another --out; if pid ${held.pid} is not lmr, delete ${file}`,
      });
    }
    if (held) recovered.previousPid = held.pid;
    await rm(file, { force: true });
  }
  recovered.killed = await killAll(await findProcessesUsing(scratch));
  if (recovered.previousPid !== undefined) await releaseStalePidsLimits(recovered.previousPid);
  const leftovers = await readdir(scratch).catch(() => [] as string[]);
  if (leftovers.length > 0) recovered.swept.push(...leftovers.map((n) => join(scratch, n)));
  await rm(scratch, { recursive: true, force: true });
  await sweepSocketFolders();
  // Deep enough for results/<model>/<task>/<sample>/.result.json.tmp-*.
  await sweepAtomicLeftovers(root, 4, recovered.swept);
  return {
    scratch,
    recovered,
    async release() {
      await rm(scratch, { recursive: true, force: true });
      const held = await readLock(file);
      if (held?.pid === process.pid) await rm(file, { force: true });
    },
  };
}

function lockError(file: string, err: unknown): LmrError {
  return new LmrError({
    code: "eval/run-dir-lock",
    file,
    message: `cannot take the run folder's lock: ${(err as Error).message}`,
    hint: "check that the run folder is writable",
    cause: err,
  });
}

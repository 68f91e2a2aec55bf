import { accessSync, constants, rmSync, statfsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onStopSignal } from "../core/stop-signals.js";

const TMPFS_MAGIC = 0x01021994;
const MIN_FREE_BYTES = 2 * 1024 ** 3;

let chosen: string | undefined;

/**
 * Where runs of our own code (verify's reference, stub, alternatives, mutants and
 * fixture generators) get their scratch copies: $LMR_TRUSTED_TMPDIR if set, else
 * /dev/shm where it is a tmpfs with 2 GiB free, else the system's temp folder.
 * Every run copies the whole workspace (3,144 files, 64 MB for dola): on this
 * machine's disk a copy took 1-4.5 s as writeback throttled it, on tmpfs 0.35 s.
 * Submissions graded by `lmr eval` keep their scratch on disk: a test that
 * writes without end should fill a disk, not the machine's memory.
 */
export function trustedScratchRoot(): string {
  if (chosen !== undefined) return chosen;
  const set = process.env.LMR_TRUSTED_TMPDIR;
  if (set) return (chosen = set);
  chosen = tmpdir();
  try {
    const fs = statfsSync("/dev/shm");
    accessSync("/dev/shm", constants.W_OK);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MIN_FREE_BYTES) chosen = "/dev/shm";
  } catch {
    // no /dev/shm (macOS) or not writable: the temp folder
  }
  return chosen;
}

const live = new Set<string>();
let hooked = false;

/**
 * A new folder under `parent` (default trustedScratchRoot()) for a run of our code. On
 * /dev/shm a folder left behind holds memory until the machine restarts, so until `release`
 * it is removed when lmr is stopped by SIGINT, SIGTERM or SIGHUP (core/stop-signals.ts).
 * kill -9 cannot be caught: sweepTrustedScratch removes what a killed lmr left, at the next start.
 */
export async function makeTrustedScratch(prefix: string, parent = trustedScratchRoot()): Promise<{ dir: string; release: () => Promise<void> }> {
  const dir = await mkdtemp(join(parent, `${prefix}${process.pid}-`));
  live.add(dir);
  if (!hooked) {
    hooked = true;
    onStopSignal(() => {
      for (const d of live) {
        try {
          rmSync(d, { recursive: true, force: true, maxRetries: 2 });
        } catch {
          // a run still writing there: the sweep at the next start takes the rest
        }
      }
    });
  }
  return {
    dir,
    release: async () => {
      live.delete(dir);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The prefixes of the folders verify and record make with makeTrustedScratch. */
export const TRUSTED_SCRATCH_PREFIXES = ["lmr-verify-", "lmr-record-", "lmr-record-check-"] as const;

/**
 * Folders `makeTrustedScratch` made for a process that is no longer running (a kill -9
 * of lmr): their names carry the pid. Run at the start of verify and record.
 */
export async function sweepTrustedScratch(parent = trustedScratchRoot()): Promise<void> {
  for (const prefix of TRUSTED_SCRATCH_PREFIXES) await sweepPrefix(prefix, parent);
}

/** Removes `parent/<prefix><pid>-*` folders whose lmr process (pid) is gone. */
export async function sweepPrefix(prefix: string, parent: string): Promise<void> {
  const names = await readdir(parent).catch(() => [] as string[]);
  for (const name of names) {
    const m = name.startsWith(prefix) ? /^(\d+)-/.exec(name.slice(prefix.length)) : null;
    if (!m || Number(m[1]) === process.pid || isRunning(Number(m[1]))) continue;
    await rm(join(parent, name), { recursive: true, force: true }).catch(() => undefined);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_FILE, SCRATCH_DIR } from "../run-folder/index.js";
import { lockRunDir } from "./run-dir.js";

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "lmr-rundir-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function startTime(pid: number): Promise<string> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
}

describe("lockRunDir", () => {
  it("takes a free folder and gives it back", async () => {
    const dir = join(root, "free");
    await mkdir(dir);
    const lock = await lockRunDir(dir);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), "utf8"))).toMatchObject({ pid: process.pid });
    expect(lock.recovered).toEqual({ killed: [], swept: [] });
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses a folder a live process holds", async () => {
    const dir = join(root, "busy");
    await mkdir(dir);
    const first = await lockRunDir(dir);
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, start: await startTime(process.ppid), started_at: "t" }));
    await expect(lockRunDir(dir)).rejects.toThrow(/another lmr eval \(pid \d+, started t\) is grading into this run folder/);
    await first.release();
  });

  it("takes over from a dead holder: kills its leftover processes, removes scratch and half-written files", async () => {
    const dir = join(root, "stale");
    const scratch = join(dir, SCRATCH_DIR, "lmr-run-x");
    await mkdir(join(scratch, "tmp"), { recursive: true });
    await mkdir(join(dir, "bundles", ".t.tmp-abc"), { recursive: true });
    await mkdir(join(dir, "results", "m", "t", "0"), { recursive: true });
    await writeFile(join(dir, "results", "m", "t", "0", ".result.json.tmp-1-x"), "{");
    // A process as the runner leaves one: TMPDIR in the scratch copy.
    const orphan = spawn("sleep", ["30"], { env: { TMPDIR: join(scratch, "tmp") }, stdio: "ignore", detached: true });
    const gone = new Promise<void>((r) => orphan.on("exit", () => r()));
    // A pid that is not running: 2^22 is above Linux's pid_max default.
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: 4194304 + 7, start: "1", started_at: "t" }));
    const lock = await lockRunDir(dir);
    await gone;
    expect(lock.recovered.previousPid).toBe(4194311);
    expect(lock.recovered.killed).toEqual([orphan.pid]);
    expect(lock.recovered.swept.map((p) => p.slice(dir.length + 1)).sort()).toEqual([
      ".scratch/lmr-run-x",
      "bundles/.t.tmp-abc",
      "results/m/t/0/.result.json.tmp-1-x",
    ]);
    expect(await readdir(join(dir, "results", "m", "t", "0"))).toEqual([]);
    await lock.release();
  });
});

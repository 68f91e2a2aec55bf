import { spawn } from "node:child_process";
import { existsSync, statfsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";

async function freshRoot(): Promise<string> {
  vi.resetModules();
  return (await import("./trusted-scratch.js")).trustedScratchRoot();
}

const shmIsTmpfs = (() => {
  try {
    const fs = statfsSync("/dev/shm");
    return fs.type === 0x01021994 && fs.bavail * fs.bsize >= 2 * 1024 ** 3;
  } catch {
    return false;
  }
})();

describe("the scratch root of trusted runs", () => {
  afterEach(() => {
    delete process.env.LMR_TRUSTED_TMPDIR;
  });

  it("is $LMR_TRUSTED_TMPDIR when set", async () => {
    process.env.LMR_TRUSTED_TMPDIR = "/some/where";
    expect(await freshRoot()).toBe("/some/where");
  });

  it.runIf(shmIsTmpfs)("is /dev/shm where that is a tmpfs with room", async () => {
    expect(await freshRoot()).toBe("/dev/shm");
  });

  it.runIf(!shmIsTmpfs)("is the system's temp folder where /dev/shm is no roomy tmpfs", async () => {
    expect(await freshRoot()).toBe(tmpdir());
  });
});

describe("trusted scratch folders", () => {
  it("carry the pid in their name and go on release", async () => {
    const { makeTrustedScratch } = await import("./trusted-scratch.js");
    const parent = await mkdtemp(join(tmpdir(), "lmr-ts-parent-"));
    try {
      const s = await makeTrustedScratch("lmr-verify-", parent);
      expect(basename(s.dir)).toMatch(new RegExp(`^lmr-verify-${process.pid}-`));
      await writeFile(join(s.dir, "x"), "y");
      await s.release();
      expect(existsSync(s.dir)).toBe(false);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("are removed when lmr is stopped by SIGTERM, and the process still dies of the signal", async () => {
    const parent = await mkdtemp(join(tmpdir(), "lmr-ts-parent-"));
    try {
      const module = resolve("dist/runner/trusted-scratch.js");
      const script = `const { makeTrustedScratch } = await import(${JSON.stringify(module)}); const s = await makeTrustedScratch("lmr-verify-", ${JSON.stringify(parent)}); process.stdout.write(s.dir + "\\n"); setInterval(() => {}, 1000);`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      const dir = await new Promise<string>((r) => child.stdout.once("data", (d: Buffer) => r(String(d).trim())));
      expect(existsSync(dir)).toBe(true);
      const exited = new Promise<NodeJS.Signals | null>((r) => child.once("exit", (_code, signal) => r(signal)));
      child.kill("SIGTERM");
      expect(await exited).toBe("SIGTERM");
      expect(existsSync(dir)).toBe(false);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("left by a process that is gone (kill -9) are swept; those of live processes and other folders stay", async () => {
    const { sweepTrustedScratch } = await import("./trusted-scratch.js");
    const parent = await mkdtemp(join(tmpdir(), "lmr-ts-parent-"));
    try {
      const gone = spawn(process.execPath, ["-e", "0"]);
      const deadPid = gone.pid!;
      await new Promise((r) => gone.once("exit", r));
      const names = [
        `lmr-verify-${deadPid}-aaaaaa`,
        `lmr-record-check-${deadPid}-bbbbbb`,
        `lmr-verify-${process.pid}-cccccc`,
        "lmr-verify-dddddd",
        `other-${deadPid}-eeeeee`,
      ];
      for (const n of names) await mkdir(join(parent, n));
      await sweepTrustedScratch(parent);
      expect((await readdir(parent)).sort()).toEqual([`lmr-verify-${process.pid}-cccccc`, "lmr-verify-dddddd", `other-${deadPid}-eeeeee`].sort());
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});

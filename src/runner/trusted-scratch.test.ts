import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";
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

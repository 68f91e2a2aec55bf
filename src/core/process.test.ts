import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { processStart } from "./process.js";

describe("processStart", () => {
  it("is this process's start tick, the same on every call, and another process has its own", async () => {
    const mine = processStart(process.pid);
    expect(mine).toMatch(/^\d+$/);
    expect(processStart(process.pid)).toBe(mine);
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 5000)"], { stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 50));
      expect(processStart(child.pid!)).toMatch(/^\d+$/);
    } finally {
      child.kill("SIGKILL");
    }
  });
  it("is undefined for a pid that names no process", () => {
    expect(processStart(2 ** 22 + 12345)).toBeUndefined();
  });
});

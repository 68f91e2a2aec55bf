import { describe, expect, it } from "vitest";
import { deferCleanup, settleDeferred } from "./deferred-cleanup.js";

const after = (ms: number, f: () => void): Promise<void> => new Promise((r) => setTimeout(() => (f(), r()), ms));

describe("deferred cleanup", () => {
  it("settleDeferred waits for every deferred cleanup, one deferred while it waits and a failed one included", async () => {
    const done: string[] = [];
    deferCleanup(after(20, () => done.push("scratch")));
    deferCleanup(after(5, () => done.push("cgroups")).then(() => deferCleanup(after(30, () => done.push("late")))));
    deferCleanup(Promise.reject(new Error("already gone")));
    await settleDeferred();
    expect(done.sort()).toEqual(["cgroups", "late", "scratch"]);
  });

  it("returns at once when nothing is pending", async () => {
    await settleDeferred();
    await expect(settleDeferred()).resolves.toBeUndefined();
  });
});

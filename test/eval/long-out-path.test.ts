import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { readResults, targetFiles, writeJsonl } from "./helpers.js";

/**
 * A run folder deep enough that a unix socket inside it would not fit sun_path (107 bytes):
 * the bridge's sockets live in a short folder of their own, so samples are graded, not `infra`.
 */
describe("lmr eval with a long --out path", () => {
  let root: string;
  let bundles: string;
  beforeAll(async () => {
    root = await makeTempDir("long-out");
    bundles = join(root, "b");
    const r = await runCli(["build", "--tasks-dir", "examples/tasks", "--out", bundles, "examples/tasks/pref-loss"]);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 120_000);
  afterAll(removeTempDirs);

  it("grades the reference as passed and the stub as failed", async () => {
    const rows = [];
    for (const [model, from] of [
      ["ref", "reference"],
      ["stub", "workspace"],
    ] as const) {
      const files: Record<string, string> = {};
      for (const f of await targetFiles(bundles, "pref-loss")) files[f] = await readFile(join(bundles, "pref-loss", from, f), "utf8");
      rows.push({ task_id: "pref-loss", model, files });
    }
    const subs = join(root, "subs.jsonl");
    await writeJsonl(subs, rows);
    const out = join(root, "a-run-folder-whose-path-is-long".repeat(4), "and-deeper-still".repeat(3));
    expect(join(out, "scratch", "lmr-run-XXXXXX", "bridge", "candidate.sock").length).toBeGreaterThan(107);
    const r = await runCli([
      "eval",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "--submissions",
      subs,
      "--out",
      out,
      "--sandbox",
      "bwrap",
      "--python",
      "/usr/bin/python3",
    ]);
    expect(r.exitCode, r.stderr).toBeLessThanOrEqual(1);
    const results = await readResults(out);
    expect(results.get("ref/pref-loss/0")?.verdict, results.get("ref/pref-loss/0")?.reason).toBe("passed");
    expect(results.get("stub/pref-loss/0")?.verdict, results.get("stub/pref-loss/0")?.reason).toBe("failed");
  });
});

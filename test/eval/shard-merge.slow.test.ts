import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Summary } from "../../src/report/index.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { TASK_IDS, buildExampleBundles, countResultFiles, evalExamples, referencePatch, stubPatch, writeJsonl } from "./helpers.js";

/**
 * `lmr eval --shard 1/2` and `--shard 2/2` into two folders, merged by
 * `lmr report A B`, give the summary of one local run of the same
 * submissions; merging refuses folders that are not parts of one plan.
 */
afterAll(removeTempDirs);

/** What must agree between two gradings of the same submissions: everything but times and the run's identity. */
function comparable(s: Summary): unknown {
  return {
    totals: s.totals,
    problems: s.problems,
    models: s.models.map((m) => ({
      ...m,
      tasks: m.tasks.map((t) => ({ ...t, mean_duration_s: 0, results: t.results.map((r) => ({ ...r, duration_s: 0 })) })),
    })),
  };
}

describe("lmr eval --shard I/N and lmr report RUN_A RUN_B", () => {
  let work: string;
  let jsonl: string;
  let bundles: string;
  beforeAll(async () => {
    work = await makeTempDir("shard");
    bundles = await buildExampleBundles();
    const rows: unknown[] = [];
    for (const [i, t] of TASK_IDS.entries())
      rows.push({ task_id: t, model: "m", patch: i % 2 ? await stubPatch(bundles, t, work) : await referencePatch(bundles, t) });
    jsonl = join(work, "subs.jsonl");
    await writeJsonl(jsonl, rows);
  });

  it("two shards merged summarise like one local run", async () => {
    const [a, b, whole] = ["shard-1", "shard-2", "whole"].map((n) => join(work, n));
    // Bundles built once: a run folder's bundles/ is reused when the task's inputs match (grading is what is tested here).
    for (const dir of [a!, b!, whole!]) await cp(bundles, join(dir, "bundles"), { recursive: true });
    const r1 = await evalExamples(jsonl, a!, "--sandbox", "none", "--shard", "1/2");
    const r2 = await evalExamples(jsonl, b!, "--sandbox", "none", "--shard", "2/2");
    const r0 = await evalExamples(jsonl, whole!, "--sandbox", "none", "--json");
    for (const r of [r1, r2, r0]) expect(r.exitCode, r.stderr).toBe(0);
    expect(r1.stdout).toMatch(/^shard 1\/2 \(plan [0-9a-f]{12}\)/);
    const [n1, n2] = [await countResultFiles(a!), await countResultFiles(b!)];
    expect(n1 + n2).toBe(TASK_IDS.length);
    expect(n1 * n2).toBeGreaterThan(0); // both parts hold work
    const run = JSON.parse(await readFile(join(a!, "run.json"), "utf8")) as { shard: { index: number; count: number; plan: string } };
    expect(run.shard).toMatchObject({ index: 1, count: 2 });

    const merged = await runCli(["report", a!, b!, "--format", "json"]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    const m = jsonData(merged.stdout) as Summary;
    expect(m.run.run_id).toBe(`plan-${run.shard.plan.slice(0, 12)}`);
    expect(comparable(m)).toEqual(comparable(jsonData(r0.stdout) as Summary));

    // One shard alone: said to be a part; a merge missing a shard says which.
    const alone = await runCli(["report", a!, "--format", "json"]);
    expect(alone.exitCode).toBe(0);
    expect((jsonData(alone.stdout) as Summary).problems.map((p) => p.message).join("\n")).toMatch(/shard 1\/2 of a run/);

    // Refused: the same shard twice, a whole run with a shard, shards of another plan.
    const twice = await runCli(["report", a!, a!]);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(/are both shard 1\/2/);
    const mixed = await runCli(["report", whole!, b!]);
    expect(mixed.exitCode).toBe(2);
    expect(mixed.stderr).toMatch(/is shard 2\/2 of a run, .* is a whole run/);
    const other = join(work, "other-plan");
    await cp(b!, other, { recursive: true });
    const cfg = JSON.parse(await readFile(join(other, "run.json"), "utf8")) as { shard: { plan: string } };
    cfg.shard.plan = "0".repeat(64);
    await writeFile(join(other, "run.json"), JSON.stringify(cfg));
    const mismatched = await runCli(["report", a!, other]);
    expect(mismatched.exitCode).toBe(2);
    expect(mismatched.stderr).toMatch(/not parts of one run.*hint: every shard must be graded with the same submissions/);
    const overlap = await runCli(["report", whole!, join(work, "whole")]);
    expect(overlap.exitCode).toBe(2);
  });
});

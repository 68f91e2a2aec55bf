import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
import { summarizeRun, writeSummary } from "../../src/report/summarize.js";
import { validateSummary } from "../../src/report/validate-summary.js";
import { BASIC_RESULTS, copyFixtureRun, FIXTURE_RUN, LEGACY_RUN, TWO_MODEL_RUN } from "./helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});
async function freshRun(): Promise<string> {
  const { dir, cleanup } = await copyFixtureRun();
  cleanups.push(cleanup);
  return dir;
}

const TRAIN = "Training Objectives & Optimization Techniques";
const DECODE = "Decoding & Search Strategies";

describe("summarizeRun on the fixture run", () => {
  it.each([
    ["layout 2", FIXTURE_RUN],
    ["layout 1 (older lmr)", LEGACY_RUN],
  ])("counts every verdict apart and computes pass@k by hand-checked values (%s)", async (_layout, runDir) => {
    const s = await summarizeRun(runDir);
    expect(s.run).toMatchObject({ run_id: "2025-01-15-fixture", samples_per_task: 3, sandbox: "bwrap" });
    expect(s.totals).toEqual({
      models: 1,
      tasks: 3,
      samples: 7,
      graded: 6,
      passed: 2,
      verdicts: { passed: 2, failed: 1, error: 1, timeout: 1, invalid: 1, infra: 1 },
    });
    expect(s.models.map((m) => [m.model, m.samples_per_task])).toEqual([["example-model-1", 3]]);
    const m = s.models[0]!;
    expect(m.totals).toEqual({
      tasks: 3,
      scored_tasks: 3,
      samples: 7,
      graded: 6,
      passed: 2,
      verdicts: { passed: 2, failed: 1, error: 1, timeout: 1, invalid: 1, infra: 1 },
    });
    const byId = Object.fromEntries(m.tasks.map((t) => [t.task_id, t]));
    // dpo: passed, failed, infra → n=2 graded, c=1: pass@1 1/2, pass@2 1
    expect(byId["dpo-preference-loss"]).toMatchObject({ category: TRAIN, samples: 3, graded: 2, passed: 1, pass_at_1: 0.5 });
    expect(byId["dpo-preference-loss"]?.pass_at_k).toEqual([
      { k: 1, value: 0.5 },
      { k: 2, value: 1 },
    ]);
    // contrastive: error, timeout, passed → n=3, c=1: 1/3, 2/3, 1
    expect(byId["contrastive-decoding-step"]?.pass_at_k.map((p) => p.value)).toEqual([1 / 3, 2 / 3, 1].map((v) => expect.closeTo(v, 12)));
    expect(byId["contrastive-decoding-step"]?.mean_duration_s).toBeCloseTo((1.207 + 120 + 5.5) / 3, 9);
    // orpo: one invalid sample (the other result.json is corrupt) → n=1, c=0
    expect(byId["orpo-odds-ratio-loss"]).toMatchObject({ samples: 1, graded: 1, passed: 0, pass_at_1: 0 });
    // overall: only k=1 (orpo has one graded sample): (1/2 + 1/3 + 0) / 3
    expect(m.pass_at_k).toEqual([{ k: 1, value: expect.closeTo(5 / 18, 12), tasks: 3 }]);
    expect(m.pass_at_1).toBeCloseTo(5 / 18, 12);
    expect(m.sets).toEqual([
      { set: "core", tasks: 3, scored_tasks: 3, samples: 7, passed: 2, pass_rate: expect.closeTo(5 / 18, 12), verdicts: m.totals.verdicts },
    ]);
    expect(m.categories).toMatchObject([
      {
        category: DECODE,
        tasks: 1,
        scored_tasks: 1,
        samples: 3,
        passed: 1,
        pass_rate: expect.closeTo(1 / 3, 12),
        verdicts: { passed: 1, failed: 0, error: 1, timeout: 1, invalid: 0, infra: 0 },
      },
      {
        category: TRAIN,
        tasks: 2,
        scored_tasks: 2,
        samples: 4,
        passed: 1,
        pass_rate: 0.25,
        verdicts: { passed: 1, failed: 1, error: 0, timeout: 0, invalid: 1, infra: 1 },
      },
    ]);
    // the model × category numbers: a seeded bootstrap interval over the category's tasks (pass@1 0.5 and 0), pass@k per category
    expect(m.categories[1]).toMatchObject({ pass_at_1_ci: { low: 0, high: 0.5, level: 0.95 }, pass_at_k: [{ k: 1, value: 0.25, tasks: 2 }] });
    expect(m.categories[0]!.pass_at_k?.map((p) => p.k)).toEqual([1, 2, 3]);
    expect(m.pass_at_1_ci!.low).toBeLessThanOrEqual(m.pass_at_1!);
    expect(m.pass_at_1_ci!.high).toBeGreaterThanOrEqual(m.pass_at_1!);
    expect(byId["dpo-preference-loss"]?.results[1]).toMatchObject({
      verdict: "failed",
      failing_tests: ["tests/test_dpo_preference_loss.py::test_matches_reference"],
    });
  });

  it("reports the corrupt result.json and the short task instead of crashing", async () => {
    const s = await summarizeRun(FIXTURE_RUN);
    expect(s.problems).toHaveLength(2);
    expect(s.problems[0]).toMatchObject({ file: `${BASIC_RESULTS}/orpo-odds-ratio-loss/1/result.json`, message: expect.stringMatching(/^invalid JSON/) });
    expect(s.problems[1]).toMatchObject({
      file: `${BASIC_RESULTS}/orpo-odds-ratio-loss`,
      message: "1 of 3 samples of model 'example-model-1' have a readable result.json",
    });
    const legacy = await summarizeRun(LEGACY_RUN);
    expect(legacy.problems.map((p) => `${p.file}: ${p.message.split(" (")[0]}`)).toEqual([
      "results/orpo-odds-ratio-loss/1/result.json: invalid JSON",
      "results/orpo-odds-ratio-loss: 1 of 3 samples have a readable result.json",
    ]);
  });

  it("produces a summary the schema accepts, and the schema rejects a broken one", async () => {
    const s = await summarizeRun(FIXTURE_RUN);
    expect(await validateSummary(s)).toEqual({ ok: true, problems: [] });
    const broken = structuredClone(s) as unknown as Record<string, unknown> & {
      totals: { verdicts: Record<string, unknown> };
      models: { tasks: Record<string, unknown>[] }[];
    };
    broken.totals.verdicts.passed = -1;
    broken.models[0]!.tasks[0] = { ...broken.models[0]!.tasks[0], surprise: true };
    delete broken.problems;
    const check = await validateSummary(broken);
    expect(check.ok).toBe(false);
    const pointers = check.problems.map((p) => `${p.pointer} ${p.message}`);
    expect(pointers).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\/totals\/verdicts\/passed must be >= 0/),
        expect.stringMatching(/^\/models\/0\/tasks\/0 must NOT have additional properties \(surprise\)/),
        expect.stringMatching(/^ must have required property 'problems'/),
      ]),
    );
  });
});

describe("reading broken run folders", () => {
  it("reports a missing result.json and a result whose task_id does not match its folder", async () => {
    const dir = await freshRun();
    await rm(join(dir, BASIC_RESULTS, "dpo-preference-loss/0/result.json"));
    const moved = JSON.parse(await readFile(join(dir, BASIC_RESULTS, "contrastive-decoding-step/2/result.json"), "utf8")) as Record<string, unknown>;
    await writeFile(join(dir, BASIC_RESULTS, "contrastive-decoding-step/2/result.json"), JSON.stringify({ ...moved, task_id: "elsewhere" }));
    await writeFile(join(dir, BASIC_RESULTS, "contrastive-decoding-step/1/result.json"), JSON.stringify({ ...moved, sample: "1", model: "someone-else" }));
    const s = await summarizeRun(dir);
    const files = s.problems.map((p) => `${p.file}${p.pointer ?? ""}: ${p.message}`);
    expect(files).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^results\/example-model-1\/dpo-preference-loss\/0\/result\.json: result\.json is missing/),
        expect.stringMatching(/^results\/example-model-1\/contrastive-decoding-step\/2\/result\.json\/task_id: is "elsewhere" but the folder is/),
        expect.stringMatching(
          /^results\/example-model-1\/contrastive-decoding-step\/1\/result\.json\/model: is "someone-else", whose folder is "someone-else", but it lies in "example-model-1"/,
        ),
      ]),
    );
    expect(s.totals.samples).toBe(4);
    expect(s.totals.passed).toBe(0);
  });

  it("throws a usage-level LmrError naming run.json or results/ when they are missing", async () => {
    const dir = await freshRun();
    await rm(join(dir, "results"), { recursive: true });
    await expect(summarizeRun(dir)).rejects.toMatchObject({ code: "report/not-a-run", kind: "input", file: join(dir, "results") });
    await rm(join(dir, "run.json"));
    const err = await summarizeRun(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LmrError);
    expect((err as LmrError).format()).toMatch(/run\.json: not a run folder: run\.json is missing/);
  });

  it("rejects a run.json without run_id", async () => {
    const dir = await freshRun();
    await writeFile(join(dir, "run.json"), JSON.stringify({ tasks: [] }));
    await expect(summarizeRun(dir)).rejects.toMatchObject({ code: "report/bad-run-json", pointer: "/run_id" });
  });
});

describe("summarizeRun on a run with two models", () => {
  it("gives each model its own tasks and pass@k, never pooled", async () => {
    const s = await summarizeRun(TWO_MODEL_RUN);
    expect(await validateSummary(s)).toEqual({ ok: true, problems: [] });
    expect(s.totals).toMatchObject({ models: 2, tasks: 2, samples: 7, passed: 4 });
    expect(s.models.map((m) => m.model)).toEqual(["alpha", "Org/Beta-7B"]);
    const [alpha, beta] = s.models;
    // alpha: dpo passed+failed (n=2, c=1), contrastive passed+passed (n=2, c=2)
    expect(alpha!.pass_at_k).toEqual([
      { k: 1, value: 0.75, tasks: 2 },
      { k: 2, value: 1, tasks: 2 },
    ]);
    // beta: dpo failed+timeout (n=2, c=0), contrastive one passed sample (n=1, c=1): only pass@1
    expect(beta!.pass_at_k).toEqual([{ k: 1, value: 0.5, tasks: 2 }]);
    expect(beta!.dir).toMatch(/^org-beta-7b-[0-9a-f]{8}$/);
    expect(alpha!.sets.map((g) => [g.set, g.pass_rate])).toEqual([
      ["core", 0.5],
      ["extended", 1],
    ]);
    expect(beta!.tasks.map((t) => [t.task_id, t.set, t.samples])).toEqual([
      ["contrastive-decoding-step", "extended", 1],
      ["dpo-preference-loss", "core", 2],
    ]);
  });

  it("warns about the one sample really missing, for that model and task only", async () => {
    const s = await summarizeRun(TWO_MODEL_RUN);
    expect(s.problems).toEqual([
      { file: `results/${s.models[1]!.dir}/contrastive-decoding-step`, message: "1 of 2 samples of model 'Org/Beta-7B' have a readable result.json" },
    ]);
  });

  it("narrows to one set with --set, and says so", async () => {
    const core = await summarizeRun(TWO_MODEL_RUN, { set: "core" });
    expect(core.set_filter).toBe("core");
    expect(core.models.map((m) => [m.model, m.tasks.map((t) => t.task_id), m.pass_at_1])).toEqual([
      ["alpha", ["dpo-preference-loss"], 0.5],
      ["Org/Beta-7B", ["dpo-preference-loss"], 0],
    ]);
    expect(core.problems).toEqual([]);
    expect(await validateSummary(core)).toEqual({ ok: true, problems: [] });
  });
});

describe("writeSummary", () => {
  it("writes summary.json that parses back to the returned summary", async () => {
    const dir = await freshRun();
    const s = await writeSummary(dir, { now: new Date("2025-03-01T00:00:00Z") });
    const onDisk = JSON.parse(await readFile(join(dir, "summary.json"), "utf8")) as unknown;
    expect(onDisk).toEqual(JSON.parse(JSON.stringify(s)));
    expect((onDisk as { generated_at: string }).generated_at).toBe("2025-03-01T00:00:00.000Z");
  });
});

import { describe, expect, it } from "vitest";
import { checkSampleResult, type SampleResult, type Verdict } from "../run-folder/index.js";
import type { LoadedRun } from "./read-run.js";
import { buildSummary } from "./summarize.js";

function result(task: string, sample: string, verdict: Verdict, extra: Partial<SampleResult> = {}): SampleResult {
  return {
    task_id: task,
    sample,
    model: "m",
    category: "Cat A",
    submission_hash: "0".repeat(64),
    verdict,
    counts: { passed: verdict === "passed" ? 2 : 1, failed: verdict === "failed" ? 1 : 0, errors: 0, skipped: 0 },
    tests: [
      { id: "t.py::a", status: "passed", time_s: 0.1 },
      { id: "t.py::b", status: verdict === "failed" ? "failed" : "passed", time_s: 0.1 },
    ],
    duration_s: 2,
    backend: "local",
    finished_at: "2025-01-01T00:00:00.000Z",
    toolkit_version: "0.1.0",
    ...extra,
  };
}

/** A layout-2 run whose run.json declares each model with `samples` per task (default: what the results hold at most). */
function loaded(results: SampleResult[], over: Partial<LoadedRun> = {}, samples?: Record<string, number>): LoadedRun {
  const models = [...new Set(results.map((r) => r.model))].sort().map((model) => {
    const perTask = new Map<string, number>();
    for (const r of results.filter((x) => x.model === model)) perTask.set(r.task_id, (perTask.get(r.task_id) ?? 0) + 1);
    return { model, dir: model, samples: samples?.[model] ?? Math.max(...perTask.values()) };
  });
  return {
    run: { run_id: "r1", samples_per_task: 4 },
    layout: 2,
    requested_tasks: [...new Set(results.map((r) => r.task_id))],
    task_sets: {},
    models,
    results,
    problems: [],
    ...over,
  };
}

const NOW = new Date("2025-02-01T00:00:00.000Z");

describe("buildSummary", () => {
  it("averages pass@k over tasks for every k all tasks reach", () => {
    const s = buildSummary(
      loaded([
        ...["passed", "failed", "failed", "failed"].map((v, i) => result("a", String(i), v as Verdict)),
        ...["passed", "passed", "failed", "timeout"].map((v, i) => result("b", String(i), v as Verdict, { category: "Cat B" })),
      ]),
      { now: NOW },
    );
    expect(s.models).toHaveLength(1);
    const m = s.models[0]!;
    // task a: n=4 c=1 → 1/4, 1/2, 3/4, 1 ; task b: n=4 c=2 → 1/2, 5/6, 1, 1
    const a = m.tasks.find((t) => t.task_id === "a");
    expect(a?.pass_at_k.map((p) => p.value)).toEqual([0.25, 0.5, 0.75, 1].map((v) => expect.closeTo(v, 12)));
    expect(m.pass_at_k.map((p) => p.k)).toEqual([1, 2, 3, 4]);
    expect(m.pass_at_k.map((p) => p.value)).toEqual([(0.25 + 0.5) / 2, (0.5 + 5 / 6) / 2, (0.75 + 1) / 2, 1].map((v) => expect.closeTo(v, 12)));
    expect(m.pass_at_1).toBeCloseTo(0.375, 12);
    expect(m.pass_at_k.every((p) => p.tasks === 2)).toBe(true);
    expect(m.categories.map((c) => [c.category, c.pass_rate])).toEqual([
      ["Cat A", 0.25],
      ["Cat B", 0.5],
    ]);
    expect(m.sets.map((c) => [c.set, c.tasks, c.pass_rate])).toEqual([["core", 2, 0.375]]);
    expect(s.totals).toEqual({
      models: 1,
      tasks: 2,
      samples: 8,
      graded: 8,
      passed: 3,
      verdicts: { passed: 3, failed: 4, error: 0, timeout: 1, invalid: 0, infra: 0 },
    });
    expect(s.generated_at).toBe("2025-02-01T00:00:00.000Z");
    expect(s.problems).toEqual([]);
  });

  it("computes pass@k per model, never pooled, and keeps each model's tasks apart", () => {
    const s = buildSummary(
      loaded([
        ...["passed", "failed"].map((v, i) => result("a", String(i), v as Verdict, { model: "alpha" })),
        ...["passed", "passed"].map((v, i) => result("b", String(i), v as Verdict, { model: "alpha" })),
        ...["failed", "failed"].map((v, i) => result("a", String(i), v as Verdict, { model: "beta" })),
        ...["passed", "failed"].map((v, i) => result("b", String(i), v as Verdict, { model: "beta" })),
      ]),
    );
    expect(s.models.map((m) => m.model)).toEqual(["alpha", "beta"]);
    const [alpha, beta] = s.models;
    // alpha: a n=2 c=1 (1/2, 1), b n=2 c=2 (1, 1); beta: a c=0 (0, 0), b c=1 (1/2, 1)
    expect(alpha!.pass_at_k).toEqual([
      { k: 1, value: 0.75, tasks: 2 },
      { k: 2, value: 1, tasks: 2 },
    ]);
    expect(beta!.pass_at_k).toEqual([
      { k: 1, value: 0.25, tasks: 2 },
      { k: 2, value: 0.5, tasks: 2 },
    ]);
    expect(alpha!.tasks.map((t) => [t.task_id, t.samples, t.passed])).toEqual([
      ["a", 2, 1],
      ["b", 2, 2],
    ]);
    expect(beta!.totals).toMatchObject({ tasks: 2, samples: 4, passed: 1 });
    expect(s.totals).toMatchObject({ models: 2, tasks: 2, samples: 8, passed: 4 });
    expect(s.problems).toEqual([]);
  });

  it("keeps infra out of pass@k and reports a task with no graded sample", () => {
    const s = buildSummary(loaded([result("a", "0", "passed"), result("a", "1", "infra"), result("b", "0", "infra"), result("b", "1", "infra")]));
    const m = s.models[0]!;
    const [a, b] = m.tasks;
    expect(a).toMatchObject({ samples: 2, graded: 1, passed: 1, pass_at_1: 1 });
    expect(b).toMatchObject({ samples: 2, graded: 0, passed: 0, pass_at_1: null, pass_at_k: [] });
    expect(m.totals).toMatchObject({ tasks: 2, scored_tasks: 1, samples: 4, graded: 1 });
    expect(m.pass_at_1).toBe(1);
    expect(m.pass_at_k).toEqual([{ k: 1, value: 1, tasks: 1 }]);
    expect(s.problems.map((p) => p.file)).toEqual(["results/m/b"]);
  });

  it("gives no models, null rates and no pass@k when nothing is graded at all", () => {
    const s = buildSummary(loaded([]));
    expect(s.models).toEqual([]);
    expect(s.totals).toMatchObject({ models: 0, tasks: 0, samples: 0 });
  });

  it("sorts samples numerically and lists failing tests and mean duration", () => {
    const s = buildSummary(loaded([result("a", "10", "failed", { duration_s: 4 }), result("a", "2", "passed", { duration_s: 1 })]));
    const t = s.models[0]!.tasks[0];
    expect(t?.results.map((r) => r.sample)).toEqual(["2", "10"]);
    expect(t?.results[1]?.failing_tests).toEqual(["t.py::b"]);
    expect(t?.mean_duration_s).toBe(2.5);
  });

  it("reports short tasks, unlisted tasks, missing tasks and category disagreement", () => {
    const s = buildSummary(
      loaded(
        [result("a", "0", "passed"), result("a", "1", "failed", { category: "Other" }), result("x", "0", "passed")],
        { requested_tasks: ["a", "gone"] },
        { m: 2 },
      ),
    );
    const messages = s.problems.map((p) => `${p.file}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^results\/\*\/a: samples disagree on the category/),
        expect.stringMatching(/^results\/m\/gone: run\.json lists this task but model 'm' has no readable result for it/),
        expect.stringMatching(/^results\/\*\/x: this task has results but run\.json does not list it/),
        expect.stringMatching(/^results\/m\/x: 1 of 2 samples of model 'm' have a readable result\.json/),
      ]),
    );
    expect(messages).toHaveLength(4);
    expect(s.models[0]!.tasks.find((t) => t.task_id === "a")?.category).toBe("Cat A");
  });
});

describe("the coverage warning", () => {
  const twoModels = (betaOnB: number): SampleResult[] => [
    result("a", "0", "passed", { model: "alpha" }),
    result("b", "0", "failed", { model: "alpha" }),
    result("a", "0", "failed", { model: "beta" }),
    ...Array.from({ length: betaOnB }, (_, i) => result("b", String(i), "passed", { model: "beta" })),
  ];

  it("is silent when several models share a run and each has every sample it declared", () => {
    const s = buildSummary(loaded(twoModels(1), {}, { alpha: 1, beta: 1 }));
    expect(s.problems).toEqual([]);
    expect(s.models.map((m) => m.tasks.map((t) => t.samples))).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });

  it("names the model and task where a sample really is missing, and only there", () => {
    // beta declared 2 samples per task: it has 2 on b but only 1 on a; alpha declared 1 and has 1 everywhere.
    const s = buildSummary(loaded(twoModels(2), {}, { alpha: 1, beta: 2 }));
    expect(s.problems).toEqual([{ file: "results/beta/a", message: "1 of 2 samples of model 'beta' have a readable result.json" }]);
  });

  it("counts a requested task a model has no result for", () => {
    const s = buildSummary(
      loaded(
        twoModels(1).filter((r) => !(r.model === "beta" && r.task_id === "b")),
        {},
        { alpha: 1, beta: 1 },
      ),
    );
    expect(s.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      "results/beta/b: run.json lists this task but model 'beta' has no readable result for it; it is left out",
    ]);
  });
});

describe("set filter", () => {
  it("summarises only the tasks of the set and says so", () => {
    const results = [result("a", "0", "passed", { set: "core" }), result("e", "0", "failed", { set: "extended" }), result("legacy", "0", "failed")];
    const all = buildSummary(loaded(results, { task_sets: { a: "core", e: "extended", legacy: "core" } }));
    expect(all.models[0]!.sets.map((g) => [g.set, g.tasks])).toEqual([
      ["core", 2],
      ["extended", 1],
    ]);
    expect(all.models[0]!.tasks.map((t) => [t.task_id, t.set])).toEqual([
      ["a", "core"],
      ["e", "extended"],
      ["legacy", "core"],
    ]);
    const core = buildSummary(loaded(results, { task_sets: { a: "core", e: "extended", legacy: "core" } }), { set: "core" });
    expect(core.set_filter).toBe("core");
    expect(core.models[0]!.tasks.map((t) => t.task_id)).toEqual(["a", "legacy"]);
    expect(core.problems).toEqual([]);
    const ext = buildSummary(loaded(results, { task_sets: { a: "core", e: "extended", legacy: "core" } }), { set: "extended" });
    expect(ext.models[0]!.tasks.map((t) => t.task_id)).toEqual(["e"]);
    expect(ext.models[0]!.pass_at_1).toBe(0);
  });
});

describe("checkSampleResult", () => {
  it("accepts a result and names the first wrong field otherwise", () => {
    const place = { task: "a", sample: "0", modelFolder: "m" };
    expect(checkSampleResult(result("a", "0", "passed"), place)).toBeUndefined();
    expect(checkSampleResult(result("a", "0", "passed"), { task: "a", sample: "0" })).toBeUndefined();
    expect(checkSampleResult(result("a", "0", "passed"), { ...place, task: "b" })?.pointer).toBe("/task_id");
    expect(checkSampleResult(result("a", "0", "passed"), { ...place, sample: "1" })?.pointer).toBe("/sample");
    expect(checkSampleResult(result("a", "0", "passed"), { ...place, modelFolder: "other" })?.pointer).toBe("/model");
    expect(checkSampleResult(result("a", "0", "passed", { model: "Org/Model" }), { ...place, modelFolder: "org-model-" })?.pointer).toBe("/model");
    expect(checkSampleResult({ ...result("a", "0", "passed"), set: "bonus" }, place)?.pointer).toBe("/set");
    expect(checkSampleResult({ ...result("a", "0", "passed"), verdict: "won" }, place)?.pointer).toBe("/verdict");
    expect(checkSampleResult({ ...result("a", "0", "passed"), duration_s: -1 }, place)?.pointer).toBe("/duration_s");
    expect(checkSampleResult({ ...result("a", "0", "passed"), counts: { passed: 1 } }, place)?.pointer).toBe("/counts/failed");
    expect(checkSampleResult([], place)?.pointer).toBe("");
  });
});

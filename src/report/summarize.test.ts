import { describe, expect, it } from "vitest";
import type { SampleResult, Verdict } from "../evaluate/types.js";
import type { LoadedRun } from "./read-run.js";
import { checkSampleResult } from "./read-run.js";
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

function loaded(results: SampleResult[], over: Partial<LoadedRun> = {}): LoadedRun {
  return { run: { run_id: "r1", samples_per_task: 4 }, requested_tasks: [...new Set(results.map((r) => r.task_id))], results, problems: [], ...over };
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
    // task a: n=4 c=1 → 1/4, 1/2, 3/4, 1 ; task b: n=4 c=2 → 1/2, 5/6, 1, 1
    const a = s.tasks.find((t) => t.task_id === "a");
    expect(a?.pass_at_k.map((p) => p.value)).toEqual([0.25, 0.5, 0.75, 1].map((v) => expect.closeTo(v, 12)));
    expect(s.pass_at_k.map((p) => p.k)).toEqual([1, 2, 3, 4]);
    expect(s.pass_at_k.map((p) => p.value)).toEqual([(0.25 + 0.5) / 2, (0.5 + 5 / 6) / 2, (0.75 + 1) / 2, 1].map((v) => expect.closeTo(v, 12)));
    expect(s.pass_at_1).toBeCloseTo(0.375, 12);
    expect(s.pass_at_k.every((p) => p.tasks === 2)).toBe(true);
    expect(s.categories.map((c) => [c.category, c.pass_rate])).toEqual([["Cat A", 0.25], ["Cat B", 0.5]]);
    expect(s.totals.verdicts).toEqual({ passed: 3, failed: 4, error: 0, timeout: 1, invalid: 0, infra: 0 });
    expect(s.generated_at).toBe("2025-02-01T00:00:00.000Z");
    expect(s.problems).toEqual([]);
  });

  it("keeps infra out of pass@k and reports a task with no graded sample", () => {
    const s = buildSummary(
      loaded([result("a", "0", "passed"), result("a", "1", "infra"), result("b", "0", "infra"), result("b", "1", "infra")], { run: { run_id: "r1", samples_per_task: 2 } }),
    );
    const [a, b] = s.tasks;
    expect(a).toMatchObject({ samples: 2, graded: 1, passed: 1, pass_at_1: 1 });
    expect(b).toMatchObject({ samples: 2, graded: 0, passed: 0, pass_at_1: null, pass_at_k: [] });
    expect(s.totals).toMatchObject({ tasks: 2, scored_tasks: 1, samples: 4, graded: 1 });
    expect(s.pass_at_1).toBe(1);
    expect(s.pass_at_k).toEqual([{ k: 1, value: 1, tasks: 1 }]);
    expect(s.problems.map((p) => p.file)).toEqual(["results/b"]);
  });

  it("gives null rates and no pass@k when nothing is graded at all", () => {
    const s = buildSummary(loaded([]));
    expect(s.pass_at_1).toBeNull();
    expect(s.pass_at_k).toEqual([]);
    expect(s.tasks).toEqual([]);
  });

  it("sorts samples numerically and lists failing tests, models and mean duration", () => {
    const s = buildSummary(
      loaded([result("a", "10", "failed", { model: "z", duration_s: 4 }), result("a", "2", "passed", { model: "y", duration_s: 1 })]),
    );
    const t = s.tasks[0];
    expect(t?.results.map((r) => r.sample)).toEqual(["2", "10"]);
    expect(t?.results[1]?.failing_tests).toEqual(["t.py::b"]);
    expect(t?.models).toEqual(["y", "z"]);
    expect(t?.mean_duration_s).toBe(2.5);
  });

  it("reports short tasks, unlisted tasks, missing tasks and category disagreement", () => {
    const s = buildSummary(
      loaded([result("a", "0", "passed"), result("a", "1", "failed", { category: "Other" }), result("x", "0", "passed")], {
        requested_tasks: ["a", "gone"],
        run: { run_id: "r1", samples_per_task: 2 },
      }),
    );
    const messages = s.problems.map((p) => `${p.file}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^results\/a: samples disagree on the category/),
        expect.stringMatching(/^results\/gone: run\.json lists this task/),
        expect.stringMatching(/^results\/x: this task has results but run\.json does not list it/),
        expect.stringMatching(/^results\/x: 1 of 2 samples/),
      ]),
    );
    expect(s.tasks.find((t) => t.task_id === "a")?.category).toBe("Cat A");
  });
});

describe("checkSampleResult", () => {
  it("accepts a result and names the first wrong field otherwise", () => {
    expect(checkSampleResult(result("a", "0", "passed"), "a", "0")).toBeUndefined();
    expect(checkSampleResult(result("a", "0", "passed"), "b", "0")?.pointer).toBe("/task_id");
    expect(checkSampleResult(result("a", "0", "passed"), "a", "1")?.pointer).toBe("/sample");
    expect(checkSampleResult({ ...result("a", "0", "passed"), verdict: "won" }, "a", "0")?.pointer).toBe("/verdict");
    expect(checkSampleResult({ ...result("a", "0", "passed"), duration_s: -1 }, "a", "0")?.pointer).toBe("/duration_s");
    expect(checkSampleResult({ ...result("a", "0", "passed"), counts: { passed: 1 } }, "a", "0")?.pointer).toBe("/counts/failed");
    expect(checkSampleResult([], "a", "0")?.pointer).toBe("");
  });
});

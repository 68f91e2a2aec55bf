import { describe, expect, it } from "vitest";
import type { RunOutcome, RunStatus, TestStatus } from "../runner/types.js";
import { findFlakyTests, judgeReference, judgeStub } from "./judge-runs.js";

/** An outcome with the given per-test statuses (`{a: "passed"}`); the run status is given or derived. */
function outcome(tests: Record<string, TestStatus>, status?: RunStatus, reason?: string): RunOutcome {
  const list = Object.entries(tests).map(([id, s]) => ({ id, status: s, time_s: 0.01 }));
  const count = (s: TestStatus): number => list.filter((t) => t.status === s).length;
  const derived: RunStatus = count("failed") + count("error") > 0 ? "failed" : "passed";
  return {
    status: status ?? derived,
    tests: list,
    counts: { passed: count("passed"), failed: count("failed"), errors: count("error"), skipped: count("skipped") },
    exit_code: 0,
    duration_s: 0.1,
    backend: "local",
    python: { path: "/usr/bin/python3", version: "3.11.2" },
    log: "",
    ...(reason ? { reason } : {}),
  };
}

const collectError = (): RunOutcome => outcome({}, "error", "collection failed in 1 place(s), first t.py: E   NotImplementedError");

describe("judgeReference", () => {
  it("accepts a reference that passes every run", () => {
    expect(judgeReference([outcome({ a: "passed" }), outcome({ a: "passed" })])).toEqual({ ok: true });
  });

  it("calls a reference that passes some runs flaky, with k/N", () => {
    const j = judgeReference([outcome({ a: "passed", b: "passed" }), outcome({ a: "passed", b: "failed" }), outcome({ a: "passed", b: "passed" })]);
    expect(j.ok).toBe(false);
    expect(j.reason).toMatch(/^flaky: passed 2\/3 runs; 1 test\(s\) changed outcome between runs \(b\); run 2: failed/);
    expect(j.flaky_tests).toEqual(["b"]);
  });

  it("calls it flaky when no run passes but tests change outcome between runs", () => {
    const j = judgeReference([outcome({ a: "failed", b: "passed" }), outcome({ a: "passed", b: "failed" })]);
    expect(j.reason).toMatch(/^flaky: passed 0\/2 runs; 2 test\(s\) changed outcome/);
    expect(j.flaky_tests).toEqual(["a", "b"]);
  });

  it("says a consistently failing reference fails every run, not that it is flaky", () => {
    const j = judgeReference([outcome({ a: "failed" }), outcome({ a: "failed" })]);
    expect(j.reason).toMatch(/^the reference fails in every run \(passed 0\/2\); run 1: failed/);
    expect(j.flaky_tests).toBeUndefined();
  });

  it("reports a run that could not start as infrastructure", () => {
    const j = judgeReference([outcome({ a: "passed" }), outcome({}, "infra", "python interpreter not found: /nope")]);
    expect(j).toMatchObject({ ok: false, infra: true });
    expect(j.reason).toContain("run 2/2 could not run the tests (python interpreter not found: /nope)");
  });
});

describe("judgeStub", () => {
  it("accepts a stub that fails the same test in every run and lists that test", () => {
    const j = judgeStub([outcome({ a: "failed", b: "passed" }), outcome({ a: "failed", b: "failed" })]);
    expect(j).toMatchObject({ ok: true, failing_every_run: ["a"], flaky_tests: ["b"] });
  });

  it("counts an error inside a test (setup) as a failure inside a test", () => {
    expect(judgeStub([outcome({ a: "error" }), outcome({ a: "error" })]).ok).toBe(true);
  });

  it("rejects a stub that passes every test", () => {
    const j = judgeStub([outcome({ a: "passed" }), outcome({ a: "passed" })]);
    expect(j.ok).toBe(false);
    expect(j.reason).toContain("the masked stub passes every test (passed 2/2 runs)");
  });

  it("rejects a stub that fails only at import/collection", () => {
    const j = judgeStub([collectError(), collectError()]);
    expect(j.reason).toMatch(/^the stub fails only at import\/collection, never inside a test \(collection failed .*NotImplementedError\)/);
  });

  it("rejects a stub caught only in some runs", () => {
    const j = judgeStub([outcome({ a: "failed" }), outcome({ a: "passed" }), outcome({ a: "failed" })]);
    expect(j.reason).toBe("the stub failed inside a test in 2/3 runs; run 2: the stub passed every test");
  });

  it("rejects a stub that fails every run but never the same test", () => {
    const j = judgeStub([outcome({ a: "failed", b: "passed" }), outcome({ a: "passed", b: "failed" })]);
    expect(j.ok).toBe(false);
    expect(j.reason).toMatch(/^flaky: no test fails in every stub run \(2 test\(s\) changed outcome: a, b\)/);
  });

  it("does not count a timeout as a failure inside a test", () => {
    const j = judgeStub([outcome({ a: "failed" }), outcome({}, "timeout", "the run exceeded its wall limit of 10 s")]);
    expect(j.reason).toBe("the stub failed inside a test in 1/2 runs; run 2: the run ended timeout: the run exceeded its wall limit of 10 s");
  });
});

describe("findFlakyTests", () => {
  it("ignores skipped tests and tests that never change", () => {
    expect(findFlakyTests([outcome({ a: "skipped", b: "passed", c: "failed" }), outcome({ a: "passed", b: "passed", c: "error" })])).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { RunOutcome, RunRequest } from "../runner/types.js";
import type { Mutant } from "./mutants.js";
import { runMutant, type MutantPlan } from "./mutant-runs.js";

const mutant = { id: "m1", description: "line 5: '+' → '-'", lines: [5, 5], source: "x" } as unknown as Mutant;
const outcome = (failing?: string): RunOutcome =>
  ({ status: failing ? "failed" : "passed", tests: failing ? [{ id: failing, status: "failed" }] : [] }) as unknown as RunOutcome;

/** A run that fails where `kills` names a test it may run, and records what it was asked. */
function fakeRun(kills: string[]) {
  const calls: Partial<RunRequest>[] = [];
  const run = async (_overlay: Record<string, string>, extra: Partial<RunRequest>): Promise<RunOutcome> => {
    calls.push(extra);
    const picked = extra.testPaths?.map((p) => `lmr_tests/${p}`);
    const ran = (id: string) => (picked ? picked.includes(id) : !(extra.deselect ?? []).includes(id));
    return outcome(kills.find(ran));
  };
  return { run, calls };
}

const plan = (tests?: string[]): MutantPlan => ({
  killers: [],
  mount: "lmr_tests",
  coverage: { "lmr_tests/t.py::a": { "f.py": [5] }, "lmr_tests/t.py::b": { "f.py": [5, 6] }, "lmr_tests/t.py::c": { "f.py": [9] } },
  ...(tests ? { tests } : {}),
});
const ALL = ["lmr_tests/t.py::a", "lmr_tests/t.py::b", "lmr_tests/t.py::c", "lmr_tests/t.py::d"];

describe("one mutant on the fast path", () => {
  it("is killed by a covering test in one run of the covering tests", async () => {
    const { run, calls } = fakeRun(["lmr_tests/t.py::b"]);
    const r = await runMutant("f.py", mutant, {}, plan(ALL), run);
    expect(r).toMatchObject({ fate: "killed", killer: "lmr_tests/t.py::b", runs: 1 });
    expect(calls[0]!.testPaths).toEqual(["t.py::a", "t.py::b"]);
  });

  it("a survivor of its covering tests runs the other tests only, and one of them may kill it", async () => {
    const { run, calls } = fakeRun(["lmr_tests/t.py::d"]);
    const r = await runMutant("f.py", mutant, {}, plan(ALL), run);
    expect(r).toMatchObject({ fate: "killed", killer: "lmr_tests/t.py::d", runs: 2 });
    expect(calls[1]!.deselect).toEqual(["lmr_tests/t.py::a", "lmr_tests/t.py::b"]);
    expect(calls[1]!.testPaths).toBeUndefined();
  });

  it("survives when the other tests pass too, or when there are no others", async () => {
    expect(await runMutant("f.py", mutant, {}, plan(ALL), fakeRun([]).run)).toMatchObject({ fate: "survived", runs: 2 });
    const only = fakeRun([]);
    expect(await runMutant("f.py", mutant, {}, plan(["lmr_tests/t.py::a", "lmr_tests/t.py::b"]), only.run)).toMatchObject({ fate: "survived", runs: 1 });
    expect(only.calls).toHaveLength(1);
  });

  it("without the reference's test list, confirms a survivor on the whole suite; a mutant no test reaches runs the whole suite once", async () => {
    const whole = fakeRun([]);
    expect(await runMutant("f.py", mutant, {}, plan(), whole.run)).toMatchObject({ fate: "survived", runs: 2 });
    expect(whole.calls[1]).toMatchObject({ stopAtFirstFailure: true });
    expect(whole.calls[1]!.deselect).toBeUndefined();
    const far = { ...mutant, lines: [20, 21] } as unknown as Mutant;
    const none = fakeRun([]);
    expect(await runMutant("f.py", far, {}, plan(ALL), none.run)).toMatchObject({ fate: "uncovered", runs: 1 });
    expect(none.calls[0]!.testPaths).toBeUndefined();
  });
});

import type { RunOutcome, TestStatus } from "../runner/types.js";

/** What N runs of the grader against the reference (or the stub) add up to. */
export interface RunsJudgement {
  ok: boolean;
  reason?: string;
  /** The toolkit could not run the tests (interpreter, sandbox): not the task's fault. */
  infra?: boolean;
  /** Tests whose outcome changed between runs. */
  flaky_tests?: string[];
  /** Stub only: tests that failed (inside the test) in every run. */
  failing_every_run?: string[];
}

/** Most test ids a record lists; the count is always exact. */
const MAX_IDS = 20;
const BAD: ReadonlySet<TestStatus> = new Set<TestStatus>(["failed", "error"]);

const cap = (ids: string[]): string[] => ids.slice(0, MAX_IDS);
const sample = (ids: string[]): string => ids.slice(0, 3).join(", ") + (ids.length > 3 ? ", …" : "");
const detail = (o: RunOutcome): string => `${o.status}${o.reason ? `: ${o.reason}` : ""}`;

/** The first failing test of a run and what its assertion said, for a reason line a person can act on. */
function firstFailure(o: RunOutcome): string {
  const t = o.tests.find((x) => BAD.has(x.status));
  if (!t) return "";
  const lines = (t.message ?? "").split("\n");
  const said = lines
    .filter((l) => /^E\s/.test(l))
    .map((l) => l.replace(/^E\s+/, "").trim())
    .filter(Boolean);
  const text = (
    said.length > 0
      ? said.slice(0, 3)
      : lines
          .map((l) => l.trim())
          .filter(Boolean)
          .slice(-2)
  ).join(" | ");
  const short = text.length > 400 ? `${text.slice(0, 399)}…` : text;
  return `; first failing test ${t.id}${short ? `: ${short}` : ""}`;
}

/** Tests seen both passing and failing (or erroring) across the runs. */
export function findFlakyTests(outcomes: RunOutcome[]): string[] {
  const seen = new Map<string, Set<"good" | "bad">>();
  for (const o of outcomes) {
    for (const t of o.tests) {
      if (t.status === "skipped") continue;
      const s = seen.get(t.id) ?? new Set();
      s.add(BAD.has(t.status) ? "bad" : "good");
      seen.set(t.id, s);
    }
  }
  return [...seen]
    .filter(([, s]) => s.size === 2)
    .map(([id]) => id)
    .sort();
}

function firstInfra(outcomes: RunOutcome[]): RunsJudgement | undefined {
  const i = outcomes.findIndex((o) => o.status === "infra");
  if (i < 0) return undefined;
  return { ok: false, infra: true, reason: `infra: run ${i + 1}/${outcomes.length} could not run the tests (${outcomes[i]!.reason ?? "no reason given"})` };
}

/**
 * The reference must pass every run. A reference that passes some runs, or whose
 * tests change outcome between runs, is flaky: said so, with how often it passed.
 */
export function judgeReference(outcomes: RunOutcome[]): RunsJudgement {
  const n = outcomes.length;
  const infra = firstInfra(outcomes);
  if (infra) return infra;
  const passed = outcomes.filter((o) => o.status === "passed").length;
  const flaky = findFlakyTests(outcomes);
  const flakyField = flaky.length > 0 ? { flaky_tests: cap(flaky) } : {};
  if (passed === n) return { ok: true };
  const firstBad = outcomes.findIndex((o) => o.status !== "passed");
  const where = `run ${firstBad + 1}: ${detail(outcomes[firstBad]!)}${firstFailure(outcomes[firstBad]!)}`;
  if (passed > 0 || flaky.length > 0) {
    const tests = flaky.length > 0 ? `; ${flaky.length} test(s) changed outcome between runs (${sample(flaky)})` : "";
    return { ok: false, reason: `flaky: passed ${passed}/${n} runs${tests}; ${where}`, ...flakyField };
  }
  return { ok: false, reason: `the reference fails in every run (passed 0/${n}); ${where}` };
}

/**
 * The stub must fail every run, inside a test (not at import or collection), and
 * at least one test must fail in every run: a check that only sometimes catches
 * the stub does not decide the task.
 */
export function judgeStub(outcomes: RunOutcome[]): RunsJudgement {
  const n = outcomes.length;
  const infra = firstInfra(outcomes);
  if (infra) return infra;
  const flaky = findFlakyTests(outcomes);
  const flakyField = flaky.length > 0 ? { flaky_tests: cap(flaky) } : {};
  const count = (s: RunOutcome["status"]): number => outcomes.filter((o) => o.status === s).length;
  const failingEveryRun = intersectFailing(outcomes);
  const failingField = failingEveryRun.length > 0 ? { failing_every_run: cap(failingEveryRun) } : {};

  if (count("passed") === n) {
    return { ok: false, reason: `the masked stub passes every test (passed ${n}/${n} runs): the tests do not check the target`, ...flakyField };
  }
  if (count("error") === n) {
    return {
      ok: false,
      reason: `the stub fails only at import/collection, never inside a test (${outcomes[0]!.reason ?? "collection error"}): grade the target from inside test functions`,
      ...flakyField,
    };
  }
  const failed = count("failed");
  if (failed < n) {
    const i = outcomes.findIndex((o) => o.status !== "failed");
    const o = outcomes[i]!;
    const why =
      o.status === "passed" ? "the stub passed every test" : o.status === "error" ? "the stub failed only at import/collection" : `the run ended ${detail(o)}`;
    return { ok: false, reason: `the stub failed inside a test in ${failed}/${n} runs; run ${i + 1}: ${why}`, ...flakyField, ...failingField };
  }
  if (failingEveryRun.length === 0) {
    return { ok: false, reason: `flaky: no test fails in every stub run (${flaky.length} test(s) changed outcome: ${sample(flaky)})`, ...flakyField };
  }
  return { ok: true, ...flakyField, ...failingField };
}

/** Ids that failed or errored as tests in every run. */
function intersectFailing(outcomes: RunOutcome[]): string[] {
  let common: Set<string> | undefined;
  for (const o of outcomes) {
    const bad = new Set(o.tests.filter((t) => BAD.has(t.status)).map((t) => t.id));
    common = common ? new Set([...common].filter((id) => bad.has(id))) : bad;
  }
  return [...(common ?? [])].sort();
}

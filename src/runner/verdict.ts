import { readJunitTotals, type ChannelState } from "./channel.js";
import type { RunStatus, TestCaseResult } from "./types.js";

/** What the parent observed about one finished (or killed) test process. */
export interface ProcessFacts {
  exitCode: number | null;
  signal: string | null;
  /** The process could not be started at all (spawn error). */
  spawnError?: string;
  wallTimeoutS?: number;
  /** The sandbox (a container) did not start the harness within this many seconds: ours, not the code's. */
  startTimeoutS?: number;
  /** A test outlived the per-test limit plus grace and the run was killed. */
  perTestKilled?: { id: string; limitS: number };
  /** Grader files whose content changed during the run. */
  graderModified: string[];
  /** The candidate (the process that serves the code under test) could not start: ours, not the code's. */
  candidateStartError?: string;
  /** Tail of stderr, to explain a process that never reached the harness. */
  stderrTail: string;
  /** The run asked pytest to stop at the first failure: the tests after it are not reported. */
  stopAtFirstFailure?: boolean;
}

export interface Verdict {
  status: RunStatus;
  tests: TestCaseResult[];
  counts: { passed: number; failed: number; errors: number; skipped: number };
  reason?: string;
}

/** pytest's exit codes: 0 ok, 1 tests failed, 2 interrupted, 3 internal error, 4 usage error, 5 no tests. */
const PYTEST_EXIT: Record<number, string> = {
  2: "pytest was interrupted (2)",
  3: "pytest hit an internal error (3)",
  4: "pytest rejected its arguments or a grader conftest failed to load (4)",
  5: "pytest collected no tests (5)",
};

function toTests(ch: ChannelState): TestCaseResult[] {
  return ch.results.map((r) => ({
    id: r.id,
    status: r.status,
    time_s: r.time_s,
    ...(r.message ? { message: r.message } : {}),
  }));
}

function countOf(tests: TestCaseResult[]): Verdict["counts"] {
  const c = { passed: 0, failed: 0, errors: 0, skipped: 0 };
  for (const t of tests) {
    if (t.status === "passed") c.passed++;
    else if (t.status === "failed") c.failed++;
    else if (t.status === "error") c.errors++;
    else c.skipped++;
  }
  return c;
}

/**
 * The one place that turns what came back into a status. Order matters: a
 * killed run is a timeout whatever it reported; a channel that is not fully
 * trustworthy is an error, never a pass.
 */
export function decideVerdict(ch: ChannelState, p: ProcessFacts): Verdict {
  const tests = toTests(ch);
  const counts = countOf(tests);
  const v = (status: RunStatus, reason?: string): Verdict => ({ status, tests, counts, ...(reason ? { reason } : {}) });
  const exitText = p.signal ? `signal ${p.signal}` : `exit code ${String(p.exitCode)}`;

  if (p.spawnError) return v("infra", p.spawnError);
  if (p.candidateStartError) return v("infra", p.candidateStartError);
  if (p.startTimeoutS !== undefined && !ch.hello) return v("infra", `the sandbox did not start the test process within ${p.startTimeoutS} s`);
  if (p.wallTimeoutS !== undefined) {
    const at = ch.running ? ` (while running ${ch.running})` : "";
    return v("timeout", `the run exceeded its wall limit of ${p.wallTimeoutS} s${at}; the process group was killed`);
  }
  if (p.perTestKilled) {
    return v("timeout", `test ${p.perTestKilled.id} ran past the per-test limit of ${p.perTestKilled.limitS} s and did not stop; the run was killed`);
  }
  if (!ch.hello) {
    const tail = p.stderrTail.trim().split("\n").slice(-5).join("\n");
    return v("infra", `the test process never started the lmr harness (${exitText})${tail ? `: ${tail}` : ""}`);
  }
  if (ch.infra) return v("infra", ch.infra);
  if (ch.problems.length > 0) return v("error", `results channel not trusted: ${ch.problems.join("; ")}`);
  if (p.graderModified.length > 0) {
    return v("error", `grader files were modified during the run: ${p.graderModified.slice(0, 5).join(", ")}`);
  }
  if (!ch.done) {
    const when = ch.running ? `while running ${ch.running}` : ch.collected ? "between tests" : "before collection finished";
    return v("error", `the test process ended (${exitText}) without reporting its results (${when})`);
  }
  if (p.signal || p.exitCode !== ch.done.exit) {
    return v("error", `the process ${exitText} disagrees with the exit status pytest reported (${ch.done.exit})`);
  }
  if (ch.done.tampered.length > 0) {
    return v("error", `pytest or the harness was tampered with during the run: ${ch.done.tampered.join("; ")}`);
  }
  if (ch.collectErrors.length > 0) {
    const first = ch.collectErrors[0]!;
    const lastLine = first.message.trim().split("\n").slice(-1)[0] ?? "";
    return v("error", `collection failed in ${ch.collectErrors.length} place(s), first ${first.id || "<root>"}: ${lastLine}`);
  }
  if ((ch.candidateImportErrors ?? []).length > 0) {
    // the code under test did not load in the candidate: an error of the run, as a collection error was
    const errors = ch.candidateImportErrors!;
    const first = errors[0]!;
    const lastLine = first.message.trim().split("\n")[0] ?? "";
    return v("error", `the code under test could not be imported (${errors.length} test(s)), first in ${first.id}: ${lastLine}`);
  }
  const exitProblem = PYTEST_EXIT[ch.done.exit];
  if (!ch.collected) return v("error", exitProblem ?? "pytest ended before announcing what it collected");
  if (ch.collected.length === 0) return v("error", "no tests were collected");
  const got = new Set(ch.results.map((r) => r.id));
  const stoppedEarly = p.stopAtFirstFailure === true && ch.results.some((r) => r.raw_failed) && ch.done.exit === 1;
  const missing = stoppedEarly ? [] : ch.collected.filter((id) => !got.has(id));
  const extra = [...got].filter((id) => !ch.collected!.includes(id));
  if (missing.length > 0 || extra.length > 0 || ch.done.n_results !== ch.results.length) {
    const what = missing.length > 0 ? `no result for ${missing.slice(0, 3).join(", ")}` : `unexpected results ${extra.slice(0, 3).join(", ")}`;
    return v("error", `${exitProblem ?? "results are incomplete"}: ${ch.results.length} of ${ch.collected.length} collected tests reported, ${what}`);
  }
  const rawFailed = ch.results.some((r) => r.raw_failed);
  if (ch.done.exit !== (rawFailed ? 1 : 0)) {
    return v("error", `pytest exit status ${ch.done.exit} disagrees with the reported results (${rawFailed ? "some" : "no"} failures)`);
  }
  const junit = ch.junit ? readJunitTotals(ch.junit) : undefined;
  if (junit && junit.failures + junit.errors > 0 !== rawFailed) {
    return v("error", `JUnit totals (${junit.failures} failures, ${junit.errors} errors) disagree with the reported results`);
  }
  if (counts.failed > 0 || counts.errors > 0) {
    const firstBad = tests.find((t) => t.status === "failed" || t.status === "error");
    return v("failed", `${counts.failed} failed, ${counts.errors} errors of ${tests.length}; first: ${firstBad?.id ?? "?"}`);
  }
  if (counts.passed === 0) return v("error", `no test passed (${counts.skipped} skipped)`);
  return v("passed");
}

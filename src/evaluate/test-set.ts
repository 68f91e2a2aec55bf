import type { RunOutcome } from "../runner/types.js";

/** The graded set a task's verification recorded: the reference's tests, and those it skipped. */
export interface VerifiedTests {
  tests: string[];
  skipped: string[];
}

const LISTED = 5;
const list = (ids: string[]): string => ids.slice(0, LISTED).join(", ") + (ids.length > LISTED ? `, … (${ids.length} in all)` : "");

/**
 * A completed run (passed or failed) graded over another set of tests than the verified one
 * becomes an error naming the difference: a test missing (not collected, deselected, skipped
 * at collection), one added, or one skipped that the reference ran. A verdict is never taken
 * over a smaller denominator. Runs that ended otherwise keep their verdict.
 */
export function enforceVerifiedTests(outcome: RunOutcome, verified: VerifiedTests | undefined): RunOutcome {
  if (!verified || (outcome.status !== "passed" && outcome.status !== "failed")) return outcome;
  const want = new Set(verified.tests);
  const mayskip = new Set(verified.skipped);
  const got = new Set(outcome.tests.map((t) => t.id));
  const missing = verified.tests.filter((id) => !got.has(id));
  const added = [...got].filter((id) => !want.has(id)).sort();
  const skipped = outcome.tests
    .filter((t) => t.status === "skipped" && !mayskip.has(t.id))
    .map((t) => t.id)
    .sort();
  if (missing.length + added.length + skipped.length === 0) return outcome;
  const parts = [
    missing.length > 0 ? `missing ${list(missing)}` : "",
    added.length > 0 ? `added ${list(added)}` : "",
    skipped.length > 0 ? `skipped ${list(skipped)}` : "",
  ].filter(Boolean);
  return { ...outcome, status: "error", reason: `the tests graded are not the verified set (${verified.tests.length} tests): ${parts.join("; ")}` };
}

export type SandboxChoice = "auto" | "bwrap" | "none";
export type BackendName = "bwrap" | "local";

export type TestStatus = "passed" | "failed" | "error" | "skipped";

export interface TestCaseResult {
  /** pytest node id-ish: `file::Class::test`. */
  id: string;
  status: TestStatus;
  time_s: number;
  message?: string;
}

/**
 * What one run of the grader tests against one tree produced.
 * `passed`: every test passed; `failed`: collected fine, at least one test failed;
 * `error`: collection/import error or no tests ran; `timeout`: wall limit hit;
 * `infra`: our side broke (missing interpreter/package, sandbox failure).
 */
export type RunStatus = "passed" | "failed" | "error" | "timeout" | "infra";

export interface RunOutcome {
  status: RunStatus;
  tests: TestCaseResult[];
  counts: { passed: number; failed: number; errors: number; skipped: number };
  exit_code: number | null;
  duration_s: number;
  backend: BackendName;
  python: { path: string; version: string };
  /** Combined stdout/stderr of the test process (truncated), for logs only; never used for the verdict. */
  log: string;
  /** Raw JUnit XML as written by pytest (outside the tree under test). */
  junit_xml?: string;
  /** Why, for infra/timeout/error. */
  reason?: string;
}

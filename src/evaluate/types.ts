import type { BackendName, Isolation, TestCaseResult } from "../runner/types.js";

/** The verdict of one sample of one task. `infra` is our fault, never the model's. */
export type Verdict = "passed" | "failed" | "error" | "timeout" | "invalid" | "infra";
export const VERDICTS: readonly Verdict[] = ["passed", "failed", "error", "timeout", "invalid", "infra"];

/**
 * RUN_DIR/results/<task_id>/<sample>/result.json — the contract between running and grading:
 * a run can be re-reported from these files alone.
 */
export interface SampleResult {
  task_id: string;
  /** Sample id within the task: "0", "1", ... */
  sample: string;
  model: string;
  category: string;
  /** sha256 of the submission content for this task+sample's target files. */
  submission_hash: string;
  /**
   * The resume key: the submission hash plus what else decides the verdict (the
   * bundle's workspace, grader and task hashes, sandbox choice, interpreter
   * choice, toolkit version). A rerun reuses a result only when it matches.
   */
  grading_key?: string;
  verdict: Verdict;
  reason?: string;
  counts: { passed: number; failed: number; errors: number; skipped: number };
  tests: TestCaseResult[];
  duration_s: number;
  backend: BackendName | "none";
  python?: { path: string; version: string };
  /** What the sandbox enforced for this sample. */
  isolation?: Isolation;
  finished_at: string;
  toolkit_version: string;
}

/** RUN_DIR/run.json: what was asked for. */
export interface RunConfig {
  run_id: string;
  created_at: string;
  toolkit_version: string;
  submissions: string;
  tasks: string[];
  samples: number;
  jobs: number;
  sandbox: string;
}

import type { InstructionLevel } from "../manifest/level.js";
import type { TaskSet } from "../manifest/types.js";
import type { BackendName, Isolation, TestCaseResult } from "../runner/types.js";
import type { TaskSetChoice } from "./task-set.js";

/** The verdict of one sample of one task. `infra` is our fault, never the model's. */
export type Verdict = "passed" | "failed" | "error" | "timeout" | "invalid" | "infra";
export const VERDICTS: readonly Verdict[] = ["passed", "failed", "error", "timeout", "invalid", "infra"];

/** What names one graded sample in a run: every row of a submission maps to exactly one. */
export interface SampleKey {
  task_id: string;
  model: string;
  /** Sample id within (task, model): "0", "1", ... or the id the submission gave. */
  sample: string;
}

/**
 * RUN_DIR/results/<model-folder>/<task_id>/<sample>/result.json — the contract
 * between running and grading: a run can be re-reported from these files alone.
 */
export interface SampleResult extends SampleKey {
  category: string;
  /** The task's set when it was graded; results written before sets existed have none (read as "core"). */
  set?: TaskSet;
  /** The instruction level the solver was given (the run's); results of older lmr have none. */
  level?: InstructionLevel;
  /** sha256 of the submission content for this sample's target files ("none" without a submission). */
  submission_hash: string;
  /**
   * The resume key (see computeGradingKey): a rerun reuses a result only when
   * it matches.
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

/** One model of a run: its name, its folder under results/, the samples per task it was asked for. */
export interface RunModel {
  model: string;
  dir: string;
  /** The most samples it has for any task. */
  samples: number;
  /** Samples per task, where they differ by task (absent when every task has `samples`). */
  task_samples?: Record<string, number>;
}

/** RUN_DIR/run.json: what was asked for. */
export interface RunConfig {
  run_id: string;
  created_at: string;
  toolkit_version: string;
  /** Layout of results/ (RUN_LAYOUT); absent in run folders of lmr before models had folders. */
  layout: number;
  submissions: string;
  /** The task set the run selected. */
  set: TaskSetChoice;
  /** The instruction level the submissions were made at (one per run folder; absent in run folders of older lmr). */
  level?: InstructionLevel;
  tasks: string[];
  task_sets: Record<string, TaskSet>;
  models: RunModel[];
  /** The most samples per task any model has (what older readers take as samples per task). */
  samples: number;
  jobs: number;
  sandbox: string;
  /** Present when this folder holds one part of a run (`lmr eval --shard I/N`); `lmr report A B …` merges the parts. */
  shard?: RunShard;
}

/** One part of a run cut into `count` by a hash of each (task, model, sample); `plan` names the whole run's triples. */
export interface RunShard {
  index: number;
  count: number;
  plan: string;
}

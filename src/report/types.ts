import type { TaskSet } from "../manifest/types.js";
import type { TaskSetChoice, Verdict } from "../run-folder/index.js";

export type VerdictCounts = Record<Verdict, number>;

/** Unbiased pass@k of one task (Chen et al. 2021) for one k. */
export interface PassAtK {
  k: number;
  value: number;
}

/** pass@k averaged over the scored tasks; `tasks` says how many were averaged. */
export interface OverallPassAtK extends PassAtK {
  tasks: number;
}

/** A problem found while reading the run folder; `file` is relative to the run folder. */
export interface SummaryProblem {
  file?: string;
  pointer?: string;
  message: string;
  hint?: string;
}

export interface SampleSummary {
  sample: string;
  verdict: Verdict;
  reason?: string;
  duration_s: number;
  counts: { passed: number; failed: number; errors: number; skipped: number };
  /** Ids of grader tests that failed or errored, in the order the result lists them. */
  failing_tests: string[];
  backend: string;
}

/** One task as one model did on it. */
export interface TaskSummary {
  task_id: string;
  category: string;
  set: TaskSet;
  /** Samples with a readable result.json. */
  samples: number;
  /** Samples that count for pass@k: every verdict except `infra`, which is our fault, not the model's. */
  graded: number;
  passed: number;
  verdicts: VerdictCounts;
  /** k = 1..graded; empty when nothing was graded. */
  pass_at_k: PassAtK[];
  pass_at_1: number | null;
  mean_duration_s: number;
  results: SampleSummary[];
}

/** Tasks of one category or one set, for one model. */
export interface GroupSummary {
  tasks: number;
  /** Tasks with at least one graded sample; only these enter pass_rate. */
  scored_tasks: number;
  samples: number;
  passed: number;
  /** Mean over scored tasks of per-task pass@1; null when no task was scored. */
  pass_rate: number | null;
  verdicts: VerdictCounts;
}

export interface CategorySummary extends GroupSummary {
  category: string;
}

export interface SetSummary extends GroupSummary {
  set: TaskSet;
}

export interface Totals {
  tasks: number;
  scored_tasks: number;
  samples: number;
  graded: number;
  passed: number;
  verdicts: VerdictCounts;
}

/** Everything about one model: its own pass@k, never pooled with another model's samples. */
export interface ModelSummary {
  model: string;
  /** Its folder under results/ (absent for run folders of layout 1). */
  dir?: string;
  /** Samples per task run.json declares for this model. */
  samples_per_task?: number;
  totals: Totals;
  /** Mean over scored tasks of per-task pass@1; null when no task was scored. */
  pass_at_1: number | null;
  /** For each k that every scored task has at least k graded samples for. */
  pass_at_k: OverallPassAtK[];
  categories: CategorySummary[];
  sets: SetSummary[];
  tasks: TaskSummary[];
}

export interface RunInfo {
  run_id: string;
  created_at?: string;
  toolkit_version?: string;
  submissions?: string;
  /** The task set `lmr eval` selected. */
  set?: TaskSetChoice;
  /** The most samples per task any model was asked for. */
  samples_per_task?: number;
  jobs?: number;
  sandbox?: string;
}

export interface Summary {
  schema_version: 2;
  generated_at: string;
  generator: { name: "lmr"; version: string };
  run: RunInfo;
  /** Present when the summary covers only the tasks of one set (`lmr report --set`). */
  set_filter?: TaskSet;
  /** Counts over every model; rates are per model only. */
  totals: Omit<Totals, "scored_tasks"> & { models: number };
  models: ModelSummary[];
  problems: SummaryProblem[];
}

export type ReportFormat = "md" | "html" | "junit" | "json";
export const REPORT_FORMATS: readonly ReportFormat[] = ["md", "html", "junit", "json"];

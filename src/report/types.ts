import type { Verdict } from "../evaluate/types.js";

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
  model: string;
  verdict: Verdict;
  reason?: string;
  duration_s: number;
  counts: { passed: number; failed: number; errors: number; skipped: number };
  /** Ids of grader tests that failed or errored, in the order the result lists them. */
  failing_tests: string[];
  backend: string;
}

export interface TaskSummary {
  task_id: string;
  category: string;
  models: string[];
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

export interface CategorySummary {
  category: string;
  tasks: number;
  /** Tasks with at least one graded sample; only these enter pass_rate. */
  scored_tasks: number;
  samples: number;
  passed: number;
  /** Mean over scored tasks of per-task pass@1; null when no task was scored. */
  pass_rate: number | null;
  verdicts: VerdictCounts;
}

export interface RunInfo {
  run_id: string;
  created_at?: string;
  toolkit_version?: string;
  submissions?: string;
  samples_per_task?: number;
  jobs?: number;
  sandbox?: string;
}

export interface Summary {
  schema_version: 1;
  generated_at: string;
  generator: { name: "lmr"; version: string };
  run: RunInfo;
  totals: {
    tasks: number;
    scored_tasks: number;
    samples: number;
    graded: number;
    passed: number;
    verdicts: VerdictCounts;
  };
  /** Mean over scored tasks of per-task pass@1; null when no task was scored. */
  pass_at_1: number | null;
  /** For each k that every scored task has at least k graded samples for. */
  pass_at_k: OverallPassAtK[];
  categories: CategorySummary[];
  tasks: TaskSummary[];
  problems: SummaryProblem[];
}

export type ReportFormat = "md" | "html" | "junit" | "json";
export const REPORT_FORMATS: readonly ReportFormat[] = ["md", "html", "junit", "json"];

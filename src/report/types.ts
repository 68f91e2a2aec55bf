import type { InstructionLevel } from "../manifest/level.js";
import type { TaskSet } from "../manifest/types.js";
import type { JudgeClass, SampleJudgement, TaskSetChoice, Verdict } from "../run-folder/index.js";
import type { Agreement, BootstrapInterval } from "./stats.js";

export type VerdictCounts = Record<Verdict, number>;

/** Unbiased pass@k of one task (Chen et al. 2021) for one k. */
interface PassAtK {
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
  /** lmr judge's verdict, when the sample has a current judge.json. */
  judge?: SampleJudgeSummary;
}

export type JudgeClassCounts = Record<JudgeClass, number>;

export interface SampleJudgeSummary {
  judge_model: string;
  status: SampleJudgement["status"];
  majority: JudgeClass | null;
  agreement: number | null;
  votes: number;
  /** The rationale of the first vote for the majority class. */
  rationale?: string;
}

/** The judge over a group of samples (a task, a category, a model): majority classes and their mean agreement. */
export interface JudgeGroupSummary {
  /** Samples with a judge.json of status judged. */
  judged: number;
  no_code: number;
  infra: number;
  /** Graded samples with no judge.json. */
  unjudged: number;
  classes: JudgeClassCounts;
  mean_agreement: number | null;
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
  judge?: JudgeGroupSummary;
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
  /** Seeded percentile bootstrap over the category's scored tasks of the mean pass@1. */
  pass_at_1_ci?: BootstrapInterval | null;
  /** For each k every scored task of the category reaches. */
  pass_at_k?: OverallPassAtK[];
  judge?: JudgeGroupSummary;
}

interface SetSummary extends GroupSummary {
  set: TaskSet;
}

interface Totals {
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
  /** The level its samples were made at, when the report holds more than one (else run.level): a model run at both levels is two entries, never pooled. */
  level?: InstructionLevel;
  /** Its folder under results/ (absent for run folders of layout 1). */
  dir?: string;
  /** Samples per task run.json declares for this model. */
  samples_per_task?: number;
  totals: Totals;
  /** Mean over scored tasks of per-task pass@1; null when no task was scored. */
  pass_at_1: number | null;
  /** For each k that every scored task has at least k graded samples for. */
  pass_at_k: OverallPassAtK[];
  /** Seeded percentile bootstrap over scored tasks of the mean pass@1 (95 %). */
  pass_at_1_ci?: BootstrapInterval | null;
  /** The judge, when some sample has a judge.json: classes, and how they agree with the tests. */
  judge?: ModelJudgeSummary;
  /** Tokens (and cost, when priced) of the model's generation and of judging it. */
  usage?: ModelUsage;
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
  /** The instruction level of the run (of every merged run, when they agree). */
  level?: InstructionLevel;
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

export interface ModelJudgeSummary extends JudgeGroupSummary {
  judge_models: string[];
  /** Judged, non-infra samples: tests pass vs the judge's fully-correct, with Cohen's kappa. */
  tests_vs_judge: Agreement;
}

export interface ModelUsage {
  generation?: { prompt_tokens: number; completion_tokens: number; cost_usd?: number; source: string };
  judge?: { prompt_tokens: number; completion_tokens: number; cost_usd?: number };
}

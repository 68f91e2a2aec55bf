import type { InstructionLevel } from "../manifest/level.js";
import { modelLabel } from "./format.js";
import type { CategorySummary, JudgeGroupSummary, ModelSummary, OverallPassAtK, Summary } from "./types.js";
import type { BootstrapInterval } from "./stats.js";

/** One row of the model × category table: a model over one category, or over all its tasks (`category` null). */
export interface ComparisonRow {
  model: string;
  category: string | null;
  tasks: number;
  scored_tasks: number;
  pass_at_1: number | null;
  pass_at_1_ci: BootstrapInterval | null;
  pass_at_k: OverallPassAtK[];
  judge?: JudgeGroupSummary;
}

/** The rows of the comparison, from the summary's numbers alone (Markdown and HTML print the same ones JSON holds). */
export function comparisonRows(summary: Summary): ComparisonRow[] {
  return summary.models.flatMap((m) => [overall(m), ...m.categories.map((c) => category(m, c))]);
}

function overall(m: ModelSummary): ComparisonRow {
  return {
    model: modelLabel(m),
    category: null,
    tasks: m.totals.tasks,
    scored_tasks: m.totals.scored_tasks,
    pass_at_1: m.pass_at_1,
    pass_at_1_ci: m.pass_at_1_ci ?? null,
    pass_at_k: m.pass_at_k,
    ...(m.judge ? { judge: m.judge } : {}),
  };
}

function category(m: ModelSummary, c: CategorySummary): ComparisonRow {
  return {
    model: modelLabel(m),
    category: c.category,
    tasks: c.tasks,
    scored_tasks: c.scored_tasks,
    pass_at_1: c.pass_rate,
    pass_at_1_ci: c.pass_at_1_ci ?? null,
    pass_at_k: c.pass_at_k ?? [],
    ...(c.judge ? { judge: c.judge } : {}),
  };
}

/** Whether any model was judged (the judge columns and the agreement table appear only then). */
export function isJudged(summary: Summary): boolean {
  return summary.models.some((m) => m.judge !== undefined);
}

/** Whether any model has token counts. */
export function hasUsage(summary: Summary): boolean {
  return summary.models.some((m) => m.usage !== undefined);
}

/** One model's pass@1 at each instruction level it was run at (only when the summary has more than one level). */
export interface LevelRow {
  model: string;
  levels: Partial<Record<InstructionLevel, { pass_at_1: number | null; scored_tasks: number; tasks: number }>>;
}

/** The levels table: one row per model name, its levels side by side; empty when the runs have one level. */
export function levelRows(summary: Summary): LevelRow[] {
  const levels = new Set(summary.models.map((m) => m.level).filter((l) => l !== undefined));
  if (levels.size < 2) return [];
  const rows = new Map<string, LevelRow>();
  for (const m of summary.models) {
    if (m.level === undefined) continue;
    const row = rows.get(m.model) ?? { model: m.model, levels: {} };
    row.levels[m.level] = { pass_at_1: m.pass_at_1, scored_tasks: m.totals.scored_tasks, tasks: m.totals.tasks };
    rows.set(m.model, row);
  }
  return [...rows.values()];
}

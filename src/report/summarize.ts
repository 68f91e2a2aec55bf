import { TOOLKIT_VERSION } from "../core/toolkit-identity.js";
import { join } from "node:path";
import { groupBy } from "../core/collections.js";
import { LmrError } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import type { TaskSet } from "../manifest/types.js";
import { SUMMARY_FILE, VERDICTS, compareIds, isInSet, nameModelFolder, type SampleJudgement, type SampleResult, type Verdict } from "../run-folder/index.js";
import { checkCoverage } from "./coverage.js";
import { computePassAtK, computePassAtKs } from "./pass-at-k.js";
import { summarizeJudgeGroup, summarizeJudgement, summarizeModelJudge } from "./judge-summary.js";
import { loadRun, modelKey, sampleId, type LoadedRun } from "./read-run.js";
import { INSTRUCTION_LEVELS, type InstructionLevel } from "../manifest/level.js";
import { bootstrapMeanInterval } from "./stats.js";
import type {
  CategorySummary,
  GroupSummary,
  ModelSummary,
  ModelUsage,
  OverallPassAtK,
  SampleSummary,
  Summary,
  SummaryProblem,
  TaskSummary,
  VerdictCounts,
} from "./types.js";
import { validateSummary } from "./validate-summary.js";

export interface SummaryOptions {
  now?: Date;
  /** Summarise only the tasks of this set. */
  set?: TaskSet;
}

/** Read a run folder and summarise it. Broken results become `problems`; only a non-run folder throws. */
export async function summarizeRun(runDir: string, options: SummaryOptions = {}): Promise<Summary> {
  return buildSummary(await loadRun(runDir), options);
}

/** Summarise the whole run, check the summary against its schema and write RUN_DIR/summary.json atomically. */
export async function writeSummary(runDir: string, options: { now?: Date } = {}): Promise<Summary> {
  const summary = await summarizeRun(runDir, options);
  const check = await validateSummary(summary);
  if (!check.ok) {
    throw new LmrError({
      code: "report/summary-invalid",
      message: `the summary does not match schema/summary.schema.json: ${check.problems.map((p) => `${p.pointer || "/"} ${p.message}`).join("; ")}`,
      file: join(runDir, SUMMARY_FILE),
      hint: "this is a bug in lmr; please report it with the run folder",
    });
  }
  const file = join(runDir, SUMMARY_FILE);
  try {
    await writeJsonAtomic(file, summary);
  } catch (err) {
    throw new LmrError({
      code: "report/write-failed",
      message: `cannot write the summary: ${(err as Error).message}`,
      file,
      hint: "check that the run folder is writable",
      cause: err,
    });
  }
  return summary;
}

/** Pure: the summary of what was loaded, one section per model. */
export function buildSummary(loaded: LoadedRun, options: SummaryOptions = {}): Summary {
  const run = options.set === undefined ? loaded : filterBySet(loaded, options.set);
  const problems: SummaryProblem[] = [...run.problems];
  const setOf = (r: SampleResult): TaskSet => r.set ?? run.task_sets[r.task_id] ?? "core";
  const facts = readTaskFacts(run.results, setOf, run.layout, problems);
  // a model at two levels is two entries: their samples are never pooled
  const byModel = groupBy(run.results, (r) => modelKey(r));
  const who = new Map<string, { model: string; level?: InstructionLevel }>();
  for (const m of [...run.models, ...run.results]) who.set(modelKey(m), { model: m.model, ...(m.level ? { level: m.level } : {}) });
  const keys = [...who.keys()].sort(
    (a, b) => compareIds(who.get(a)!.model, who.get(b)!.model) || levelOrder(who.get(a)!.level) - levelOrder(who.get(b)!.level),
  );
  const models = keys.map((k) => summarizeModel(who.get(k)!, byModel.get(k) ?? [], run, facts, problems));
  checkCoverage(run, models, problems);
  // one level (the usual run): it is run.level, and model names stay as the submissions gave them
  if (new Set(models.map((m) => m.level)).size <= 1) for (const m of models) delete m.level;
  const verdicts = sumVerdicts(models.map((m) => m.totals.verdicts));
  return {
    schema_version: 2,
    generated_at: (options.now ?? new Date()).toISOString(),
    generator: { name: "lmr", version: TOOLKIT_VERSION },
    run: run.run,
    ...(options.set === undefined ? {} : { set_filter: options.set }),
    totals: {
      models: models.length,
      tasks: new Set(run.results.map((r) => r.task_id)).size,
      samples: run.results.length,
      graded: sum(models.map((m) => m.totals.graded)),
      passed: verdicts.passed,
      verdicts,
    },
    models,
    problems,
  };
}

/** Only the results and requested tasks of one set; tasks run.json gives no set for are read as "core". */
function filterBySet(loaded: LoadedRun, set: TaskSet): LoadedRun {
  return {
    ...loaded,
    requested_tasks: loaded.requested_tasks.filter((id) => isInSet(loaded.task_sets[id], set)),
    results: loaded.results.filter((r) => isInSet(r.set ?? loaded.task_sets[r.task_id], set)),
  };
}

function levelOrder(level: InstructionLevel | undefined): number {
  return level === undefined ? -1 : INSTRUCTION_LEVELS.indexOf(level);
}

function summarizeModel(
  who: { model: string; level?: InstructionLevel },
  results: SampleResult[],
  run: LoadedRun,
  facts: Map<string, TaskFacts>,
  problems: SummaryProblem[],
): ModelSummary {
  const { model, level } = who;
  const declared = run.models.find((m) => modelKey(m) === modelKey(who));
  const dir = run.layout === 1 ? undefined : (declared?.dir ?? nameModelFolder(model));
  const byTask = groupBy(results, (r) => r.task_id);
  const tasks = [...byTask.keys()]
    .sort(compareIds)
    .map((id) =>
      summarizeTask(id, byTask.get(id)!, facts.get(id)!, `${dir === undefined ? "results" : `results/${dir}`}/${id}`, problems, run.judgements ?? {}),
    );
  const scored = tasks.filter((t) => t.pass_at_1 !== null);
  const verdicts = sumVerdicts(tasks.map((t) => t.verdicts));
  const samplesPerTask = declared?.samples ?? run.run.samples_per_task;
  const judge = summarizeModelJudge(tasks);
  const usage = summarizeUsage(who, results, run);
  return {
    model,
    ...(level ? { level } : {}),
    ...(dir === undefined ? {} : { dir }),
    ...(samplesPerTask === undefined ? {} : { samples_per_task: samplesPerTask }),
    totals: {
      tasks: tasks.length,
      scored_tasks: scored.length,
      samples: sum(tasks.map((t) => t.samples)),
      graded: sum(tasks.map((t) => t.graded)),
      passed: verdicts.passed,
      verdicts,
    },
    pass_at_1: mean(scored.map((t) => t.pass_at_1 ?? 0)),
    pass_at_k: averagePassAtK(scored),
    pass_at_1_ci: bootstrapMeanInterval(scored.map((t) => t.pass_at_1 ?? 0)),
    ...(judge ? { judge } : {}),
    ...(usage ? { usage } : {}),
    categories: summarizeCategories(tasks),
    sets: summarizeGroups(tasks, (t) => t.set).map(([set, g]) => ({ set: set as TaskSet, ...g })),
    tasks,
  };
}

/** Categories with their bootstrap interval, pass@k and judge classes: the rows of the model × category table. */
function summarizeCategories(tasks: TaskSummary[]): CategorySummary[] {
  return summarizeGroups(tasks, (t) => t.category).map(([category, g]) => {
    const inCategory = tasks.filter((t) => t.category === category);
    const scored = inCategory.filter((t) => t.pass_at_1 !== null);
    const judge = summarizeJudgeGroup(inCategory.flatMap((t) => t.results));
    return {
      category,
      ...g,
      pass_at_1_ci: bootstrapMeanInterval(scored.map((t) => t.pass_at_1 ?? 0)),
      pass_at_k: averagePassAtK(scored),
      ...(judge ? { judge } : {}),
    };
  });
}

/** The generation's tokens (generate.json) and the judge's (its judge.json files), when there are any. */
function summarizeUsage(who: { model: string; level?: InstructionLevel }, results: SampleResult[], run: LoadedRun): ModelUsage | undefined {
  const generation = run.generation?.[modelKey(who)];
  const judged = results.flatMap((r) => {
    const j = run.judgements?.[sampleId(r)];
    return j ? [j] : [];
  });
  // samples with the same code share their requests: each judge.json counts only the tries it made
  const tokens = judged.reduce(
    (a, j) => ({ prompt_tokens: a.prompt_tokens + j.usage.prompt_tokens, completion_tokens: a.completion_tokens + j.usage.completion_tokens }),
    { prompt_tokens: 0, completion_tokens: 0 },
  );
  // a cost only when every judgement was priced: a partial sum would read as the whole
  const priced = judged.length > 0 && judged.every((j) => j.usage.cost_usd !== undefined);
  const judge =
    judged.length === 0 ? undefined : { ...tokens, ...(priced ? { cost_usd: Math.round(judged.reduce((a, j) => a + j.usage.cost_usd!, 0) * 1e6) / 1e6 } : {}) };
  if (!generation && !judge) return undefined;
  return { ...(generation ? { generation } : {}), ...(judge ? { judge } : {}) };
}

function summarizeTask(
  taskId: string,
  results: SampleResult[],
  facts: TaskFacts,
  folder: string,
  problems: SummaryProblem[],
  judgements: NonNullable<LoadedRun["judgements"]>,
): TaskSummary {
  const sorted = [...results].sort((a, b) => compareIds(a.sample, b.sample));
  const verdicts = countVerdicts(sorted.map((r) => r.verdict));
  const graded = sorted.length - verdicts.infra;
  const passed = verdicts.passed;
  const passAtK = graded > 0 ? computePassAtKs(graded, passed) : [];
  if (graded === 0) {
    problems.push({
      file: folder,
      message: "no graded sample (every result is infra or unreadable); the task is left out of pass@k",
      hint: "fix the infrastructure problem and re-run `lmr eval` on this run folder",
    });
  }
  const samples = sorted.map((r) => summarizeSample(r, judgements[sampleId(r)]));
  const judge = summarizeJudgeGroup(samples);
  return {
    task_id: taskId,
    category: facts.category,
    set: facts.set,
    samples: sorted.length,
    graded,
    passed,
    verdicts,
    pass_at_k: passAtK,
    pass_at_1: passAtK[0]?.value ?? null,
    mean_duration_s: mean(sorted.map((r) => r.duration_s)) ?? 0,
    results: samples,
    ...(judge ? { judge } : {}),
  };
}

/** What a task is, whatever model graded it. */
interface TaskFacts {
  category: string;
  set: TaskSet;
}

/**
 * A task has one category and one set: results that disagree are reported
 * once per task, and every model's row uses the first result's value
 * (results ordered by model, then sample).
 */
function readTaskFacts(results: SampleResult[], setOf: (r: SampleResult) => TaskSet, layout: number, problems: SummaryProblem[]): Map<string, TaskFacts> {
  const facts = new Map<string, TaskFacts>();
  const byTask = groupBy(results, (r) => r.task_id);
  for (const [id, list] of [...byTask].sort(([a], [b]) => compareIds(a, b))) {
    const sorted = [...list].sort((a, b) => compareIds(a.model, b.model) || compareIds(a.sample, b.sample));
    const file = layout === 1 ? `results/${id}` : `results/*/${id}`;
    for (const [what, values] of [
      ["category", unique(sorted.map((r) => r.category))],
      ["set", unique(sorted.map(setOf))],
    ] as const) {
      if (values.length > 1)
        problems.push({
          file,
          message: `samples disagree on the ${what} (${values.join(", ")}); using ${JSON.stringify(values[0])}`,
          hint: `a task has one ${what}: check the task manifests the run used`,
        });
    }
    facts.set(id, { category: sorted[0]!.category, set: setOf(sorted[0]!) });
  }
  return facts;
}

function summarizeSample(r: SampleResult, judgement: SampleJudgement | undefined): SampleSummary {
  const out: SampleSummary = {
    sample: r.sample,
    verdict: r.verdict,
    duration_s: r.duration_s,
    counts: { passed: r.counts.passed, failed: r.counts.failed, errors: r.counts.errors, skipped: r.counts.skipped },
    failing_tests: r.tests.filter((t) => t.status === "failed" || t.status === "error").map((t) => t.id),
    backend: r.backend,
  };
  if (r.reason !== undefined && r.reason !== "") out.reason = r.reason;
  if (judgement) out.judge = summarizeJudgement(judgement);
  return out;
}

/** pass@k for each k every scored task reaches, averaged over those tasks. */
function averagePassAtK(scored: TaskSummary[]): OverallPassAtK[] {
  if (scored.length === 0) return [];
  const maxK = Math.min(...scored.map((t) => t.graded));
  const out: OverallPassAtK[] = [];
  for (let k = 1; k <= maxK; k++) {
    const values = scored.map((t) => computePassAtK(t.graded, t.passed, k));
    out.push({ k, value: mean(values) ?? 0, tasks: scored.length });
  }
  return out;
}

function summarizeGroups(tasks: TaskSummary[], key: (t: TaskSummary) => string): [string, GroupSummary][] {
  const names = unique(tasks.map(key)).sort((a, b) => a.localeCompare(b, "en"));
  return names.map((name) => {
    const inGroup = tasks.filter((t) => key(t) === name);
    const scored = inGroup.filter((t) => t.pass_at_1 !== null);
    return [
      name,
      {
        tasks: inGroup.length,
        scored_tasks: scored.length,
        samples: sum(inGroup.map((t) => t.samples)),
        passed: sum(inGroup.map((t) => t.passed)),
        pass_rate: mean(scored.map((t) => t.pass_at_1 ?? 0)),
        verdicts: sumVerdicts(inGroup.map((t) => t.verdicts)),
      },
    ];
  });
}

function emptyVerdictCounts(): VerdictCounts {
  return Object.fromEntries(VERDICTS.map((v) => [v, 0])) as VerdictCounts;
}

function countVerdicts(list: Verdict[]): VerdictCounts {
  const counts = emptyVerdictCounts();
  for (const v of list) counts[v] += 1;
  return counts;
}

function sumVerdicts(list: VerdictCounts[]): VerdictCounts {
  const counts = emptyVerdictCounts();
  for (const c of list) for (const v of VERDICTS) counts[v] += c[v];
  return counts;
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function mean(xs: number[]): number | null {
  return xs.length === 0 ? null : sum(xs) / xs.length;
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

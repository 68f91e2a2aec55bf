import { createRequire } from "node:module";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { VERDICTS, type SampleResult, type Verdict } from "../evaluate/types.js";
import { computePassAtK, computePassAtKs } from "./pass-at-k.js";
import { compareIds, loadRun, type LoadedRun } from "./read-run.js";
import type { CategorySummary, OverallPassAtK, SampleSummary, Summary, SummaryProblem, TaskSummary, VerdictCounts } from "./types.js";
import { validateSummary } from "./validate-summary.js";

const require = createRequire(import.meta.url);
const { version: TOOLKIT_VERSION } = require("../../package.json") as { version: string };

export const SUMMARY_FILE = "summary.json";

/** Read a run folder and summarise it. Broken results become `problems`; only a non-run folder throws. */
export async function summarizeRun(runDir: string, options: { now?: Date } = {}): Promise<Summary> {
  return buildSummary(await loadRun(runDir), options);
}

/** Summarise, check the summary against its schema and write RUN_DIR/summary.json atomically. */
export async function writeSummary(runDir: string, options: { now?: Date } = {}): Promise<Summary> {
  const summary = await summarizeRun(runDir, options);
  const check = await validateSummary(summary);
  if (!check.ok) {
    throw new LmrError({
      code: "report.summary-invalid",
      kind: "infra",
      message: `the summary does not match schema/summary.schema.json: ${check.problems.map((p) => `${p.pointer || "/"} ${p.message}`).join("; ")}`,
      file: join(runDir, SUMMARY_FILE),
      hint: "this is a bug in lmr; please report it with the run folder",
    });
  }
  const file = join(runDir, SUMMARY_FILE);
  try {
    await writeJsonAtomic(file, summary);
  } catch (err) {
    throw new LmrError({ code: "report.write-failed", kind: "infra", message: `cannot write the summary: ${(err as Error).message}`, file, hint: "check that the run folder is writable", cause: err });
  }
  return summary;
}

/** Pure: the summary of what was loaded. */
export function buildSummary(loaded: LoadedRun, options: { now?: Date } = {}): Summary {
  const problems: SummaryProblem[] = [...loaded.problems];
  const byTask = new Map<string, SampleResult[]>();
  for (const r of loaded.results) {
    const list = byTask.get(r.task_id) ?? [];
    list.push(r);
    byTask.set(r.task_id, list);
  }
  const tasks = [...byTask.keys()].sort(compareIds).map((id) => summarizeTask(id, byTask.get(id) ?? [], problems));
  checkCoverage(loaded, tasks, problems);

  const scored = tasks.filter((t) => t.pass_at_1 !== null);
  const verdicts = sumVerdicts(tasks.map((t) => t.verdicts));
  return {
    schema_version: 1,
    generated_at: (options.now ?? new Date()).toISOString(),
    generator: { name: "lmr", version: TOOLKIT_VERSION },
    run: loaded.run,
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
    categories: summarizeCategories(tasks),
    tasks,
    problems,
  };
}

function summarizeTask(taskId: string, results: SampleResult[], problems: SummaryProblem[]): TaskSummary {
  const sorted = [...results].sort((a, b) => compareIds(a.sample, b.sample));
  const categories = unique(sorted.map((r) => r.category));
  if (categories.length > 1) {
    problems.push({
      file: `results/${taskId}`,
      message: `samples disagree on the category (${categories.join(", ")}); using ${JSON.stringify(categories[0])}`,
      hint: "a task has one category: check the task manifests the run used",
    });
  }
  const verdicts = countVerdicts(sorted.map((r) => r.verdict));
  const graded = sorted.length - verdicts.infra;
  const passed = verdicts.passed;
  const passAtK = graded > 0 ? computePassAtKs(graded, passed) : [];
  if (graded === 0) {
    problems.push({
      file: `results/${taskId}`,
      message: "no graded sample (every result is infra or unreadable); the task is left out of pass@k",
      hint: "fix the infrastructure problem and re-run `lmr eval` on this run folder",
    });
  }
  return {
    task_id: taskId,
    category: categories[0] ?? "",
    models: unique(sorted.map((r) => r.model)).sort(),
    samples: sorted.length,
    graded,
    passed,
    verdicts,
    pass_at_k: passAtK,
    pass_at_1: passAtK[0]?.value ?? null,
    mean_duration_s: mean(sorted.map((r) => r.duration_s)) ?? 0,
    results: sorted.map(summarizeSample),
  };
}

function summarizeSample(r: SampleResult): SampleSummary {
  const out: SampleSummary = {
    sample: r.sample,
    model: r.model,
    verdict: r.verdict,
    duration_s: r.duration_s,
    counts: { passed: r.counts.passed, failed: r.counts.failed, errors: r.counts.errors, skipped: r.counts.skipped },
    failing_tests: r.tests.filter((t) => t.status === "failed" || t.status === "error").map((t) => t.id),
    backend: r.backend,
  };
  if (r.reason !== undefined && r.reason !== "") out.reason = r.reason;
  return out;
}

/** Tasks run.json asked for without results, and tasks with fewer samples than asked. */
function checkCoverage(loaded: LoadedRun, tasks: TaskSummary[], problems: SummaryProblem[]): void {
  const found = new Set(tasks.map((t) => t.task_id));
  for (const id of loaded.requested_tasks) {
    if (!found.has(id)) problems.push({ file: `results/${id}`, message: "run.json lists this task but no readable result exists; it is left out", hint: "re-run `lmr eval` on this run folder" });
  }
  const requested = new Set(loaded.requested_tasks);
  const asked = loaded.run.samples_per_task;
  for (const t of tasks) {
    if (loaded.requested_tasks.length > 0 && !requested.has(t.task_id)) {
      problems.push({ file: `results/${t.task_id}`, message: "this task has results but run.json does not list it" });
    }
    if (asked !== undefined && t.samples < asked) {
      problems.push({ file: `results/${t.task_id}`, message: `${t.samples} of ${asked} samples have a readable result.json` });
    }
  }
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

function summarizeCategories(tasks: TaskSummary[]): CategorySummary[] {
  const names = unique(tasks.map((t) => t.category)).sort((a, b) => a.localeCompare(b, "en"));
  return names.map((category) => {
    const inCat = tasks.filter((t) => t.category === category);
    const scored = inCat.filter((t) => t.pass_at_1 !== null);
    return {
      category,
      tasks: inCat.length,
      scored_tasks: scored.length,
      samples: sum(inCat.map((t) => t.samples)),
      passed: sum(inCat.map((t) => t.passed)),
      pass_rate: mean(scored.map((t) => t.pass_at_1 ?? 0)),
      verdicts: sumVerdicts(inCat.map((t) => t.verdicts)),
    };
  });
}

export function emptyVerdictCounts(): VerdictCounts {
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

import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { INSTRUCTION_LEVELS, isInstructionLevel, type InstructionLevel } from "../manifest/level.js";
import type { TaskSet } from "../manifest/types.js";
import {
  RESULTS_DIR,
  RUN_FILE,
  RUN_LAYOUT,
  TASK_SETS,
  TASK_SET_CHOICES,
  isRecord,
  listSampleFolders,
  readSampleJudgement,
  readSampleResult,
  type RunShard,
  type SampleJudgement,
  type SampleResult,
  type TaskSetChoice,
} from "../run-folder/index.js";
import type { RunInfo, SummaryProblem } from "./types.js";

/** A model run.json declares: name, folder, samples per task asked for (when known). */
export interface DeclaredModel {
  model: string;
  dir: string;
  samples?: number;
  /** The run's level (a merge of runs at different levels declares the model once per level). */
  level?: InstructionLevel;
  /** Samples asked for per task, where it differs by task (run.json's task_samples). */
  task_samples?: Record<string, number>;
}

/** What the run folder holds, as read from disk; problems say what could not be read. */
export interface LoadedRun {
  run: RunInfo;
  /** Layout of results/: 2 per model, 1 for run folders of older lmr. */
  layout: number;
  /** Task ids run.json asked for (may be empty when run.json lists none). */
  requested_tasks: string[];
  /** The set of each requested task, where run.json says. */
  task_sets: Record<string, TaskSet>;
  models: DeclaredModel[];
  /** The part of a run this folder holds (`lmr eval --shard`); absent for a whole run or a merge of all parts. */
  shard?: RunShard;
  results: SampleResult[];
  /** judge.json of the samples that have a current one (lmr judge), by sampleId. */
  judgements?: Record<string, SampleJudgement>;
  /** Absolute folder of each sample's files (diff, logs), by sampleId: the HTML report reads them. */
  sampleDirs?: Record<string, string>;
  /** Tokens and cost of each model's generation (by modelKey), where generate.json lies beside the run's submissions file. */
  generation?: Record<string, GenerationUsage>;
  problems: SummaryProblem[];
}

interface GenerationUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd?: number;
  /** The generate.json it was read from. */
  source: string;
}

/** How loaded runs key a sample: model, level, task and sample, unambiguous. */
export function sampleId(r: { model: string; task_id: string; sample: string; level?: InstructionLevel }): string {
  return JSON.stringify(r.level === undefined ? [r.model, r.task_id, r.sample] : [r.model, r.level, r.task_id, r.sample]);
}

/** What names a model in a report: its name and level (the same model at two levels is two entries). */
export function modelKey(m: { model: string; level?: InstructionLevel }): string {
  return JSON.stringify([m.model, m.level ?? null]);
}

const REGRADE = "re-run `lmr eval` on this run folder to grade the sample again";

/**
 * Read run.json and every sample's result.json (results/<model>/<task>/<sample>/,
 * or results/<task>/<sample>/ in folders of layout 1). A folder without run.json
 * or results/ stops the command; a broken result is a problem.
 */
export async function loadRun(runDir: string): Promise<LoadedRun> {
  const problems: SummaryProblem[] = [];
  const config = await readRunConfig(runDir, problems);
  const resultsDir = join(runDir, RESULTS_DIR);
  if (!(await isDirectory(resultsDir))) {
    throw new LmrError({
      code: "report/not-a-run",
      message: `not a run folder: ${RESULTS_DIR}/ is missing`,
      file: resultsDir,
      hint: "pass the folder `lmr eval` wrote (it holds run.json and results/)",
    });
  }
  const { samples, empty } = await listSampleFolders(runDir, config.layout);
  for (const folder of empty) problems.push({ file: folder, message: "task folder holds no sample folders" });
  const results: SampleResult[] = [];
  const judgements: Record<string, SampleJudgement> = {};
  const sampleDirs: Record<string, string> = {};
  const read = await Promise.all(samples.map((s) => readSampleResult(runDir, s)));
  for (const [i, r] of read.entries()) {
    if (!r.ok) {
      problems.push({
        file: r.problem.file,
        ...(r.problem.pointer ? { pointer: r.problem.pointer } : {}),
        message: `${r.problem.message}; the sample is left out`,
        hint: REGRADE,
      });
      continue;
    }
    // results of older lmr carry no level: they have the run's
    const result = r.result.level === undefined && config.run.level !== undefined ? { ...r.result, level: config.run.level } : r.result;
    results.push(result);
    const id = sampleId(result);
    const rel = samples[i]!.rel;
    sampleDirs[id] = join(resolve(runDir), rel);
    const j = await readSampleJudgement(runDir, rel, r.result);
    if (j.ok) {
      if (j.judgement.submission_hash === r.result.submission_hash) judgements[id] = j.judgement;
      else
        problems.push({
          file: `${rel}/judge.json`,
          message: "judges another submission than the one graded now; left out",
          hint: "run lmr judge on the run folder again",
        });
    } else if (!j.missing)
      problems.push({
        file: j.problem.file,
        ...(j.problem.pointer ? { pointer: j.problem.pointer } : {}),
        message: `${j.problem.message}; the judgement is left out`,
        hint: "run lmr judge on the run folder again",
      });
  }
  const generation = await readGenerationUsage(config.run.submissions, problems);
  return { ...config, results, judgements, sampleDirs, generation, problems };
}

/**
 * Tokens and cost per model from the generate.json that lmr generate wrote
 * beside the submissions file this run graded (relative paths are read from
 * the current folder, as lmr eval was given them). Absent or unreadable: none.
 */
async function readGenerationUsage(submissions: string | undefined, problems: SummaryProblem[]): Promise<Record<string, GenerationUsage>> {
  if (submissions === undefined) return {};
  const file = join(dirname(isAbsolute(submissions) ? submissions : resolve(submissions)), "generate.json");
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT")
      problems.push({ file, message: `cannot read the generation's token counts: ${(err as Error).message}` });
    return {};
  }
  if (!isRecord(value) || typeof value.model !== "string" || !isRecord(value.totals)) return {};
  const t = value.totals;
  if (typeof t.prompt_tokens !== "number" || typeof t.completion_tokens !== "number") return {};
  const level = isInstructionLevel(value.level) ? value.level : undefined;
  return {
    [modelKey({ model: value.model, ...(level ? { level } : {}) })]: {
      prompt_tokens: t.prompt_tokens,
      completion_tokens: t.completion_tokens,
      ...(typeof t.cost_usd === "number" ? { cost_usd: t.cost_usd } : {}),
      source: file,
    },
  };
}

type RunConfigRead = Pick<LoadedRun, "run" | "layout" | "requested_tasks" | "task_sets" | "models" | "shard">;

async function readRunConfig(runDir: string, problems: SummaryProblem[]): Promise<RunConfigRead> {
  const file = join(runDir, RUN_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR";
    throw new LmrError({
      code: "report/not-a-run",
      message: missing ? `not a run folder: ${RUN_FILE} is missing` : `cannot read ${RUN_FILE}: ${(err as Error).message}`,
      file,
      hint: "pass the folder `lmr eval` wrote (it holds run.json and results/)",
      cause: err,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new LmrError({
      code: "report/bad-run-json",
      message: `invalid JSON: ${(err as Error).message}`,
      file,
      hint: "restore run.json or re-run `lmr eval`",
      cause: err,
    });
  }
  if (!isRecord(value) || typeof value.run_id !== "string" || value.run_id === "") {
    throw new LmrError({
      code: "report/bad-run-json",
      message: "run_id is missing or not a non-empty string",
      file,
      pointer: "/run_id",
      hint: "run.json must be the object `lmr eval` wrote",
    });
  }
  const layout = value.layout === undefined ? 1 : value.layout;
  if (layout !== 1 && layout !== RUN_LAYOUT) {
    throw new LmrError({
      code: "report/bad-run-json",
      message: `layout ${JSON.stringify(layout)} is not one this lmr reads (1 or ${RUN_LAYOUT})`,
      file,
      pointer: "/layout",
      hint: "report it with the lmr that wrote the run folder",
    });
  }
  const run: RunInfo = { run_id: value.run_id };
  const where = { file: RUN_FILE };
  const str = (key: "created_at" | "toolkit_version" | "submissions" | "sandbox"): void => {
    const v = value[key];
    if (typeof v === "string") run[key] = v;
    else problems.push({ ...where, pointer: `/${key}`, message: "missing or not a string" });
  };
  const int = (key: "samples" | "jobs", to: "samples_per_task" | "jobs"): void => {
    const v = value[key];
    if (isCount(v)) run[to] = v;
    else problems.push({ ...where, pointer: `/${key}`, message: "missing or not a positive integer" });
  };
  str("created_at");
  str("toolkit_version");
  str("submissions");
  str("sandbox");
  int("samples", "samples_per_task");
  int("jobs", "jobs");
  if ((TASK_SET_CHOICES as readonly unknown[]).includes(value.set)) run.set = value.set as TaskSetChoice;
  if (isInstructionLevel(value.level)) run.level = value.level;
  else if (value.level !== undefined)
    problems.push({ ...where, pointer: "/level", message: `must be one of ${INSTRUCTION_LEVELS.join(", ")}; read as a run without a level` });
  let tasks: string[] = [];
  if (Array.isArray(value.tasks) && value.tasks.every((t): t is string => typeof t === "string")) tasks = value.tasks;
  else problems.push({ ...where, pointer: "/tasks", message: "missing or not an array of task ids" });
  const taskSets: Record<string, TaskSet> = {};
  if (isRecord(value.task_sets)) {
    for (const [id, set] of Object.entries(value.task_sets)) if ((TASK_SETS as readonly unknown[]).includes(set)) taskSets[id] = set as TaskSet;
  }
  const shard = readShard(value.shard, problems);
  return {
    run,
    layout,
    requested_tasks: tasks,
    task_sets: taskSets,
    models: layout === 1 ? [] : readModels(value.models, problems).map((m) => (run.level ? { ...m, level: run.level } : m)),
    ...(shard ? { shard } : {}),
  };
}

function readShard(value: unknown, problems: SummaryProblem[]): RunShard | undefined {
  if (value === undefined) return undefined;
  if (isRecord(value) && isCount(value.index) && isCount(value.count) && value.index <= value.count && typeof value.plan === "string" && value.plan !== "") {
    return { index: value.index, count: value.count, plan: value.plan };
  }
  problems.push({
    file: RUN_FILE,
    pointer: "/shard",
    message: "not {index, count, plan} with 1 <= index <= count; read as a whole run",
    hint: "restore run.json or re-run `lmr eval --shard I/N`",
  });
  return undefined;
}

function readModels(value: unknown, problems: SummaryProblem[]): DeclaredModel[] {
  if (!Array.isArray(value)) {
    problems.push({ file: RUN_FILE, pointer: "/models", message: "missing or not an array" });
    return [];
  }
  const out: DeclaredModel[] = [];
  for (const [i, m] of value.entries()) {
    if (!isRecord(m) || typeof m.model !== "string" || typeof m.dir !== "string") {
      problems.push({ file: RUN_FILE, pointer: `/models/${i}`, message: "needs string model and dir" });
      continue;
    }
    const perTask = isRecord(m.task_samples)
      ? Object.fromEntries(Object.entries(m.task_samples).filter((e): e is [string, number] => isCount(e[1])))
      : undefined;
    out.push({ model: m.model, dir: m.dir, ...(isCount(m.samples) ? { samples: m.samples } : {}), ...(perTask ? { task_samples: perTask } : {}) });
  }
  return out;
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

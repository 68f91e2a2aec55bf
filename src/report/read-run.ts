import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { VERDICTS, type SampleResult } from "../evaluate/types.js";
import type { RunInfo, SummaryProblem } from "./types.js";

/** What the run folder holds, as read from disk; problems say what could not be read. */
export interface LoadedRun {
  run: RunInfo;
  /** Task ids run.json asked for (may be empty when run.json lists none). */
  requested_tasks: string[];
  results: SampleResult[];
  problems: SummaryProblem[];
}

export const RUN_FILE = "run.json";
export const RESULTS_DIR = "results";
export const RESULT_FILE = "result.json";

/**
 * Read run.json and every results/<task>/<sample>/result.json. A run folder
 * without run.json or results/ stops the command; a broken result is a problem.
 */
export async function loadRun(runDir: string): Promise<LoadedRun> {
  const problems: SummaryProblem[] = [];
  const config = await readRunConfig(runDir, problems);
  const resultsDir = join(runDir, RESULTS_DIR);
  if (!(await isDirectory(resultsDir))) {
    throw new LmrError({
      code: "report.not-a-run",
      message: `not a run folder: ${RESULTS_DIR}/ is missing`,
      file: resultsDir,
      hint: "pass the folder `lmr eval` wrote (it holds run.json and results/)",
    });
  }
  const results: SampleResult[] = [];
  for (const taskDir of await listDirs(resultsDir)) {
    const sampleDirs = await listDirs(join(resultsDir, taskDir));
    if (sampleDirs.length === 0) {
      problems.push({ file: `${RESULTS_DIR}/${taskDir}`, message: "task folder holds no sample folders" });
    }
    const read = await Promise.all(sampleDirs.map((s) => readSampleResult(runDir, taskDir, s, problems)));
    for (const r of read) if (r !== undefined) results.push(r);
  }
  return { run: config.run, requested_tasks: config.tasks, results, problems };
}

async function readRunConfig(runDir: string, problems: SummaryProblem[]): Promise<{ run: RunInfo; tasks: string[] }> {
  const file = join(runDir, RUN_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "ENOTDIR";
    throw new LmrError({
      code: "report.not-a-run",
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
    throw new LmrError({ code: "report.bad-run-json", message: `invalid JSON: ${(err as Error).message}`, file, hint: "restore run.json or re-run `lmr eval`", cause: err });
  }
  if (!isRecord(value) || typeof value.run_id !== "string" || value.run_id === "") {
    throw new LmrError({ code: "report.bad-run-json", message: "run_id is missing or not a non-empty string", file, pointer: "/run_id", hint: "run.json must be the object `lmr eval` wrote" });
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
    if (typeof v === "number" && Number.isInteger(v) && v >= 1) run[to] = v;
    else problems.push({ ...where, pointer: `/${key}`, message: "missing or not a positive integer" });
  };
  str("created_at");
  str("toolkit_version");
  str("submissions");
  str("sandbox");
  int("samples", "samples_per_task");
  int("jobs", "jobs");
  let tasks: string[] = [];
  if (Array.isArray(value.tasks) && value.tasks.every((t): t is string => typeof t === "string")) tasks = value.tasks;
  else problems.push({ ...where, pointer: "/tasks", message: "missing or not an array of task ids" });
  return { run, tasks };
}

async function readSampleResult(runDir: string, taskDir: string, sampleDir: string, problems: SummaryProblem[]): Promise<SampleResult | undefined> {
  const rel = `${RESULTS_DIR}/${taskDir}/${sampleDir}/${RESULT_FILE}`;
  let text: string;
  try {
    text = await readFile(join(runDir, rel), "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.push({
      file: rel,
      message: code === "ENOENT" ? "result.json is missing; the sample is left out" : `cannot read: ${(err as Error).message}`,
      hint: "re-run `lmr eval` on this run folder to grade the sample again",
    });
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    problems.push({ file: rel, message: `invalid JSON (${(err as Error).message}); the sample is left out`, hint: "re-run `lmr eval` on this run folder to grade the sample again" });
    return undefined;
  }
  const wrong = checkSampleResult(value, taskDir, sampleDir);
  if (wrong !== undefined) {
    problems.push({ file: rel, pointer: wrong.pointer, message: `${wrong.message}; the sample is left out`, hint: "re-run `lmr eval` on this run folder to grade the sample again" });
    return undefined;
  }
  return value as SampleResult;
}

/** The first reason `value` is not a SampleResult for this folder, checking the fields reports use. */
export function checkSampleResult(value: unknown, taskDir: string, sampleDir: string): { pointer: string; message: string } | undefined {
  if (!isRecord(value)) return { pointer: "", message: "not a JSON object" };
  for (const key of ["task_id", "sample", "model", "category"] as const) {
    if (typeof value[key] !== "string" || value[key] === "") return { pointer: `/${key}`, message: "missing or not a non-empty string" };
  }
  if (value.task_id !== taskDir) return { pointer: "/task_id", message: `is ${JSON.stringify(value.task_id)} but the folder is ${JSON.stringify(taskDir)}` };
  if (value.sample !== sampleDir) return { pointer: "/sample", message: `is ${JSON.stringify(value.sample)} but the folder is ${JSON.stringify(sampleDir)}` };
  if (typeof value.verdict !== "string" || !(VERDICTS as readonly string[]).includes(value.verdict)) {
    return { pointer: "/verdict", message: `must be one of ${VERDICTS.join(", ")}` };
  }
  if (value.reason !== undefined && typeof value.reason !== "string") return { pointer: "/reason", message: "not a string" };
  if (typeof value.duration_s !== "number" || !Number.isFinite(value.duration_s) || value.duration_s < 0) {
    return { pointer: "/duration_s", message: "missing or not a number >= 0" };
  }
  const counts = value.counts;
  if (!isRecord(counts)) return { pointer: "/counts", message: "missing or not an object" };
  for (const key of ["passed", "failed", "errors", "skipped"]) {
    const n = counts[key];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return { pointer: `/counts/${key}`, message: "missing or not an integer >= 0" };
  }
  if (!Array.isArray(value.tests)) return { pointer: "/tests", message: "missing or not an array" };
  for (const [i, t] of value.tests.entries()) {
    if (!isRecord(t) || typeof t.id !== "string" || typeof t.status !== "string") return { pointer: `/tests/${i}`, message: "needs string id and status" };
  }
  if (typeof value.backend !== "string") return { pointer: "/backend", message: "missing or not a string" };
  return undefined;
}

async function listDirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort(compareIds);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Sort "2" before "10": sample ids are numbers written as strings. */
export function compareIds(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

import { mkdir, readFile, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import pLimit from "p-limit";
import { type Problem } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import { buildBundle, hashTaskInputs, BUNDLE_FILES, type BundleInfo, type BundleManifest } from "../bundle/index.js";
import type { ResolvedTask } from "../manifest/types.js";
import { RESULT_FILE, RESULTS_DIR, RUN_FILE, writeSummary } from "../report/index.js";
import type { Summary } from "../report/index.js";
import { resolveRunPython } from "../runner/index.js";
import type { PythonEnv, SandboxChoice } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { gradeSample, type GradeContext, type GradeJob } from "./grade-sample.js";
import { lockRunDir, type RunDirLock } from "./run-dir.js";
import { hashSubmission, loadSubmissions, type Submission } from "./submissions.js";
import type { RunConfig, SampleResult } from "./types.js";

const require = createRequire(import.meta.url);
const TOOLKIT_VERSION = (require("../../package.json") as { version: string }).version;

export interface EvalOptions extends SourceOptions {
  submissions: string;
  tasks: ResolvedTask[];
  outDir: string;
  jobs: number;
  /** Take at most this many samples per task. */
  samples?: number;
  sandbox?: SandboxChoice;
  python?: string;
  onProgress?: (p: { done: number; total: number; skipped: number; last?: SampleResult }) => void;
}

export interface EvalOutcome {
  summary: Summary;
  /** Samples graded in this invocation. */
  graded: number;
  /** Samples whose result was already on disk for the same grading key (resume). */
  reused: number;
  /** Warnings: unreadable submission rows, unknown task ids, removed stale results. */
  problems: Problem[];
  /** What a previous, killed run on this folder left and this one cleaned up. */
  recovered: RunDirLock["recovered"];
}

/**
 * Grades submissions over tasks into RUN_DIR. Each sample's files are written
 * before its result.json, which is renamed into place last: a run killed at any
 * point resumes by grading exactly the samples without a result for the same
 * grading key. The run folder is locked while a run works in it; a lock left by
 * a killed run is taken over after that run's processes and scratch copies are
 * cleaned up.
 */
export async function runEval(opts: EvalOptions): Promise<EvalOutcome> {
  const outDir = resolve(opts.outDir);
  const { submissions, problems } = await loadSubmissions(opts.submissions);
  const known = new Set(opts.tasks.map((t) => t.manifest.id));
  const unknown = [...new Set(submissions.filter((s) => !known.has(s.task_id)).map((s) => s.task_id))];
  for (const id of unknown) problems.push({ file: opts.submissions, message: `submissions for task '${id}' ignored: it is not among the tasks of this run`, hint: "check the task id, or pass --tasks-dir / --tasks with that task" });

  await mkdir(join(outDir, RESULTS_DIR), { recursive: true });
  const lock = await lockRunDir(outDir);
  try {
    const bundles = await prepareBundles(opts, outDir);
    const jobs = await planJobs(opts, submissions, bundles);
    await writeRunConfig(opts, outDir, jobs);
    problems.push(...(await removeStaleResults(outDir, jobs)));
    const ctx: GradeContext = {
      pythonFor: pythonResolver(opts),
      sandbox: opts.sandbox ?? "auto",
      scratchParent: lock.scratch,
      outDir,
      toolkitVersion: TOOLKIT_VERSION,
    };
    await mkdir(lock.scratch, { recursive: true });
    let done = 0;
    let reused = 0;
    const limit = pLimit(Math.max(1, opts.jobs));
    await Promise.all(
      jobs.map((job) =>
        limit(async () => {
          const dir = join(outDir, RESULTS_DIR, job.task.manifest.id, job.sample);
          const previous = await readResult(dir);
          if (previous && previous.grading_key === job.gradingKey && previous.verdict !== "infra") {
            reused++;
            done++;
            opts.onProgress?.({ done, total: jobs.length, skipped: reused });
            return;
          }
          const result = await gradeSample(job, ctx, dir);
          done++;
          opts.onProgress?.({ done, total: jobs.length, skipped: reused, last: result });
        }),
      ),
    );
    const summary = await writeSummary(outDir);
    return { summary, graded: jobs.length - reused, reused, problems, recovered: lock.recovered };
  } finally {
    await lock.release();
  }
}

async function planJobs(opts: EvalOptions, submissions: Submission[], bundles: Map<string, BundleInfo>): Promise<GradeJob[]> {
  const jobs: GradeJob[] = [];
  const sandbox = opts.sandbox ?? "auto";
  const python = opts.python ?? process.env.LMR_PYTHON ?? "";
  for (const task of opts.tasks) {
    const bundle = bundles.get(task.manifest.id)!;
    const targetFiles = [...new Set(bundle.targets.map((t) => t.file))];
    let mine = submissions.filter((s) => s.task_id === task.manifest.id);
    if (opts.samples !== undefined) mine = mine.slice(0, opts.samples);
    const key = (submissionHash: string): string =>
      sha256(JSON.stringify({ submissionHash, bundle: bundle.hashes, sandbox, python, toolkit: TOOLKIT_VERSION }));
    if (mine.length === 0) jobs.push({ task, bundle, sub: undefined, sample: "0", submissionHash: "none", gradingKey: key("none") });
    for (const sub of mine) {
      const submissionHash = await hashSubmission(sub, targetFiles);
      jobs.push({ task, bundle, sub, sample: sub.sample, submissionHash, gradingKey: key(submissionHash) });
    }
  }
  return jobs;
}

function pythonResolver(opts: EvalOptions): (task: ResolvedTask) => Promise<PythonEnv> {
  const pythons = new Map<string, Promise<PythonEnv>>();
  return (task) => {
    const reqs = task.manifest.environment.requirements;
    // docker (chosen, or picked by auto) runs the image's interpreter, which depends on the whole environment
    const key = JSON.stringify([task.manifest.environment, [...reqs].sort()]);
    if (!pythons.has(key)) pythons.set(key, resolveRunPython({ sandbox: opts.sandbox ?? "auto", environment: task.manifest.environment, ...(opts.python ? { python: opts.python } : {}), requirements: reqs, ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) }));
    return pythons.get(key)!;
  };
}

async function readResult(dir: string): Promise<SampleResult | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, RESULT_FILE), "utf8")) as SampleResult;
  } catch {
    return undefined;
  }
}

/**
 * Sample folders of this run's tasks that no submission asks for any more
 * (fewer samples, --samples lowered): left in place they would count in the
 * summary. Folders of tasks outside this run are left alone.
 */
async function removeStaleResults(outDir: string, jobs: GradeJob[]): Promise<Problem[]> {
  const wanted = new Map<string, Set<string>>();
  for (const j of jobs) {
    const set = wanted.get(j.task.manifest.id) ?? new Set<string>();
    set.add(j.sample);
    wanted.set(j.task.manifest.id, set);
  }
  const problems: Problem[] = [];
  for (const [taskId, samples] of wanted) {
    const taskDir = join(outDir, RESULTS_DIR, taskId);
    const present = await readdir(taskDir, { withFileTypes: true }).catch(() => []);
    for (const e of present) {
      if (!e.isDirectory() || e.name.startsWith(".") || samples.has(e.name)) continue;
      await rm(join(taskDir, e.name), { recursive: true, force: true });
      problems.push({ file: join(taskDir, e.name), message: `removed the result of sample '${e.name}': the submissions no longer have it` });
    }
  }
  return problems;
}

async function writeRunConfig(opts: EvalOptions, outDir: string, jobs: GradeJob[]): Promise<void> {
  const file = join(outDir, RUN_FILE);
  let runId = randomBytes(6).toString("hex");
  let createdAt = new Date().toISOString();
  try {
    const prev = JSON.parse(await readFile(file, "utf8")) as RunConfig;
    runId = prev.run_id;
    createdAt = prev.created_at;
  } catch {
    // a new run
  }
  const perTask = new Map<string, number>();
  for (const j of jobs) perTask.set(j.task.manifest.id, (perTask.get(j.task.manifest.id) ?? 0) + 1);
  const config: RunConfig = {
    run_id: runId,
    created_at: createdAt,
    toolkit_version: TOOLKIT_VERSION,
    submissions: opts.submissions,
    tasks: opts.tasks.map((t) => t.manifest.id),
    samples: opts.samples ?? Math.max(1, ...perTask.values()),
    jobs: opts.jobs,
    sandbox: opts.sandbox ?? "auto",
  };
  await writeJsonAtomic(file, config);
}

/** Bundles live in RUN_DIR/bundles and are rebuilt only when the task's inputs or the toolkit changed. */
async function prepareBundles(opts: EvalOptions, outDir: string): Promise<Map<string, BundleInfo>> {
  const root = join(outDir, "bundles");
  const out = new Map<string, BundleInfo>();
  for (const task of opts.tasks) {
    const dir = join(root, task.manifest.id);
    try {
      const prev = JSON.parse(await readFile(join(dir, BUNDLE_FILES.manifest), "utf8")) as BundleManifest;
      if (prev.hashes.task === (await hashTaskInputs(task)) && prev.toolkit_version === TOOLKIT_VERSION) {
        out.set(task.manifest.id, { ...prev, dir, files: { workspace: 0, reference: 0, grader: 0 } });
        continue;
      }
    } catch {
      // not built yet
    }
    out.set(task.manifest.id, await buildBundle(task, root, opts));
  }
  return out;
}

import { settleDeferred } from "../runner/deferred-cleanup.js";
import { TOOLKIT_VERSION, toolkitIdentity, toolkitHash } from "../core/toolkit-identity.js";
export { TOOLKIT_VERSION };
import { mkdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import pLimit from "p-limit";
import { LmrError, formatProblem, type Problem } from "../core/errors.js";
import { buildBundle, hashTaskInputs, BUNDLE_FILES, type BundleInfo, type BundleManifest } from "../bundle/index.js";
import type { ResolvedTask } from "../manifest/types.js";
import {
  BUNDLES_DIR,
  DIFF_FILE,
  RESULTS_DIR,
  computeGradingKey,
  locateSample,
  locateSampleDir,
  nameModelFolder,
  readSampleResult,
  type RunModel,
  type SampleResult,
  type TaskSetChoice,
} from "../run-folder/index.js";
import type { SandboxChoice } from "../runner/types.js";
import type { SourceOptions } from "../source/types.js";
import { OraclePool } from "./oracle-pool.js";
import { computeSample, writeSampleFiles, type GradeContext, type GradeJob, type GradedSample } from "./grade-sample.js";
import { lockRunDir, type RunDirLock } from "./run-dir.js";
import { checkRunFolderLayout, removeStaleResults, writeRunConfig } from "./run-state.js";
import { selectSubmissions, type SelectedSubmissions } from "./select-submissions.js";
import { hashPlan, pickShard, type ShardRecord, type ShardSpec } from "./shard.js";
import { hashSubmission, linkedTargetProblems, loadSubmissions } from "./submissions.js";
import { DEFAULT_LEVEL, requireLevel, type InstructionLevel } from "../manifest/level.js";
import { resolveRunTarget, targetIdentity, type RunTarget } from "../runner/run-target.js";

export interface EvalOptions extends SourceOptions {
  submissions: string;
  /** The tasks this run grades. */
  tasks: ResolvedTask[];
  /** Every task id a submission may name (e.g. the whole tasks folder); rows for these outside `tasks` are skipped, not errors. */
  knownTaskIds?: string[];
  /** The set the tasks were selected by, recorded in run.json (default "all"). */
  set?: TaskSetChoice;
  /** The instruction level the submissions were made at (default "paper"): run.json, every result and the bundles' instruction.md. */
  level?: InstructionLevel;
  outDir: string;
  jobs: number;
  /** Take at most this many samples per (task, model). */
  samples?: number;
  sandbox?: SandboxChoice;
  python?: string;
  /** Grade only this part of the (task, model, sample) triples (`--shard I/N`). */
  shard?: ShardSpec;
  /** Fork each task's tests from one long-lived oracles' server (default true; `--no-fork-server` turns it off). */
  forkServer?: boolean;
  /** Who grades the samples that need grading: this process (default) or, e.g., workers behind a queue. */
  dispatcher?: SampleDispatcher;
  onProgress?: (p: { done: number; total: number; skipped: number; last?: SampleResult }) => void;
}

/**
 * The seam between planning a run and grading its samples. runEval plans,
 * reuses what is on disk and writes every file; a dispatcher only gets the
 * samples graded and hands each back through `record`, once per job, in any
 * order. `record` ignores a second result for a job and one whose grading
 * key is not the job's, so a dispatcher that may see a result twice (a
 * queue retrying a job) needs no bookkeeping of its own.
 */
export interface SampleDispatcher {
  dispatch(input: DispatchInput): Promise<void>;
}

export interface DispatchInput {
  runId: string;
  outDir: string;
  jobs: GradeJob[];
  /** How this process would grade a job (the local dispatcher uses it; a queue's workers have their own). */
  ctx: GradeContext;
  /** Writes the sample's folder; false when the job already has its result or the result is not for it. */
  record: (job: GradeJob, graded: GradedSample) => Promise<boolean>;
}

export interface EvalOutcome {
  /** One result per (task, model, sample) of this run, graded now or reused. */
  results: SampleResult[];
  models: RunModel[];
  /** Samples graded in this invocation. */
  graded: number;
  /** Samples whose result was already on disk for the same grading key (resume). */
  reused: number;
  /** Notes: rows outside the selection, removed stale results. */
  problems: Problem[];
  /** What a previous, killed run on this folder left and this one cleaned up. */
  recovered: RunDirLock["recovered"];
  /** The part of the run this folder holds, with `--shard`. */
  shard?: ShardRecord;
}

/**
 * Grades submissions over tasks into RUN_DIR, one result per (task, model,
 * sample). Bad input (unreadable rows, unknown task ids, a key given twice)
 * stops it before anything is written. Each sample's files are written before
 * its result.json, which is renamed into place last: a run killed at any point
 * resumes by grading exactly the samples without a result for the same grading
 * key. The run folder is locked while a run works in it; a lock left by a
 * killed run is taken over after that run's processes and scratch copies are
 * cleaned up. Summaries are the report stage's job (writeSummary).
 */
export async function runEval(opts: EvalOptions): Promise<EvalOutcome> {
  const outDir = resolve(opts.outDir);
  const selected = await readInput(opts);
  const level = opts.level ?? DEFAULT_LEVEL;
  requireLevel(opts.tasks, level);
  await checkRunFolderLayout(outDir, level);
  const problems: Problem[] = [...selected.notes];

  await mkdir(join(outDir, RESULTS_DIR), { recursive: true });
  const lock = await lockRunDir(outDir);
  let oracles: OraclePool | undefined;
  try {
    const bundles = await prepareBundles(opts, outDir);
    const targetFor = createTargetResolver(opts);
    const planned = await planJobs(opts, selected, bundles, targetFor);
    const shard = opts.shard ? { ...opts.shard, plan: hashPlan(planned) } : undefined;
    const jobs = shard ? planned.filter((j) => pickShard(j.key, shard.count) === shard.index) : planned;
    const config = await writeRunConfig(outDir, {
      submissions: opts.submissions,
      tasks: opts.tasks,
      set: opts.set ?? "all",
      level,
      models: selected.models,
      jobs: opts.jobs,
      sandbox: opts.sandbox ?? "auto",
      toolkitVersion: TOOLKIT_VERSION,
      ...(shard ? { shard } : {}),
    });
    problems.push(...(await removeStaleResults(outDir, jobs)));
    const ctx: GradeContext = {
      targetFor,
      sandbox: opts.sandbox ?? "auto",
      scratchParent: lock.scratch,
      outDir,
      toolkitVersion: TOOLKIT_VERSION,
      deferCleanup: true,
    };
    await mkdir(lock.scratch, { recursive: true });
    const results = new Map<GradeJob, SampleResult>();
    const todo: GradeJob[] = [];
    for (const job of jobs) {
      const previous = await readPrevious(outDir, job);
      if (previous && previous.grading_key === job.gradingKey && previous.verdict !== "infra" && (await keptDiff(outDir, job, previous)))
        results.set(job, previous);
      else todo.push(job);
    }
    const reused = results.size;
    if (opts.forkServer !== false && !opts.dispatcher) ctx.oracles = oracles = new OraclePool(todo, lock.scratch);
    if (reused > 0) opts.onProgress?.({ done: reused, total: jobs.length, skipped: reused });
    const pending = new Set(todo);
    const record = async (job: GradeJob, sample: GradedSample): Promise<boolean> => {
      // the level is the run's: a queue worker grades the same way at either level
      const graded = { ...sample, result: { ...sample.result, level } };
      const r = graded.result;
      if (!pending.has(job) || r.grading_key !== job.gradingKey || r.task_id !== job.key.task_id || r.model !== job.key.model || r.sample !== job.key.sample)
        return false;
      pending.delete(job); // before the await: a second result arriving meanwhile is refused
      await writeSampleFiles(locateSampleDir(outDir, job.key), graded);
      results.set(job, r);
      opts.onProgress?.({ done: results.size, total: jobs.length, skipped: reused, last: r });
      return true;
    };
    const dispatcher = opts.dispatcher ?? createLocalDispatcher(opts.jobs);
    if (todo.length > 0) await dispatcher.dispatch({ runId: config.run_id, outDir, jobs: todo, ctx, record });
    if (pending.size > 0) {
      throw new LmrError({
        code: "eval/samples-not-graded",
        file: outDir,
        message: `${pending.size} sample(s) got no result from the dispatcher`,
        hint: "run the same command again: graded samples are kept",
      });
    }
    return {
      results: jobs.map((j) => results.get(j)!),
      models: selected.models,
      graded: todo.length,
      reused,
      problems,
      recovered: lock.recovered,
      ...(shard ? { shard } : {}),
    };
  } finally {
    await oracles?.closeAll();
    // every sample's processes are gone; its scratch copy and cgroups go before the folder is let go
    await settleDeferred();
    await lock.release();
  }
}

/** Loads and checks the submissions; every problem at once, before the run folder is touched. */
async function readInput(opts: EvalOptions): Promise<SelectedSubmissions> {
  const loaded = await loadSubmissions(opts.submissions, { knownTaskIds: [...(opts.knownTaskIds ?? []), ...opts.tasks.map((t) => t.manifest.id)] });
  const selected = selectSubmissions({
    file: opts.submissions,
    submissions: loaded.submissions,
    tasks: opts.tasks,
    ...(opts.knownTaskIds ? { knownTaskIds: opts.knownTaskIds } : {}),
    ...(opts.samples !== undefined ? { samples: opts.samples } : {}),
  });
  const targets = new Map(opts.tasks.map((t) => [t.manifest.id, [...new Set(t.manifest.targets.map((x) => x.file))]]));
  const linked = await linkedTargetProblems(loaded.submissions, (id) => targets.get(id));
  const problems = [...loaded.problems, ...linked, ...(selected.ok ? [] : selected.problems)];
  if (problems.length === 0 && selected.ok) return selected.value;
  throw new LmrError({
    code: "eval/bad-submissions",
    file: opts.submissions,
    message: `${problems.length} problem${problems.length === 1 ? "" : "s"} in the submissions; nothing was graded or written:\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}`,
    hint: "fix these rows and run the same command again",
  });
}

/** One job per (task, model, sample); a model with no row for a task gets one `invalid` sample "0" there. */
async function planJobs(
  opts: EvalOptions,
  selected: SelectedSubmissions,
  bundles: Map<string, BundleInfo>,
  targetFor: (task: ResolvedTask) => Promise<RunTarget>,
): Promise<GradeJob[]> {
  const jobs: GradeJob[] = [];
  for (const task of opts.tasks) {
    const bundle = bundles.get(task.manifest.id)!;
    // the key names what runs (a backend, an image id, an interpreter), never the `auto` that chose it
    const target = await targetFor(task);
    const sandbox = JSON.stringify(targetIdentity(target));
    const python = target.python.path;
    const targetFiles = [...new Set(bundle.targets.map((t) => t.file))];
    for (const { model } of selected.models) {
      const key = (submissionHash: string): string =>
        computeGradingKey({ model, submissionHash, bundleHashes: bundle.hashes, sandbox, python, toolkitVersion: toolkitIdentity() });
      const subs = selected.byTask.get(task.manifest.id)?.get(model) ?? [];
      if (subs.length === 0)
        jobs.push({ task, bundle, key: { task_id: task.manifest.id, model, sample: "0" }, sub: undefined, submissionHash: "none", gradingKey: key("none") });
      for (const sub of subs) {
        const submissionHash = await hashSubmission(sub, targetFiles);
        jobs.push({ task, bundle, key: { task_id: sub.task_id, model, sample: sub.sample }, sub, submissionHash, gradingKey: key(submissionHash) });
      }
    }
  }
  return jobs;
}

/** Grades in this process, `jobs` at a time. */
function createLocalDispatcher(jobs: number): SampleDispatcher {
  return {
    async dispatch({ jobs: todo, ctx, record }) {
      const limit = pLimit(Math.max(1, jobs));
      await Promise.all(todo.map((job) => limit(async () => record(job, await computeSample(job, ctx)))));
    },
  };
}

/**
 * One run target per distinct environment, resolved once (a venv build is slow; the backend
 * is decided once, not run by run); shared by a queue worker.
 */
export function createTargetResolver(opts: Pick<EvalOptions, "sandbox" | "python" | "cacheDir">): (task: ResolvedTask) => Promise<RunTarget> {
  const targets = new Map<string, Promise<RunTarget>>();
  return (task) => {
    const runner = task.manifest.tests.runner === "node-test" ? "node-test" : "pytest";
    const key = JSON.stringify([task.manifest.environment, [...task.manifest.environment.requirements].sort(), runner]);
    if (!targets.has(key)) {
      targets.set(
        key,
        resolveRunTarget({
          sandbox: opts.sandbox ?? "auto",
          environment: task.manifest.environment,
          runner,
          ...(opts.python ? { python: opts.python } : {}),
          ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
        }),
      );
    }
    return targets.get(key)!;
  };
}

/**
 * Whether a reused sample has the submission.diff lmr judge and the report read: results
 * graded before lmr kept it are graded once more (an invalid one that never applied has none).
 */
async function keptDiff(outDir: string, job: GradeJob, previous: SampleResult): Promise<boolean> {
  if (previous.verdict === "invalid") return true;
  return stat(join(locateSampleDir(outDir, job.key), DIFF_FILE)).then(
    () => true,
    () => false,
  );
}

async function readPrevious(outDir: string, job: GradeJob): Promise<SampleResult | undefined> {
  const k = job.key;
  const read = await readSampleResult(outDir, { task: k.task_id, sample: k.sample, modelFolder: nameModelFolder(k.model), rel: locateSample(k) });
  return read.ok ? read.result : undefined;
}

/** Bundles live in RUN_DIR/bundles and are rebuilt only when the task's inputs or the toolkit changed (lmr agent run builds them first). */
export async function prepareBundles(opts: Pick<EvalOptions, "tasks" | "level"> & SourceOptions, outDir: string): Promise<Map<string, BundleInfo>> {
  const root = join(outDir, BUNDLES_DIR);
  const out = new Map<string, BundleInfo>();
  const level = opts.level ?? DEFAULT_LEVEL;
  requireLevel(opts.tasks, level);
  for (const task of opts.tasks) {
    const dir = join(root, task.manifest.id);
    try {
      const prev = JSON.parse(await readFile(join(dir, BUNDLE_FILES.manifest), "utf8")) as BundleManifest;
      if (
        prev.hashes.task === (await hashTaskInputs(task)) &&
        prev.toolkit_version === TOOLKIT_VERSION &&
        prev.toolkit_hash === toolkitHash() &&
        (prev.level ?? DEFAULT_LEVEL) === level
      ) {
        out.set(task.manifest.id, { ...prev, dir, files: { workspace: 0, reference: 0, grader: 0 } });
        continue;
      }
    } catch {
      // not built yet
    }
    out.set(task.manifest.id, await buildBundle(task, root, { ...opts, level }));
  }
  return out;
}

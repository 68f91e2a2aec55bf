import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import pLimit from "p-limit";
import { formatProblem, type Problem } from "../core/errors.js";
import { loadTask } from "../manifest/load.js";
import { readManifest, resolveTaskDir } from "../manifest/read.js";
import { validateTasks } from "../manifest/validate.js";
import { sweepTrustedScratch } from "../runner/trusted-scratch.js";
import { checkFixturesStep } from "./fixtures-step.js";
import { VERIFICATION_FILE } from "./record.js";
import { SiblingReferences } from "./siblings.js";
import { recordInvalidManifest, verifyTask, type VerifyEvent, type VerifyOptions, type VerifyResult } from "./verify-task.js";

export interface VerifyTasksOptions extends Omit<VerifyOptions, "siblings" | "checkFixtures" | "onEvent"> {
  /** Tasks verified side by side (default 3), so one task's builds and leak scan overlap another's runs. */
  tasksAtOnce?: number;
  /** Scan each workspace against the references of the sibling tasks too (lmr verify's default). */
  datasetScan?: boolean;
  /** Progress of the tasks in flight. */
  onEvent?: (event: VerifyEvent) => void;
  /** A task finished (its id, or undefined when its manifest did not load). */
  onTaskDone?: (taskId: string | undefined) => void;
  /** A task's result, in the order the folders were given, each as soon as those before it are done. */
  onResult?: (result: VerifiedTask) => void;
}

export interface VerifiedTask extends VerifyResult {
  /** The task folder, as given. */
  dir: string;
  /** False when the record was not written: --no-write, a draft, or an invalid manifest (its record is only printed). */
  written: boolean;
  /** With `draft`: what the finished-instruction check would have said, to print beside the result. */
  draftNotes: string[];
}

export interface VerifyTasksResult {
  tasks: VerifiedTask[];
  /** Manifest problems of all tasks (each invalid task's record also fails at its manifest step). */
  problems: Problem[];
}

/**
 * `lmr verify` over many tasks: validates them all first (unreadable folders and malformed
 * JSON stop here; an invalid manifest is a failed record of that task), then verifies them
 * `tasksAtOnce` at a time, longest first by each task's last recorded time, sharing the run
 * slots in `opts.slots`, the sibling references (datasetScan) and the fixture check. A task
 * that throws stops the run: nothing new starts, and the tasks in flight finish cleaning up.
 */
export async function verifyTasks(dirs: string[], opts: VerifyTasksOptions = {}): Promise<VerifyTasksResult> {
  // what a verify or record killed with -9 left on the tmpfs
  await sweepTrustedScratch();
  const { tasksAtOnce = 3, datasetScan = false, onEvent, onTaskDone, onResult, ...common } = opts;
  const verifyOpts: VerifyOptions = { ...common };
  const siblingWork = await mkdtemp(join(tmpdir(), "lmr-siblings-"));
  try {
    if (datasetScan) verifyOpts.siblings = new SiblingReferences(siblingWork, verifyOpts);
    verifyOpts.checkFixtures = (task, bundle) => checkFixturesStep(task, verifyOpts, bundle);
    return await verifyAll(dirs, verifyOpts, { tasksAtOnce, onEvent, onTaskDone, onResult });
  } finally {
    await rm(siblingWork, { recursive: true, force: true });
  }
}

async function verifyAll(
  dirs: string[],
  opts: VerifyOptions,
  hooks: Pick<VerifyTasksOptions, "onEvent" | "onTaskDone" | "onResult"> & { tasksAtOnce: number },
): Promise<VerifyTasksResult> {
  // A draft leaves out the finished-instruction check; what that check would say is kept beside the results.
  const report = await validateTasks(dirs, { finished: !opts.draft });
  const draftNotes = new Map<string, string[]>();
  if (opts.draft) {
    const seen = new Set(report.problems.map((p) => formatProblem(p)));
    for (const p of (await validateTasks(dirs)).problems) {
      if (seen.has(formatProblem(p))) continue;
      const dir = resolve(p.file ? dirname(p.file) : ".");
      draftNotes.set(dir, [...(draftNotes.get(dir) ?? []), `draft: not checked: ${formatProblem(p)}`]);
    }
  }
  const problemsByDir = new Map<string, Problem[]>();
  for (const p of report.problems) {
    const dir = resolve(p.file ? dirname(p.file) : ".");
    problemsByDir.set(dir, [...(problemsByDir.get(dir) ?? []), p]);
  }
  const verifyOne = async (dir: string): Promise<VerifiedTask> => {
    const problems = problemsByDir.get(resolveTaskDir(dir));
    const extra = { dir, written: opts.write !== false && !problems, draftNotes: draftNotes.get(resolveTaskDir(dir)) ?? [] };
    let id: string | undefined;
    try {
      if (problems) {
        const raw = await readManifest(dir);
        return { record: await recordInvalidManifest(raw.dir, (raw.data as { id?: unknown } | null)?.id, problems, opts), unchanged: false, ...extra };
      }
      const task = await loadTask(dir);
      id = task.manifest.id;
      return { ...(await verifyTask(task, { ...opts, ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}) })), ...extra };
    } finally {
      hooks.onTaskDone?.(id);
    }
  };
  const limit = pLimit(Math.max(1, hooks.tasksAtOnce));
  let stopping = false;
  // longest first (by each task's last recorded time; a task without a record counts as long): the
  // slowest task no longer starts last and leaves the other slots idle at the end
  const expected = await Promise.all(dirs.map(async (dir) => (await lastVerificationSeconds(dir)) ?? Number.POSITIVE_INFINITY));
  const pending: Promise<VerifiedTask>[] = new Array<Promise<VerifiedTask>>(dirs.length);
  for (const i of [...dirs.keys()].sort((a, b) => expected[b]! - expected[a]! || a - b)) {
    pending[i] = limit(() => (stopping ? Promise.reject(new Error("not verified: an earlier task stopped the run")) : verifyOne(dirs[i]!)));
  }
  // a later task's failure is reported when its turn comes, not as an unhandled rejection meanwhile
  for (const p of pending) p.catch(() => undefined);
  const tasks: VerifiedTask[] = [];
  try {
    for (const i of dirs.keys()) {
      const result = await pending[i]!;
      tasks.push(result);
      hooks.onResult?.(result);
    }
  } catch (err) {
    stopping = true;
    throw err;
  } finally {
    await Promise.allSettled(pending);
  }
  return { tasks, problems: report.problems };
}

/** The total seconds of a task's last verification, where its record says. */
async function lastVerificationSeconds(dir: string): Promise<number | undefined> {
  try {
    const r = JSON.parse(await readFile(join(resolveTaskDir(dir), VERIFICATION_FILE), "utf8")) as { timings?: { total_s?: unknown } };
    return typeof r.timings?.total_s === "number" ? r.timings.total_s : undefined;
  } catch {
    return undefined;
  }
}

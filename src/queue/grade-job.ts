import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { isLmrError } from "../core/errors.js";
import { computeSample, type GradedSample } from "../evaluate/grade-sample.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { RunTarget } from "../runner/run-target.js";
import type { SandboxChoice } from "../runner/types.js";
import { decodeSubmission, makeInfraSample, type GradePayload } from "./grade-payload.js";
import type { WorkerTasks } from "./worker-tasks.js";

export interface WorkerGradeEnv {
  workerId: string;
  tasks: WorkerTasks;
  /** Where a task's runs happen on this worker under a sandbox choice (docker runs the image's own interpreter). */
  targetFor: (task: ResolvedTask, sandbox: SandboxChoice) => Promise<RunTarget>;
  /** The worker's scratch root: the runner's copies, decoded submission folders. */
  scratch: string;
  toolkitVersion: string;
}

/**
 * Grades one queued sample the way runEval grades it locally (computeSample),
 * with this worker's tasks, bundles, interpreter and sandbox. Never throws:
 * a job this worker cannot grade faithfully (another lmr version, a task it
 * does not have or cannot reproduce) is an infra result that says why, never
 * a verdict on the submission.
 */
export async function gradeQueuedJob(p: GradePayload, env: WorkerGradeEnv): Promise<GradedSample> {
  const t0 = performance.now();
  if (p.v !== 1)
    return makeInfraSample(p, `worker ${env.workerId} does not read job format ${String(p.v)}; run the same lmr on the coordinator and the workers`, t0);
  if (p.toolkit_version !== env.toolkitVersion) {
    return makeInfraSample(
      p,
      `worker ${env.workerId} runs lmr ${env.toolkitVersion}, the run was planned by lmr ${p.toolkit_version}: verdicts could differ, so it does not grade task '${p.key.task_id}'`,
      t0,
    );
  }
  let subDir: string | undefined;
  try {
    const { task, bundle } = await env.tasks.resolveTask(p.key.task_id, p.hashes);
    if (p.submission?.kind === "tree") subDir = await mkdtemp(join(env.scratch, "sub-"));
    const sub = await decodeSubmission(p, subDir ?? env.scratch);
    return await computeSample(
      { task, bundle, key: p.key, sub, submissionHash: p.submission_hash, gradingKey: p.grading_key },
      {
        targetFor: (t) => env.targetFor(t, p.sandbox),
        sandbox: p.sandbox,
        scratchParent: env.scratch,
        outDir: env.scratch,
        toolkitVersion: env.toolkitVersion,
      },
    );
  } catch (err) {
    const reason = isLmrError(err) ? err.format() : err instanceof Error ? err.message : String(err);
    return makeInfraSample(p, reason, t0);
  } finally {
    if (subDir) await rm(subDir, { recursive: true, force: true });
  }
}

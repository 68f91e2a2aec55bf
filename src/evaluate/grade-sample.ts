import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createTwoFilesPatch } from "diff";
import { join } from "node:path";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { BUNDLE_FILES, type BundleInfo } from "../bundle/index.js";
import type { ResolvedTask } from "../manifest/types.js";
import { DIFF_FILE, JUNIT_FILE, LOG_FILE, RESULT_FILE, readTaskSet, type SampleKey, type SampleResult, type Verdict } from "../run-folder/index.js";
import { candidateRequest } from "../runner/candidate.js";
import { runTests } from "../runner/index.js";
import type { RunTarget } from "../runner/run-target.js";
import type { RunOutcome, SandboxChoice } from "../runner/types.js";
import { readVerification } from "../verify/verify-task.js";
import { applySubmission } from "./apply-submission.js";
import { enforceVerifiedTests, type VerifiedTests } from "./test-set.js";
import type { Submission } from "./submissions.js";
import type { OraclePool } from "./oracle-pool.js";

/** One (task, model, sample) to grade. `sub` is undefined when the model gave nothing for the task. */
export interface GradeJob {
  task: ResolvedTask;
  bundle: BundleInfo;
  key: SampleKey;
  sub: Submission | undefined;
  /** Hash of the submission's content for the target files ("none" without one). */
  submissionHash: string;
  /** Submission hash + everything else that decides the verdict: the resume key. */
  gradingKey: string;
}

export interface GradeContext {
  /** Where a task's runs happen: resolved once per environment (createTargetResolver). */
  targetFor: (task: ResolvedTask) => Promise<RunTarget>;
  sandbox: SandboxChoice;
  /** Where the runner makes its scratch copies (RUN_DIR/.scratch). */
  scratchParent: string;
  /** Hidden inside the sandbox besides the bundle and the task: the run folder. */
  outDir: string;
  toolkitVersion: string;
  /** Leave each run's scratch and cgroup removal to settleDeferred() (runner/deferred-cleanup.ts), which the caller awaits. */
  deferCleanup?: boolean;
  /** Fork each task's tests from one oracles' server (oracle-pool.ts); without it every run starts a fresh oracle. */
  oracles?: OraclePool;
}

const NO_COUNTS = { passed: 0, failed: 0, errors: 0, skipped: 0 };

/** One graded sample: its result.json and the two files beside it. What a queue worker sends back. */
export interface GradedSample {
  result: SampleResult;
  log: string;
  junit: string;
  /** The applied submission against the masked target files (absent when it did not apply). */
  diff?: string;
}

/**
 * Grades one sample without touching the run folder (a queue worker has none): the files, as values
 * (writeSampleFiles writes them). Never throws for a sample's own problems: whatever goes wrong on
 * our side becomes an `infra` result, so one sample cannot stop the run.
 */
export async function computeSample(job: GradeJob, ctx: GradeContext): Promise<GradedSample> {
  const m = job.task.manifest;
  const t0 = performance.now();
  let outcome: RunOutcome | undefined;
  let verdict: Verdict;
  let reason: string | undefined;
  let log = "";
  let diff: string | undefined;
  try {
    ({ verdict, reason, outcome, log, diff } = await grade(job, ctx));
  } catch (err) {
    verdict = "infra";
    reason = err instanceof Error ? err.message : String(err);
  } finally {
    ctx.oracles?.release(job.task);
  }
  const result: SampleResult = {
    task_id: m.id,
    model: job.key.model,
    sample: job.key.sample,
    category: m.category,
    set: readTaskSet(m),
    submission_hash: job.submissionHash,
    grading_key: job.gradingKey,
    toolkit_version: ctx.toolkitVersion,
    verdict,
    ...(reason ? { reason } : {}),
    counts: outcome?.counts ?? NO_COUNTS,
    tests: outcome?.tests ?? [],
    duration_s: Math.round(performance.now() - t0) / 1000,
    backend: outcome?.backend ?? "none",
    ...(outcome ? { python: outcome.python } : {}),
    ...(outcome?.isolation ? { isolation: outcome.isolation } : {}),
    finished_at: new Date().toISOString(),
  };
  return { result, log, junit: outcome?.junit_xml ?? "", ...(diff !== undefined ? { diff } : {}) };
}

/** A sample's folder: the old result.json goes first and the new one comes last, renamed into place. */
export async function writeSampleFiles(dir: string, graded: GradedSample): Promise<void> {
  await rm(join(dir, RESULT_FILE), { force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, LOG_FILE), graded.log);
  await writeFile(join(dir, JUNIT_FILE), graded.junit);
  if (graded.diff !== undefined) await writeFile(join(dir, DIFF_FILE), graded.diff);
  else await rm(join(dir, DIFF_FILE), { force: true });
  await writeFileAtomic(join(dir, RESULT_FILE), JSON.stringify(graded.result, null, 2) + "\n");
}

async function grade(job: GradeJob, ctx: GradeContext): Promise<{ verdict: Verdict; reason?: string; outcome?: RunOutcome; log: string; diff?: string }> {
  if (!job.sub) return { verdict: "invalid", reason: `no submission from model '${job.key.model}' for this task`, log: "" };
  if (job.sub.content.kind === "stopped")
    return { verdict: job.sub.content.verdict, reason: job.sub.content.reason, log: `lmr: ${job.sub.content.verdict}: ${job.sub.content.reason}\n` };
  const m = job.task.manifest;
  const mount = m.tests.mount ?? "lmr_tests";
  const workspace = join(job.bundle.dir, BUNDLE_FILES.workspace);
  const targetFiles = [...new Set(job.bundle.targets.map((t) => t.file))];
  const applied = await applySubmission(job.sub, workspace, targetFiles, mount);
  if (!applied.ok) return { verdict: "invalid", reason: applied.reason, log: `lmr: invalid submission: ${applied.reason}\n` };
  const diff = await diffAgainstMasked(workspace, applied.overlay);
  const node = m.tests.runner === "node-test";
  const target = await ctx.targetFor(job.task);
  const python = target.python;
  const oracles = node ? undefined : await ctx.oracles?.acquire(job.task, job.bundle, target);
  const outcome = await runTests(
    {
      target,
      tree: workspace,
      overlay: applied.overlay,
      grader: join(job.bundle.dir, BUNDLE_FILES.grader),
      mount,
      python,
      sandbox: ctx.sandbox,
      timeoutTotalS: m.tests.timeout_total_s,
      timeoutPerTestS: m.tests.timeout_per_test_s,
      network: m.environment.network,
      environment: m.environment,
      // a verified task's reference imports what it needs: a module the image lacks is the submission's own import
      missingModule: "error",
      ...(m.tests.pytest_args ? { pytestArgs: m.tests.pytest_args } : {}),
      ...(node ? { testRunner: "node-test" as const } : {}),
      ...candidateRequest(m),
      hidePaths: [job.bundle.dir, job.task.dir, ctx.outDir],
      scratchParent: ctx.scratchParent,
      ...(ctx.deferCleanup ? { deferCleanup: true } : {}),
    },
    oracles ? { oracles } : {},
  );
  const verified = await verifiedTestsOf(job.task, job.bundle);
  const checked = enforceVerifiedTests(outcome, verified);
  const ignored = applied.ignored.length > 0 ? `lmr: ignored non-target files from the submission: ${applied.ignored.join(", ")}\n` : "";
  return { verdict: checked.status, ...(checked.reason ? { reason: checked.reason } : {}), outcome: checked, log: ignored + checked.log, diff };
}

const verifiedSets = new Map<string, Promise<VerifiedTests | undefined>>();

/**
 * The graded set the task's verification.json recorded, when that record is of this very
 * grader (its hash is the bundle's): a record of other tests says nothing about these.
 */
function verifiedTestsOf(task: ResolvedTask, bundle: BundleInfo): Promise<VerifiedTests | undefined> {
  const key = `${task.dir}\0${bundle.hashes.grader}`;
  let got = verifiedSets.get(key);
  if (!got) {
    got = readVerification(task).then((r) => {
      const tests = r?.steps?.reference?.tests;
      if (!r || r.inputs?.grader !== bundle.hashes.grader || !Array.isArray(tests)) return undefined;
      return { tests, skipped: r.steps.reference.skipped_tests ?? [] };
    });
    verifiedSets.set(key, got);
  }
  return got;
}

/** What the submission changed in each target file, as one unified diff (what lmr judge and the HTML report show). */
async function diffAgainstMasked(workspace: string, overlay: Record<string, string>): Promise<string> {
  const parts: string[] = [];
  for (const path of Object.keys(overlay).sort()) {
    const before = await readFile(join(workspace, path), "utf8").catch(() => "");
    parts.push(createTwoFilesPatch(`a/${path}`, `b/${path}`, before, overlay[path]!, undefined, undefined, { context: 3 }).replace(/^=+\n/, ""));
  }
  return parts.join("");
}

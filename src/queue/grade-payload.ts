import { lstat, mkdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { BundleManifest } from "../bundle/index.js";
import { sha256 } from "../core/hash.js";
import type { GradedSample, GradeJob } from "../evaluate/grade-sample.js";
import type { Submission, SubmissionContent } from "../evaluate/submissions.js";
import type { TaskSet } from "../manifest/types.js";
import { readTaskSet, type SampleKey } from "../run-folder/index.js";
import type { SandboxChoice } from "../runner/types.js";

/** A target file of a workspace-folder submission, as it lay on the coordinator's disk. */
type WireTreeEntry = { type: "file"; base64: string } | { type: "symlink"; target: string } | { type: "other" };

/** A submission on the wire: a folder travels as its target files only (all a grading reads of it). */
type WireSubmission =
  | { kind: "files"; files: Record<string, string> }
  | { kind: "patch"; patch: string }
  | { kind: "invalid"; reason: string }
  | { kind: "stopped"; verdict: "timeout" | "infra"; reason: string }
  | { kind: "tree"; entries: Record<string, WireTreeEntry> };

/**
 * One `eval/grade` job: everything a worker needs besides its own checkout.
 * The task travels as its id and hashes: the worker builds the bundle from
 * its tasks folder and refuses the job when the hashes differ, so a worker
 * with another version of a task can never produce a wrong verdict.
 */
export interface GradePayload {
  v: 1;
  run_id: string;
  key: SampleKey;
  category: string;
  set: TaskSet;
  /** The coordinator's bundle hashes: task inputs, workspace, reference, grader. */
  hashes: BundleManifest["hashes"];
  toolkit_version: string;
  sandbox: SandboxChoice;
  submission_hash: string;
  grading_key: string;
  submission: WireSubmission | null;
  origin: string;
}

/** What a worker returns for a job: the graded files and who graded them. */
export interface GradeReturn {
  worker: string;
  graded: GradedSample;
}

/** The job id of a sample: its key and grading key, so a re-add of the same sample is a no-op and a changed one is a new job. */
export function nameGradeJob(job: Pick<GradeJob, "key" | "gradingKey">): string {
  return `g-${sha256(JSON.stringify([job.key.task_id, job.key.model, job.key.sample, job.gradingKey])).slice(0, 32)}`;
}

export async function encodeGradeJob(job: GradeJob, runId: string, sandbox: SandboxChoice, toolkitVersion: string): Promise<GradePayload> {
  const m = job.task.manifest;
  return {
    v: 1,
    run_id: runId,
    key: job.key,
    category: m.category,
    set: readTaskSet(m),
    hashes: job.bundle.hashes,
    toolkit_version: toolkitVersion,
    sandbox,
    submission_hash: job.submissionHash,
    grading_key: job.gradingKey,
    submission: job.sub ? await encodeContent(job.sub.content, [...new Set(job.bundle.targets.map((t) => t.file))]) : null,
    origin: job.sub?.origin ?? "",
  };
}

async function encodeContent(c: SubmissionContent, targetFiles: string[]): Promise<WireSubmission> {
  if (c.kind !== "tree") return c;
  const entries: Record<string, WireTreeEntry> = {};
  for (const f of targetFiles) {
    const path = join(c.dir, f);
    const st = await lstat(path).catch(() => undefined);
    if (!st) continue; // missing: applySubmission says so on the worker, as it would here
    if (st.isSymbolicLink()) entries[f] = { type: "symlink", target: await readlink(path) };
    else if (st.isFile()) entries[f] = { type: "file", base64: (await readFile(path)).toString("base64") };
    else entries[f] = { type: "other" };
  }
  return { kind: "tree", entries };
}

/**
 * The submission back as a Submission. A tree is laid out under `scratch`
 * exactly as far as grading looks (files, links never followed, other kinds
 * as folders), so applySubmission gives the verdict and reason it gives locally.
 */
export async function decodeSubmission(p: GradePayload, scratch: string): Promise<Submission | undefined> {
  const s = p.submission;
  if (s === null) return undefined;
  const base = { ...p.key, origin: p.origin };
  if (s.kind !== "tree") return { ...base, content: s };
  for (const [rel, e] of Object.entries(s.entries)) {
    const path = join(scratch, rel);
    await mkdir(dirname(path), { recursive: true });
    if (e.type === "file") await writeFile(path, Buffer.from(e.base64, "base64"));
    else if (e.type === "symlink") await symlink(e.target, path);
    else await mkdir(path, { recursive: true });
  }
  return { ...base, content: { kind: "tree", dir: scratch } };
}

/** An infra result for a job no grading could be run for (unknown task, hash mismatch, a job that failed in the queue). */
export function makeInfraSample(
  p: Pick<GradePayload, "key" | "category" | "set" | "submission_hash" | "grading_key" | "toolkit_version">,
  reason: string,
  startedMs: number,
): GradedSample {
  return {
    result: {
      task_id: p.key.task_id,
      model: p.key.model,
      sample: p.key.sample,
      category: p.category,
      set: p.set,
      submission_hash: p.submission_hash,
      grading_key: p.grading_key,
      toolkit_version: p.toolkit_version,
      verdict: "infra",
      reason,
      counts: { passed: 0, failed: 0, errors: 0, skipped: 0 },
      tests: [],
      duration_s: Math.round(performance.now() - startedMs) / 1000,
      backend: "none",
      finished_at: new Date().toISOString(),
    },
    log: `lmr: ${reason}\n`,
    junit: "",
  };
}

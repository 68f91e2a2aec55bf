import { lstat, readFile, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { LmrError, type Problem } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import { SAMPLE_ID, describeSampleKey, type SampleKey } from "../run-folder/index.js";

/**
 * What a submission gives for one task: whole files, a unified diff, a workspace folder, or
 * nothing usable, with the producer's reason (a row with `"invalid": "<why>"`, as `lmr
 * generate` writes for a reply that held no code): graded `invalid` with that reason.
 */
export type SubmissionContent =
  | { kind: "files"; files: Record<string, string> }
  | { kind: "patch"; patch: string }
  | { kind: "tree"; dir: string }
  | { kind: "invalid"; reason: string }
  /** A producer that ran the agent and saw it stop short (`"timeout": "<why>"`) or break on its side (`"infra": "<why>"`): graded with that verdict. */
  | { kind: "stopped"; verdict: "timeout" | "infra"; reason: string };

/** One row of the submissions: a (task, model, sample) key and what it gives. */
export interface Submission extends SampleKey {
  content: SubmissionContent;
  /** Where it came from: "FILE:LINE" for a JSONL row, the folder for a workspace. */
  origin: string;
}

export interface LoadedSubmissions {
  submissions: Submission[];
  /** Rows or folders that cannot be graded as they are: bad input, each with its line. */
  problems: Problem[];
}

/** Model name of rows that give none. */
export const UNKNOWN_MODEL = "unknown";

/**
 * Reads submissions from a folder of workspaces (`DIR/<task_id>/` or
 * `DIR/<task_id>/<sample>/`) or a JSONL file with one row per sample:
 * `{task_id, model, patch}` (SWE-bench's `instance_id`, `model_name_or_path`,
 * `model_patch` also accepted) or `{task_id, model, files: {path: content}}`.
 * Samples are numbered per (task, model) in file order unless a row gives
 * its own "sample" id; a (task, model, sample) key given twice is a problem
 * naming both lines.
 */
export async function loadSubmissions(path: string): Promise<LoadedSubmissions> {
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    throw new LmrError({ code: "eval/submissions-missing", file: path, message: "submissions path does not exist", hint: "pass a folder of workspaces (one per task id) or a .jsonl file" });
  }
  return info.isDirectory() ? loadFolder(path) : loadJsonl(path);
}

async function loadJsonl(path: string): Promise<LoadedSubmissions> {
  const text = await readFile(path, "utf8");
  const submissions: Submission[] = [];
  const problems: Problem[] = [];
  const counts = new Map<string, number>();
  const seen = new Map<string, number>();
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === "") continue;
    const where = { file: `${path}:${i + 1}` };
    let row: Record<string, unknown>;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
      row = v as Record<string, unknown>;
    } catch (err) {
      problems.push({ ...where, message: `not a JSON object (${(err as Error).message})`, hint: "one JSON object per line" });
      continue;
    }
    const taskId = row.task_id ?? row.instance_id;
    if (typeof taskId !== "string" || taskId === "") {
      problems.push({ ...where, pointer: "/task_id", message: "task_id is missing or not a string", hint: 'add "task_id": "<task id>"' });
      continue;
    }
    const model = row.model ?? row.model_name_or_path ?? UNKNOWN_MODEL;
    if (typeof model !== "string" || model.trim() === "") {
      problems.push({ ...where, pointer: "/model", message: "model is not a non-empty string", hint: 'give "model": "<model name>", or leave it out' });
      continue;
    }
    const patch = row.patch ?? row.model_patch;
    let content: SubmissionContent;
    if (typeof row.invalid === "string" && row.invalid.trim() !== "") content = { kind: "invalid", reason: row.invalid };
    else if (typeof row.timeout === "string" && row.timeout.trim() !== "") content = { kind: "stopped", verdict: "timeout", reason: row.timeout };
    else if (typeof row.infra === "string" && row.infra.trim() !== "") content = { kind: "stopped", verdict: "infra", reason: row.infra };
    else if (typeof patch === "string") content = { kind: "patch", patch };
    else if (isStringRecord(row.files)) content = { kind: "files", files: row.files };
    else {
      problems.push({ ...where, pointer: "/patch", message: "row has neither a string 'patch' nor a 'files' object of strings", hint: 'give "patch": "<unified diff>" or "files": {"path": "content"}' });
      continue;
    }
    const perModel = `${taskId}\0${model}`;
    const n = counts.get(perModel) ?? 0;
    counts.set(perModel, n + 1);
    const sample = typeof row.sample === "string" || typeof row.sample === "number" ? String(row.sample) : String(n);
    if (!SAMPLE_ID.test(sample)) {
      problems.push({ ...where, pointer: "/sample", message: `sample id ${JSON.stringify(sample)} is not a plain name (letters, digits, '.', '_', '-'; at most 64)`, hint: 'use e.g. "sample": 0 or "sample": "run-a"' });
      continue;
    }
    const key: SampleKey = { task_id: taskId, model, sample };
    const id = JSON.stringify([taskId, model, sample]);
    const first = seen.get(id);
    if (first !== undefined) {
      problems.push({ ...where, pointer: row.sample === undefined ? "" : "/sample", message: `${describeSampleKey(key)} is given twice: on line ${first} and on line ${i + 1}`, hint: 'give each sample of a task and model its own "sample" id, or drop one of the two rows' });
      continue;
    }
    seen.set(id, i + 1);
    submissions.push({ ...key, content, origin: where.file });
  }
  return { submissions, problems };
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}

async function loadFolder(root: string): Promise<LoadedSubmissions> {
  const submissions: Submission[] = [];
  const problems: Problem[] = [];
  let model = UNKNOWN_MODEL;
  try {
    model = (await readFile(join(root, "model.txt"), "utf8")).trim() || model;
  } catch {
    // optional
  }
  const entries = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort();
  for (const taskId of entries) {
    const dir = join(root, taskId);
    // Hidden entries (.git, .DS_Store) say nothing about the layout.
    const children = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith("."));
    const sampleDirs = children.filter((e) => e.isDirectory() && /^\d+$/.test(e.name)).map((e) => e.name);
    const isSamples = sampleDirs.length > 0 && children.every((e) => e.isDirectory() && /^\d+$/.test(e.name));
    if (isSamples) {
      for (const s of sampleDirs.sort((a, b) => Number(a) - Number(b))) submissions.push({ task_id: taskId, sample: s, model, content: { kind: "tree", dir: join(dir, s) }, origin: join(dir, s) });
    } else {
      submissions.push({ task_id: taskId, sample: "0", model, content: { kind: "tree", dir }, origin: dir });
    }
  }
  return { submissions, problems };
}

/** Content hash of what a submission gives for the target files: part of its resume key. */
export async function hashSubmission(sub: Submission, targetFiles: string[]): Promise<string> {
  const c = sub.content;
  if (c.kind === "patch") return sha256(`patch\n${c.patch}`);
  if (c.kind === "invalid") return sha256(`invalid\n${c.reason}`);
  if (c.kind === "stopped") return sha256(`${c.verdict}\n${c.reason}`);
  if (c.kind === "files") return sha256(`files\n${Object.keys(c.files).sort().map((k) => `${k}\n${sha256(c.files[k]!)}`).join("\n")}`);
  const parts: string[] = [];
  for (const f of [...targetFiles].sort()) parts.push(`${f}\n${await hashTreeFile(join(c.dir, f))}`);
  return sha256(`tree\n${parts.join("\n")}`);
}

/** A regular file's content hash; a symlink is hashed as a link (never followed), anything else by kind. */
async function hashTreeFile(path: string): Promise<string> {
  const st = await lstat(path).catch(() => undefined);
  if (!st) return "missing";
  if (st.isSymbolicLink()) return `symlink ${await readlink(path).catch(() => "?")}`;
  if (!st.isFile()) return "not-a-file";
  return sha256(await readFile(path));
}

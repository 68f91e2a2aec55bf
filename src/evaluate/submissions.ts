import { lstat, readFile, readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { LmrError, type Problem } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import { checkRelativePath } from "../core/paths.js";
import { deriveTaskId } from "../manifest/task-id.js";
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
const UNKNOWN_MODEL = "unknown";

/**
 * Reads submissions from a folder of workspaces (`DIR/<task_id>/` or
 * `DIR/<task_id>/<sample>/`) or a JSONL file with one row per sample:
 * `{task_id, model, patch}` (SWE-bench's `instance_id`, `model_name_or_path`,
 * `model_patch` also accepted) or `{task_id, model, files: {path: content}}`.
 * Samples are numbered per (task, model) in file order unless a row gives
 * its own "sample" id; a (task, model, sample) key given twice is a problem
 * naming both lines.
 */
export async function loadSubmissions(path: string, opts: { knownTaskIds?: readonly string[] } = {}): Promise<LoadedSubmissions> {
  const info = await stat(path).catch(() => undefined);
  if (!info) {
    throw new LmrError({
      code: "eval/submissions-missing",
      file: path,
      message: "submissions path does not exist",
      hint: "pass a folder of workspaces (one per task id) or a .jsonl file",
    });
  }
  const known = new Set(opts.knownTaskIds ?? []);
  return info.isDirectory() ? loadFolder(path, known) : loadJsonl(path, known);
}

/**
 * The task ids an LMR-Bench paper folder name stands for: `lmr import` names the
 * tasks of folder "1-DPO" "dpo-<function>", so every known id that is
 * deriveTaskId(folder) or starts with it and a hyphen. Empty when none is known.
 */
export function mapLmrBenchFolder(folder: string, known: ReadonlySet<string>): string[] {
  const stem = deriveTaskId(folder);
  if (stem === "") return [];
  return [...known].filter((id) => id === stem || id.startsWith(`${stem}-`)).sort();
}

/** LMR-Bench paper folders are named "<n>-<Name>"; a task id never has capitals or underscores, but may start with digits. */
function looksLikeLmrBenchFolder(name: string): boolean {
  return /^\d+[-_ ]+\S/.test(name);
}

/** OpenHands' output.jsonl row: its git_patch, model and error, or undefined for a row of another shape. */
function readOpenHandsRow(row: Record<string, unknown>): { patch?: unknown; model?: unknown; error?: string } | undefined {
  const tr = row.test_result;
  if (tr === undefined) return undefined;
  const meta = typeof row.metadata === "object" && row.metadata !== null ? (row.metadata as Record<string, unknown>) : {};
  const llm = typeof meta.llm_config === "object" && meta.llm_config !== null ? (meta.llm_config as Record<string, unknown>) : {};
  const model = llm.model ?? meta.model_name;
  const error = typeof row.error === "string" && row.error.trim() !== "" ? row.error : undefined;
  const patch = typeof tr === "object" && tr !== null && !Array.isArray(tr) ? (tr as Record<string, unknown>).git_patch : undefined;
  return { patch, ...(model !== undefined ? { model } : {}), ...(error ? { error } : {}) };
}

async function loadJsonl(path: string, known: ReadonlySet<string>): Promise<LoadedSubmissions> {
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
    const openHands = readOpenHandsRow(row);
    const model = row.model ?? row.model_name_or_path ?? openHands?.model ?? UNKNOWN_MODEL;
    if (typeof model !== "string" || model.trim() === "") {
      problems.push({ ...where, pointer: "/model", message: "model is not a non-empty string", hint: 'give "model": "<model name>", or leave it out' });
      continue;
    }
    const patch = row.patch ?? row.model_patch ?? openHands?.patch;
    let content: SubmissionContent;
    if (openHands && row.patch === undefined && row.model_patch === undefined && typeof openHands.patch !== "string") {
      if (!openHands.error) {
        problems.push({
          ...where,
          pointer: "/test_result/git_patch",
          message: "an OpenHands row (it has test_result) without a string test_result.git_patch",
          hint: 'OpenHands writes {"instance_id": …, "test_result": {"git_patch": "<diff>"}}; give the patch there, or "patch" at the top level',
        });
        continue;
      }
      content = { kind: "invalid", reason: `OpenHands reported an error and no patch: ${openHands.error}` };
    } else if (openHands?.error && typeof patch === "string" && patch.trim() === "")
      content = { kind: "invalid", reason: `OpenHands reported an error and an empty git_patch: ${openHands.error}` };
    else if (typeof row.invalid === "string" && row.invalid.trim() !== "") content = { kind: "invalid", reason: row.invalid };
    else if (typeof row.timeout === "string" && row.timeout.trim() !== "") content = { kind: "stopped", verdict: "timeout", reason: row.timeout };
    else if (typeof row.infra === "string" && row.infra.trim() !== "") content = { kind: "stopped", verdict: "infra", reason: row.infra };
    else if (typeof patch === "string") content = { kind: "patch", patch };
    else if (isStringRecord(row.files)) content = { kind: "files", files: row.files };
    else {
      problems.push({
        ...where,
        pointer: "/patch",
        message: "row has neither a string 'patch' nor a 'files' object of strings",
        hint: 'give "patch": "<unified diff>" or "files": {"path": "content"}',
      });
      continue;
    }
    // An LMR-Bench folder name as the id (an OpenHands run over LMR-Bench): the row is the patch for each task of that folder.
    const mapped = !known.has(taskId) && looksLikeLmrBenchFolder(taskId) ? mapLmrBenchFolder(taskId, known) : [];
    for (const tid of mapped.length > 0 ? mapped : [taskId]) {
      const perModel = `${tid}\0${model}`;
      const n = counts.get(perModel) ?? 0;
      counts.set(perModel, n + 1);
      const sample = typeof row.sample === "string" || typeof row.sample === "number" ? String(row.sample) : String(n);
      if (!SAMPLE_ID.test(sample)) {
        problems.push({
          ...where,
          pointer: "/sample",
          message: `sample id ${JSON.stringify(sample)} is not a plain name (letters, digits, '.', '_', '-'; at most 64)`,
          hint: 'use e.g. "sample": 0 or "sample": "run-a"',
        });
        break;
      }
      const key: SampleKey = { task_id: tid, model, sample };
      const id = JSON.stringify([tid, model, sample]);
      const first = seen.get(id);
      if (first !== undefined) {
        problems.push({
          ...where,
          pointer: row.sample === undefined ? "" : "/sample",
          message: `${describeSampleKey(key)} is given twice: on line ${first} and on line ${i + 1}`,
          hint: 'give each sample of a task and model its own "sample" id, or drop one of the two rows',
        });
        continue;
      }
      seen.set(id, i + 1);
      submissions.push({ ...key, content, origin: where.file });
    }
  }
  return { submissions, problems };
}

function isStringRecord(v: unknown): v is Record<string, string> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === "string");
}

/**
 * An LMR-Bench paper folder (it holds info.json): the filled repository is its
 * `repo_folder_name` subfolder, and it stands for the task its info.json names
 * (`lmr.task_id`, as lmr export writes) or else every task lmr import would
 * have made of it (mapLmrBenchFolder).
 */
async function readLmrBenchFolder(
  dir: string,
  name: string,
  model: string,
  known: ReadonlySet<string>,
): Promise<{ submissions: Submission[]; problems: Problem[] }> {
  const infoFile = join(dir, "info.json");
  let info: Record<string, unknown>;
  try {
    const v: unknown = JSON.parse(await readFile(infoFile, "utf8"));
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
    info = v as Record<string, unknown>;
  } catch (err) {
    return {
      submissions: [],
      problems: [
        {
          file: infoFile,
          message: `an LMR-Bench folder's info.json that cannot be read (${(err as Error).message})`,
          hint: "fix the JSON, or remove info.json if the folder is a workspace named by its task id",
        },
      ],
    };
  }
  let repo = typeof info.repo_folder_name === "string" && info.repo_folder_name.trim() !== "" ? info.repo_folder_name : undefined;
  if (repo === undefined) {
    const subdirs = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory() && !e.name.startsWith(".") && e.name !== "golden_files")
      .map((e) => e.name);
    if (subdirs.length !== 1)
      return {
        submissions: [],
        problems: [
          {
            file: infoFile,
            pointer: "/repo_folder_name",
            message: `repo_folder_name is missing and the folder has ${subdirs.length} candidate repository folders${subdirs.length > 0 ? ` (${subdirs.join(", ")})` : ""}`,
            hint: 'add "repo_folder_name": "<the repository folder>" to info.json',
          },
        ],
      };
    repo = subdirs[0]!;
  }
  const repoDir = join(dir, repo);
  const link = checkRelativePath(repo) === undefined ? await firstSymlink(dir, repo) : undefined;
  if (link !== undefined) {
    return {
      submissions: [],
      problems: [
        {
          file: infoFile,
          pointer: "/repo_folder_name",
          message: `repo_folder_name '${repo}' goes through a symbolic link (${link}): nothing is graded from a link`,
          hint: "put the filled repository itself in the folder",
        },
      ],
    };
  }
  const st = await lstat(repoDir).catch(() => undefined);
  if (!st?.isDirectory() || checkRelativePath(repo) !== undefined) {
    return {
      submissions: [],
      problems: [
        {
          file: infoFile,
          pointer: "/repo_folder_name",
          message: `repo_folder_name '${repo}' is not a folder inside ${dir}`,
          hint: "put the filled repository there, or fix repo_folder_name",
        },
      ],
    };
  }
  const lmr = typeof info.lmr === "object" && info.lmr !== null ? (info.lmr as Record<string, unknown>) : {};
  const ids = typeof lmr.task_id === "string" && lmr.task_id !== "" ? [lmr.task_id] : known.has(name) ? [name] : mapLmrBenchFolder(name, known);
  if (ids.length === 0) {
    const stem = deriveTaskId(name);
    return {
      submissions: [],
      problems: [
        {
          file: dir,
          message: `the LMR-Bench folder '${name}' stands for no task here${stem ? ` (tasks made of it by lmr import have ids '${stem}' or '${stem}-…')` : ""}`,
          hint: 'add "lmr": {"task_id": "<task id>"} to its info.json, rename the folder to the task id, or point --tasks-dir at the tasks it came from',
        },
      ],
    };
  }
  return { submissions: ids.map((task_id) => ({ task_id, sample: "0", model, content: { kind: "tree", dir: repoDir }, origin: repoDir })), problems: [] };
}

async function loadFolder(root: string, known: ReadonlySet<string>): Promise<LoadedSubmissions> {
  const submissions: Submission[] = [];
  const problems: Problem[] = [];
  let model = UNKNOWN_MODEL;
  try {
    model = (await readFile(join(root, "model.txt"), "utf8")).trim() || model;
  } catch {
    // optional
  }
  const all = await readdir(root, { withFileTypes: true });
  for (const e of all.filter((x) => x.isSymbolicLink() && !x.name.startsWith(".")).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    problems.push({
      file: join(root, e.name),
      message: `'${e.name}' is a symbolic link: nothing is graded from a link`,
      hint: "put the task's workspace itself in the folder",
    });
  }
  const entries = all
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
  for (const taskId of entries) {
    const dir = join(root, taskId);
    // Hidden entries (.git, .DS_Store) say nothing about the layout.
    const children = (await readdir(dir, { withFileTypes: true })).filter((e) => !e.name.startsWith("."));
    if (children.some((e) => e.isFile() && e.name === "info.json") && !known.has(taskId)) {
      const lb = await readLmrBenchFolder(dir, taskId, model, known);
      for (const sub of lb.submissions) {
        const other = submissions.find((x) => x.task_id === sub.task_id && x.model === sub.model && x.sample === sub.sample);
        if (other)
          problems.push({
            file: dir,
            message: `${describeSampleKey(sub)} is given twice: by ${other.origin} and by ${sub.origin}`,
            hint: "keep one folder per task",
          });
        else submissions.push(sub);
      }
      problems.push(...lb.problems);
      continue;
    }
    for (const e of children.filter((x) => x.isSymbolicLink() && /^\d+$/.test(x.name))) {
      problems.push({
        file: join(dir, e.name),
        message: `sample folder '${e.name}' is a symbolic link: nothing is graded from a link`,
        hint: "put the sample's workspace itself in the folder",
      });
    }
    const sampleDirs = children.filter((e) => e.isDirectory() && /^\d+$/.test(e.name)).map((e) => e.name);
    const isSamples = sampleDirs.length > 0 && children.every((e) => e.isDirectory() && /^\d+$/.test(e.name));
    if (isSamples) {
      for (const s of sampleDirs.sort((a, b) => Number(a) - Number(b)))
        submissions.push({ task_id: taskId, sample: s, model, content: { kind: "tree", dir: join(dir, s) }, origin: join(dir, s) });
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
  if (c.kind === "files")
    return sha256(
      `files\n${Object.keys(c.files)
        .sort()
        .map((k) => `${k}\n${sha256(c.files[k]!)}`)
        .join("\n")}`,
    );
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

/**
 * The first path component of `rel` under `root` that is a symbolic link (relative to root),
 * or undefined. Components that do not exist end the walk: a missing file is another problem.
 */
export async function firstSymlink(root: string, rel: string): Promise<string | undefined> {
  let at = root;
  const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    const st = await lstat(at).catch(() => undefined);
    if (!st) return undefined;
    if (st.isSymbolicLink()) return parts.slice(0, i + 1).join("/");
  }
  return undefined;
}

/**
 * Folder submissions whose target files are reached through a symbolic link (a linked
 * sub-folder could point at the reference, or anywhere the evaluator can read): each is a
 * problem, so the run stops before anything is graded.
 */
export async function linkedTargetProblems(subs: readonly Submission[], targetsOf: (taskId: string) => string[] | undefined): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const sub of subs) {
    if (sub.content.kind !== "tree") continue;
    const rootLink = await lstat(sub.content.dir).then(
      (st) => st.isSymbolicLink(),
      () => false,
    );
    if (rootLink) {
      problems.push({ file: sub.content.dir, message: `${describeSampleKey(sub)}: the submitted folder is a symbolic link`, hint: "submit the folder itself" });
      continue;
    }
    for (const file of targetsOf(sub.task_id) ?? []) {
      const link = await firstSymlink(sub.content.dir, file);
      if (link !== undefined) {
        problems.push({
          file: join(sub.content.dir, link),
          message: `${describeSampleKey(sub)}: ${file} is reached through the symbolic link '${link}'`,
          hint: "submit the files themselves: nothing is graded from a link",
        });
        break;
      }
    }
  }
  return problems;
}

import { readFile, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Finding } from "./schema-errors.js";
import { asObject } from "./semantic.js";

/*
 * Checks of what task files say, beyond their existence: an instruction still
 * holding the scaffold's TODO(author) markers, and alternative solutions whose
 * files are not exactly the task's target files.
 */

const TODO_MARKER = "TODO(author)";
const ALTERNATIVES = "alternatives";
const NAME = /^[a-z0-9]+([-_][a-z0-9]+)*$/;

export async function checkTaskContent(data: unknown, taskDir: string, opts: { finished?: boolean } = {}): Promise<Finding[]> {
  return [...(opts.finished ? await checkInstructionMarkers(data, taskDir) : []), ...(await checkAlternativeFiles(data, taskDir))];
}

/** The scaffolded instruction marks every decision left to its author; a task is not done while one is open. */
async function checkInstructionMarkers(data: unknown, taskDir: string): Promise<Finding[]> {
  const rel = asObject(data)?.instruction;
  if (typeof rel !== "string") return [];
  const text = await readFile(resolve(taskDir, rel), "utf8").catch(() => undefined);
  if (text === undefined) return [];
  const lines = text.split("\n").flatMap((l, i) => (l.includes(TODO_MARKER) ? [i + 1] : []));
  if (lines.length === 0) return [];
  const shown = lines.slice(0, 5).join(", ") + (lines.length > 5 ? ", …" : "");
  return [{ pointer: "/instruction", message: `'${rel}' still has ${lines.length} ${TODO_MARKER} marker(s), at line(s) ${shown}`, hint: `make each decision the marker asks for and delete the marker` }];
}

/** alternatives/<name>/ must hold every target file and nothing else, so it is graded exactly as a submission. */
async function checkAlternativeFiles(data: unknown, taskDir: string): Promise<Finding[]> {
  const targets = asObject(data)?.targets;
  const files = new Set(Array.isArray(targets) ? targets.map((t) => asObject(t)?.file).filter((f): f is string => typeof f === "string") : []);
  const root = join(taskDir, ALTERNATIVES);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return [];
  const out: Finding[] = [];
  const finding = (message: string, hint: string): Finding => ({ pointer: "", message: `${ALTERNATIVES}/${message}`, hint });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!e.isDirectory()) {
      out.push(finding(`${e.name} is not a folder`, "put each alternative in its own folder: alternatives/<name>/<target file>"));
      continue;
    }
    if (!NAME.test(e.name)) out.push(finding(`${e.name}: the folder name is not a slug`, "name it with lowercase letters, digits, '-' or '_', e.g. alternatives/vectorised"));
    const have = await listRelative(join(root, e.name));
    for (const f of files) if (!have.includes(f)) out.push(finding(`${e.name} lacks the target file ${f}`, `copy the workspace's ${f} there and fill in the target`));
    for (const f of have) if (!files.has(f)) out.push(finding(`${e.name}/${f} is not a target file`, "an alternative holds only the target files (the grader takes nothing else from a submission); remove it"));
  }
  return out;
}

async function listRelative(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === "__pycache__" || e.name.endsWith(".pyc") || e.name === ".DS_Store") continue;
    const rel = prefix + e.name;
    if (e.isDirectory()) out.push(...(await listRelative(join(dir, e.name), `${rel}/`)));
    else if ((await stat(join(dir, e.name))).isFile()) out.push(rel);
  }
  return out.sort();
}

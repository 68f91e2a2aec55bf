import { copyFile, mkdir, readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { listFiles } from "../core/hash.js";

/** Folder of a task that holds independently written solutions, one subfolder each. */
export const ALTERNATIVES_DIR = "alternatives";

/** One alternative solution: `alternatives/<name>/` with replacement target files. */
export interface Alternative {
  name: string;
  /** Files relative to the alternative's folder (= paths in the workspace). */
  files: string[];
}

const junk = (rel: string, isDir: boolean): boolean => {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  return isDir ? name === "__pycache__" || name === ".pytest_cache" : name.endsWith(".pyc") || name === ".DS_Store";
};

/** The alternatives of the task in `taskDir`, sorted by name; none when the folder is absent. */
export async function listAlternatives(taskDir: string): Promise<Alternative[]> {
  const root = join(taskDir, ALTERNATIVES_DIR);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const out: Alternative[] = [];
  for (const e of entries.filter((x) => x.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    out.push({ name: e.name, files: await listFiles(join(root, e.name), junk) });
  }
  return out;
}

/** Task-relative paths of every alternative file (for the task-input hash). */
export async function alternativeInputFiles(taskDir: string): Promise<string[]> {
  return (await listAlternatives(taskDir)).flatMap((a) => a.files.map((f) => `${ALTERNATIVES_DIR}/${a.name}/${f}`));
}

/** Copies the alternatives into `destDir` (the bundle's alternatives/, beside grader/, never in the workspace). */
export async function copyAlternatives(taskDir: string, destDir: string): Promise<Alternative[]> {
  const alts = await listAlternatives(taskDir);
  for (const alt of alts) {
    for (const f of alt.files) {
      const to = join(destDir, alt.name, f);
      await mkdir(dirname(to), { recursive: true });
      await copyFile(join(taskDir, ALTERNATIVES_DIR, alt.name, f), to);
    }
  }
  return alts;
}

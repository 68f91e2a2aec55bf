import { readFile, readdir, stat } from "node:fs/promises";
import { basename, join, relative, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { isInside, toPosix } from "../core/paths.js";
import { parseJsonText, type DuplicateKey } from "./json-text.js";

export const MANIFEST_FILE = "task.json";

/** A task.json read and parsed, not yet validated. */
export interface RawManifest {
  /** Absolute task directory. */
  dir: string;
  /** Absolute path of task.json. */
  manifestPath: string;
  /** task.json as shown to the user: relative to cwd when inside it, else absolute. */
  displayPath: string;
  data: unknown;
  duplicateKeys: DuplicateKey[];
}

/** A path for messages: relative to cwd when it is inside cwd, with '/' separators. */
export function displayPath(absolute: string, cwd = process.cwd()): string {
  return isInside(cwd, absolute) ? toPosix(relative(cwd, absolute)) || "." : absolute;
}

/** Accepts a task folder or the task.json inside it. */
export function resolveTaskDir(dirOrFile: string): string {
  const abs = resolve(dirOrFile);
  return basename(abs) === MANIFEST_FILE ? resolve(abs, "..") : abs;
}

/**
 * Reads and parses DIR/task.json. Throws LmrError (kind "input") when the folder or
 * file is missing or unreadable, or the JSON is malformed (with line and column).
 */
export async function readManifest(dirOrFile: string): Promise<RawManifest> {
  const dir = resolveTaskDir(dirOrFile);
  const manifestPath = join(dir, MANIFEST_FILE);
  const shown = displayPath(manifestPath);
  const dirInfo = await stat(dir).catch(() => undefined);
  if (!dirInfo?.isDirectory()) {
    throw new LmrError({
      code: "task/dir-missing",
      file: displayPath(dir),
      message: dirInfo ? "is not a folder" : "task folder does not exist",
      hint: "pass a task folder that holds a task.json, e.g. tasks/<id>",
    });
  }
  let text: string;
  try {
    text = await readFile(manifestPath, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmrError({
      code: code === "ENOENT" ? "manifest/missing" : "manifest/unreadable",
      file: shown,
      message: code === "ENOENT" ? "no task.json in this task folder" : `cannot read task.json (${code ?? String(err)})`,
      hint: code === "ENOENT" ? "create it with `lmr new`, or pass the right folder" : "check the file's permissions",
      cause: err,
    });
  }
  const parsed = parseJsonText(text);
  if (!parsed.ok) {
    const { line, column, message } = parsed.error;
    throw new LmrError({
      code: "manifest/bad-json",
      file: shown,
      message: `invalid JSON at line ${line}, column ${column} (${line}:${column}): ${message}`,
      hint: `fix the syntax at ${shown}:${line}:${column}; JSON allows no comments, trailing commas or single quotes`,
    });
  }
  return { dir, manifestPath, displayPath: shown, data: parsed.value, duplicateKeys: parsed.duplicateKeys };
}

/** Every immediate subfolder of `root` that holds a task.json, sorted by name. */
export async function findTaskDirs(root = "tasks"): Promise<string[]> {
  const abs = resolve(root);
  let entries;
  try {
    entries = await readdir(abs, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LmrError({
      code: "task/tasks-dir-missing",
      file: displayPath(abs),
      message: code === "ENOENT" ? "tasks folder does not exist" : code === "ENOTDIR" ? "is not a folder" : `cannot read tasks folder (${code ?? String(err)})`,
      hint: "run from the project root, pass --tasks-dir DIR, or name task folders as arguments",
      cause: err,
    });
  }
  const dirs: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const dir = join(abs, entry.name);
    // Follows symlinked task folders; the per-file symlink checks happen in validation.
    const isDir = entry.isDirectory() || (entry.isSymbolicLink() && (await stat(dir).catch(() => undefined))?.isDirectory());
    if (!isDir) continue;
    const manifest = await stat(join(dir, MANIFEST_FILE)).catch(() => undefined);
    if (manifest?.isFile()) dirs.push(dir);
  }
  return dirs.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

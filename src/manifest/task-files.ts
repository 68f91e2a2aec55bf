import { lstat, open, readdir, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { checkRelativePath, isInside } from "../core/paths.js";
import { checkFixtureClaims } from "./fixture-claims.js";
import { checkPaperLeaks } from "./paper-leaks.js";
import { checkReplacements } from "./standin-checks.js";
import type { Finding } from "./schema-errors.js";
import { asObject } from "./semantic.js";

/*
 * File-system checks of one manifest: the files it names in the task folder exist,
 * are what they should be, stay inside the folder (symlinks included) and are not
 * Git-LFS pointers; a local upstream exists inside the project.
 */

const LFS_POINTER = "version https://git-lfs.github.com/spec/";
/** Fixture folders are small; this bounds a walk through a folder that is not. */
const MAX_WALK = 10_000;

type Want = "file" | "file-or-dir";

interface TaskFileField {
  pointer: string;
  value: string;
  want: Want;
}

function listTaskFiles(data: unknown): TaskFileField[] {
  const m = asObject(data) ?? {};
  const out: TaskFileField[] = [];
  const add = (pointer: string, v: unknown, want: Want) => {
    if (typeof v === "string" && checkRelativePath(v) === undefined) out.push({ pointer, value: v, want });
  };
  add("/instruction", m.instruction, "file");
  add("/hints", m.hints, "file");
  add("/paper/text", asObject(m.paper)?.text, "file");
  add("/record/driver", asObject(m.record)?.driver, "file");
  const tests = asObject(m.tests);
  (Array.isArray(tests?.files) ? tests.files : []).forEach((f, i) => add(`/tests/files/${i}`, f, "file"));
  (Array.isArray(tests?.fixtures) ? tests.fixtures : []).forEach((f, i) => add(`/tests/fixtures/${i}`, f, "file-or-dir"));
  return out;
}

export async function checkTaskFiles(data: unknown, taskDir: string): Promise<Finding[]> {
  const realTaskDir = await realpath(taskDir);
  const findings: Finding[] = [];
  for (const field of listTaskFiles(data)) {
    findings.push(...(await checkTaskFile(field, taskDir, realTaskDir)));
  }
  findings.push(...(await checkLocalUpstream(data, taskDir)));
  findings.push(...(await checkFixtureClaims(data, taskDir)));
  findings.push(...(await checkPaperLeaks(data, taskDir)));
  findings.push(...(await checkReplacements(data, taskDir)));
  return findings;
}

async function checkTaskFile(field: TaskFileField, taskDir: string, realTaskDir: string): Promise<Finding[]> {
  const { pointer, value, want } = field;
  const abs = resolve(taskDir, value);
  const link = await lstat(abs).catch(() => undefined);
  if (!link) {
    return [
      {
        pointer,
        message: `'${value}' does not exist in the task folder`,
        hint: `create ${value}, or fix the path: it is relative to the task folder`,
        missing: value,
      },
    ];
  }
  const real = await realpath(abs).catch(() => undefined);
  if (real === undefined) {
    return [{ pointer, message: `'${value}' is a broken symlink`, hint: "replace the link with the file itself" }];
  }
  if (!isInside(realTaskDir, real)) {
    return [
      { pointer, message: `'${value}' resolves outside the task folder (to ${real})`, hint: "copy the file into the task folder instead of linking to it" },
    ];
  }
  const info = await stat(real);
  if (want === "file" && !info.isFile()) {
    return [{ pointer, message: `'${value}' is not a regular file`, hint: "point to a file, not a folder" }];
  }
  if (!info.isFile() && !info.isDirectory()) {
    return [{ pointer, message: `'${value}' is neither a file nor a folder`, hint: "point to a regular file or folder" }];
  }
  if (info.isFile()) {
    return (await isLfsPointer(real)) ? [lfsFinding(pointer, value)] : [];
  }
  return checkFolderContents(pointer, value, abs, realTaskDir);
}

/** Every symlink inside a fixture folder must stay in the task folder; no file may be an LFS pointer. */
async function checkFolderContents(pointer: string, value: string, abs: string, realTaskDir: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const queue = [abs];
  let seen = 0;
  while (queue.length > 0 && seen < MAX_WALK) {
    const dir = queue.shift()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
      findings.push({
        pointer,
        message: `cannot read '${value}${dir.slice(abs.length)}' (${err.code ?? err.message})`,
        hint: "check the folder's permissions",
      });
      return [];
    });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      seen++;
      const path = join(dir, entry.name);
      const shown = `${value}/${path
        .slice(abs.length + 1)
        .split("\\")
        .join("/")}`;
      if (entry.isSymbolicLink()) {
        const real = await realpath(path).catch(() => undefined);
        if (real === undefined) {
          findings.push({ pointer, message: `'${shown}' is a broken symlink`, hint: "replace the link with the file itself" });
          continue;
        }
        if (!isInside(realTaskDir, real)) {
          findings.push({
            pointer,
            message: `'${shown}' resolves outside the task folder (to ${real})`,
            hint: "copy the file into the task folder instead of linking to it",
          });
          continue;
        }
        if ((await stat(real)).isFile() && (await isLfsPointer(real))) findings.push(lfsFinding(pointer, shown));
      } else if (entry.isDirectory()) {
        queue.push(path);
      } else if (entry.isFile() && (await isLfsPointer(path))) {
        findings.push(lfsFinding(pointer, shown));
      }
    }
  }
  return findings;
}

async function isLfsPointer(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const buf = Buffer.alloc(LFS_POINTER.length);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    return bytesRead === buf.length && buf.toString("utf8") === LFS_POINTER;
  } finally {
    await handle.close();
  }
}

function lfsFinding(pointer: string, shown: string): Finding {
  return {
    pointer,
    message: `'${shown}' is a Git LFS pointer, not the data`,
    hint: "run `git lfs pull` and store the real (small) file, or regenerate the fixture",
  };
}

/** The nearest folder at or above `start` with `.git` or `package.json`: the project a task belongs to. */
export async function findProjectRoot(start: string): Promise<string | undefined> {
  let dir = resolve(start);
  for (;;) {
    for (const marker of [".git", "package.json"]) {
      if (await stat(join(dir, marker)).catch(() => undefined)) return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

async function checkLocalUpstream(data: unknown, taskDir: string): Promise<Finding[]> {
  const upstream = asObject(asObject(data)?.upstream);
  const path = upstream?.path;
  if (typeof path !== "string" || path === "" || "repo" in upstream!) return [];
  const pointer = "/upstream/path";
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path)) {
    return [
      {
        pointer,
        message: `path is absolute: ${JSON.stringify(path)}`,
        hint: 'write it relative to the task folder, e.g. "../../upstreams/demo"',
        replaces: ["minLength"],
      },
    ];
  }
  if (path.includes("\\")) {
    return [{ pointer, message: `path uses backslashes: ${JSON.stringify(path)}`, hint: "use '/' as the separator" }];
  }
  if (path.split("/").some((s, i, all) => s === "" && i < all.length - 1)) {
    return [{ pointer, message: `path has an empty segment: ${JSON.stringify(path)}`, hint: "remove the doubled '/'" }];
  }
  const realTaskDir = await realpath(taskDir);
  const root = await findProjectRoot(realTaskDir);
  if (root === undefined) {
    return [
      { pointer, message: "a local upstream needs the task to live in a project", hint: "put the tasks in a git repository (or a folder with package.json)" },
    ];
  }
  const abs = resolve(taskDir, path);
  const real = await realpath(abs).catch(() => undefined);
  if (real === undefined) {
    return [{ pointer, message: `local upstream '${path}' does not exist (looked for ${abs})`, hint: "fix the path; it is relative to the task folder" }];
  }
  if (!isInside(root, real)) {
    return [
      {
        pointer,
        message: `local upstream '${path}' resolves to ${real}, outside the project ${root}`,
        hint: "keep local upstreams inside the project that holds the task",
      },
    ];
  }
  if (!(await stat(real)).isDirectory()) {
    return [{ pointer, message: `local upstream '${path}' is not a folder`, hint: "point to the folder that holds the upstream code" }];
  }
  return [];
}

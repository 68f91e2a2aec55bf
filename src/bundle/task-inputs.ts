import { copyFile, mkdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { hashTree, listFiles } from "../core/hash.js";
import type { ResolvedTask } from "../manifest/types.js";
import { alternativeInputFiles } from "./alternatives.js";

/** Local test runs leave these in task folders; they are never grader inputs. */
function isJunk(rel: string, isDir: boolean): boolean {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  if (isDir) return name === "__pycache__" || name === ".pytest_cache" || name === ".ipynb_checkpoints";
  return name.endsWith(".pyc") || name === ".DS_Store";
}

async function expand(taskDir: string, rel: string, pointer: string, manifestPath: string): Promise<string[]> {
  const abs = join(taskDir, rel);
  const info = await stat(abs).catch(() => undefined);
  if (!info) {
    throw new LmrError({
      code: "task/file-missing",
      file: manifestPath,
      pointer,
      message: `'${rel}' does not exist in the task folder`,
      hint: "create it or fix the path (relative to the task folder)",
    });
  }
  if (!info.isDirectory()) return [rel];
  return (await listFiles(abs, isJunk)).map((f) => `${rel}/${f}`);
}

/** Grader files (tests, then fixtures with folders expanded), relative to the task folder. */
async function listGraderFiles(task: ResolvedTask): Promise<string[]> {
  const { tests } = task.manifest;
  const out: string[] = [];
  for (const [i, f] of tests.files.entries()) out.push(...(await expand(task.dir, f, `/tests/files/${i}`, task.manifestPath)));
  for (const [i, f] of (tests.fixtures ?? []).entries()) out.push(...(await expand(task.dir, f, `/tests/fixtures/${i}`, task.manifestPath)));
  return [...new Set(out)].sort();
}

/**
 * Hash of everything in the task folder that decides what a bundle contains and
 * what verify proves: task.json, the instruction, the paper text, the grader
 * files, the alternatives, and the driver and generators the fixtures come from.
 */
export async function hashTaskInputs(task: ResolvedTask): Promise<string> {
  const m = task.manifest;
  const files = new Set([basename(task.manifestPath), m.instruction, ...(await listGraderFiles(task)), ...(await alternativeInputFiles(task.dir))]);
  if (m.paper.text !== undefined) files.add(m.paper.text);
  if (m.hints !== undefined) files.add(m.hints);
  if (m.record?.driver !== undefined) files.add(m.record.driver);
  for (const g of m.record?.generators ?? []) files.add(g.script);
  return (await hashTree(task.dir, [...files])).hash;
}

/** Copies the grader files into `destDir`, keeping their paths relative to the task folder. */
export async function copyGraderFiles(task: ResolvedTask, destDir: string): Promise<string[]> {
  const files = await listGraderFiles(task);
  for (const rel of files) {
    const to = join(destDir, rel);
    await mkdir(dirname(to), { recursive: true });
    await copyFile(join(task.dir, rel), to);
  }
  return files;
}

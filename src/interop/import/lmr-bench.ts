import { mkdir, mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LmrError } from "../../core/errors.js";
import { writeFileAtomic, writeJsonAtomic } from "../../core/fs-atomic.js";
import { MANIFEST_FILE } from "../../manifest/read.js";
import { validateTasks } from "../../manifest/validate.js";
import { planFolder, type TaskPlan } from "./folder.js";
import { isDir, isFile } from "./repo.js";
import type { Defect, ImportOptions, ImportResult } from "../types.js";

const INFO = "info.json";

/**
 * Imports an LMR-Bench benchmark folder (one folder per paper, each with
 * info.json and a copy of the repository) as lmr tasks under `outDir/<id>/`.
 * Every defect met is reported, repaired or not. Tasks are staged in a temp
 * folder, validated, and moved into place only when complete; an existing task
 * folder is kept unless `force`. `dir` may also be a single paper folder.
 */
export async function importLmrBench(dir: string, outDir: string, opts: ImportOptions = {}): Promise<ImportResult> {
  const folders = await listPaperFolders(dir);
  const result: ImportResult = { tasks: [], written: [], skipped: [], defects: [] };
  const taken = new Set<string>();
  const plans: { folder: string; plan: TaskPlan }[] = [];
  for (const folderDir of folders) {
    const folder = folderDir.shown;
    const report = (key: string, message: string, repaired: boolean): void => {
      result.defects.push({ folder, key, message, repaired });
    };
    if (!(await isFile(join(folderDir.abs, INFO)))) {
      report("", `no ${INFO}: not an LMR-Bench paper folder; skipped`, false);
      continue;
    }
    const first = result.defects.length;
    const folderPlans = await planFolder(folderDir.abs, opts, taken, report, (s) => result.skipped.push({ folder, ...s }));
    for (const plan of folderPlans) plans.push({ folder, plan });
    result.defects.splice(first, Infinity, ...orderDefects(result.defects.slice(first)));
  }

  const out = resolve(outDir);
  const stageParent = opts.dryRun ? tmpdir() : out;
  await mkdir(stageParent, { recursive: true });
  const stage = await mkdtemp(join(stageParent, ".lmr-import-"));
  try {
    for (const { folder, plan } of plans) {
      const defect = (message: string): Defect => ({ folder, key: plan.pointer, message, repaired: false });
      const final = join(out, plan.id);
      const exists = await stat(final).then(
        () => true,
        () => false,
      );
      if (exists && !opts.force) {
        result.defects.push(defect(`task folder ${final} already exists; not overwritten (use --force to replace it)`));
        result.skipped.push({ folder, id: plan.id, reason: "task folder exists" });
        continue;
      }
      const staged = join(stage, plan.id);
      await writeTask(staged, plan);
      const report = await validateTasks([staged]);
      if (!report.ok) {
        for (const p of report.problems) result.defects.push(defect(`the task written for ${plan.id} is invalid at ${p.pointer ?? "/"}: ${p.message}`));
        result.skipped.push({ folder, id: plan.id, reason: "generated manifest invalid" });
        continue;
      }
      if (!opts.dryRun) {
        await moveIntoPlace(staged, final, stage);
        result.written.push(final);
      }
      result.tasks.push(plan.manifest);
    }
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
  return result;
}

async function writeTask(dir: string, plan: TaskPlan): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeJsonAtomic(join(dir, MANIFEST_FILE), plan.manifest);
  for (const [rel, text] of Object.entries(plan.files)) await writeFileAtomic(join(dir, rel), text);
}

/** Rename the staged task into place; a replaced (--force) folder goes away only after the new one is in. */
async function moveIntoPlace(staged: string, final: string, stage: string): Promise<void> {
  const old = join(stage, `.old-${Math.random().toString(36).slice(2)}`);
  const replaced = await rename(final, old).then(
    () => true,
    () => false,
  );
  await rename(staged, final);
  if (replaced) await rm(old, { recursive: true, force: true });
}

/** The paper folders under `dir` (or `dir` itself when it holds info.json), in benchmark order. */
async function listPaperFolders(dir: string): Promise<{ abs: string; shown: string }[]> {
  const abs = resolve(dir);
  if (!(await isDir(abs))) {
    throw new LmrError({
      code: "import/dir-missing",
      file: dir,
      message: "not a folder",
      hint: "give the LMR-Bench benchmark folder (one folder per paper, each with info.json)",
    });
  }
  if (await isFile(join(abs, INFO))) return [{ abs, shown: dir }];
  const names = (await readdir(abs, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name);
  const withInfo = await Promise.all(names.map((n) => isFile(join(abs, n, INFO))));
  if (!withInfo.some(Boolean)) {
    throw new LmrError({
      code: "import/no-papers",
      file: dir,
      message: `no paper folder with ${INFO} in it`,
      hint: "point at the folder that holds 1-DPO/, 2-.../ (each with info.json)",
    });
  }
  names.sort((a, b) => leadingNumber(a) - leadingNumber(b) || (a < b ? -1 : a > b ? 1 : 0));
  return names.map((n) => ({ abs: join(abs, n), shown: join(dir, n) }));
}

/** Folder-level defects first, then by implementation; report order within each. */
function orderDefects(defects: Defect[]): Defect[] {
  const rank = (d: Defect): number => {
    const m = /^\/implementations\/(\d+)/.exec(d.key);
    return m ? Number(m[1]) + 1 : 0;
  };
  return defects
    .map((d, i) => ({ d, i }))
    .sort((a, b) => rank(a.d) - rank(b.d) || a.i - b.i)
    .map(({ d }) => d);
}

function leadingNumber(name: string): number {
  const m = /^(\d+)/.exec(name);
  return m ? Number(m[1]) : Number.MAX_SAFE_INTEGER;
}

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBundle } from "../../bundle/index.js";
import type { BundleInfo, BundleOptions } from "../../bundle/types.js";
import { LmrError } from "../../core/errors.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import type { ResolvedTask } from "../../manifest/types.js";
import { validateTasks, type ValidationReport } from "../../manifest/validate.js";

export interface BuiltTask {
  task: ResolvedTask;
  bundle: BundleInfo;
  /** 1-based position among the exported tasks. */
  n: number;
}

/** The task folders to export: the ones given, else every task under `tasksDir`. */
export async function selectTaskDirs(taskDirs: string[], tasksDir: string): Promise<string[]> {
  const dirs = taskDirs.length > 0 ? taskDirs : await findTaskDirs(tasksDir);
  if (dirs.length === 0) {
    throw new LmrError({
      code: "usage/no-tasks",
      file: tasksDir,
      message: "no task folders found",
      hint: "pass task folders as arguments or point --tasks-dir at a folder of tasks",
    });
  }
  return dirs;
}

/**
 * Validates every task, then builds them one at a time into a temp folder and
 * hands each bundle to `use`; a bundle is deleted once used. Nothing is built
 * when a manifest is invalid (the report says why). `opts.level` picks the instruction
 * the workspace gets (paper by default), as `lmr build --level` does.
 */
export async function forEachBuiltTask(dirs: string[], opts: BundleOptions, use: (t: BuiltTask) => Promise<void>): Promise<ValidationReport> {
  const report = await validateTasks(dirs);
  if (!report.ok) return report;
  const scratch = await mkdtemp(join(tmpdir(), "lmr-export-"));
  try {
    for (const [i, dir] of dirs.entries()) {
      const task = await loadTask(dir);
      const bundle = await buildBundle(task, scratch, opts);
      try {
        await use({ task, bundle, n: i + 1 });
      } finally {
        await rm(bundle.dir, { recursive: true, force: true });
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return report;
}

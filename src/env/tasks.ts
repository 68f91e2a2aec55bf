import { LmrError } from "../core/errors.js";
import { findTaskDirs, loadTask } from "../manifest/load.js";
import type { ResolvedTask } from "../manifest/types.js";
import { planEnv } from "./images.js";
import { normaliseEnvironment, type EnvSpec } from "./spec.js";

/** Tasks that share one environment image (same normalised spec). */
export interface EnvGroup {
  spec: EnvSpec;
  envTag: string;
  baseTag: string;
  tasks: ResolvedTask[];
}

/** The task folders given, or every task under `tasksDir`, loaded. */
export async function loadTasksFor(dirs: string[], tasksDir: string): Promise<ResolvedTask[]> {
  const chosen = dirs.length > 0 ? dirs : await findTaskDirs(tasksDir);
  return Promise.all(chosen.map((d) => loadTask(d)));
}

/** Groups tasks by the image their environment needs, in first-seen order. */
export async function groupByEnvironment(tasks: ResolvedTask[]): Promise<EnvGroup[]> {
  const groups = new Map<string, EnvGroup>();
  for (const task of tasks) {
    let spec: EnvSpec;
    try {
      spec = normaliseEnvironment(task.manifest.environment, task.manifest.tests.runner);
    } catch (err) {
      if (err instanceof LmrError)
        throw new LmrError({
          code: err.code,
          file: task.manifestPath,
          ...(err.pointer ? { pointer: err.pointer } : {}),
          message: err.message,
          ...(err.hint ? { hint: err.hint } : {}),
        });
      throw err;
    }
    const plan = await planEnv(spec);
    const g = groups.get(plan.tag) ?? { spec, envTag: plan.tag, baseTag: plan.baseTag, tasks: [] };
    g.tasks.push(task);
    groups.set(plan.tag, g);
  }
  return [...groups.values()];
}

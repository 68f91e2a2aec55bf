import { toolkitPath } from "../../dist/core/paths.js";
import { findTaskDirs, loadTask } from "../../dist/manifest/load.js";
import type { ResolvedTask } from "../../dist/manifest/types.js";

/**
 * The pytest tasks of a folder (default: examples/tasks). The benches compare
 * against bare pytest, task images and Python replies; the node:test examples
 * have none of those, so they are left out here rather than in each bench.
 */
export async function loadPytestTasks(root: string = toolkitPath("examples", "tasks")): Promise<ResolvedTask[]> {
  const tasks: ResolvedTask[] = [];
  for (const d of await findTaskDirs(root)) {
    const t = await loadTask(d);
    if ((t.manifest.tests.runner ?? "pytest") === "pytest") tasks.push(t);
  }
  return tasks;
}

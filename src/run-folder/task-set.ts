import type { TaskManifest, TaskSet } from "../manifest/types.js";

/** A selection of tasks by set: one set, or every task. */
export type TaskSetChoice = TaskSet | "all";
export const TASK_SETS: readonly TaskSet[] = ["core", "extended", "method"];
export const TASK_SET_CHOICES: readonly TaskSetChoice[] = ["core", "extended", "method", "all"];

/** The set a manifest puts its task in ("core" when it names none). */
export function readTaskSet(manifest: Pick<TaskManifest, "set">): TaskSet {
  return manifest.set ?? "core";
}

export function isInSet(set: TaskSet | undefined, choice: TaskSetChoice): boolean {
  return choice === "all" || (set ?? "core") === choice;
}

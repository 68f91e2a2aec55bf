import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import type { ResolvedTask } from "./types.js";

/**
 * Which instruction a solver gets: `paper` (instruction.md: the contract and where the paper
 * has the method) or `hinted` (hints.md: the same plus the method spelled out). The tests are
 * the same at both levels; results of different levels are never pooled.
 */
export type InstructionLevel = "paper" | "hinted";
export const INSTRUCTION_LEVELS: readonly InstructionLevel[] = ["paper", "hinted"];
export const DEFAULT_LEVEL: InstructionLevel = "paper";

export function isInstructionLevel(v: unknown): v is InstructionLevel {
  return (INSTRUCTION_LEVELS as readonly unknown[]).includes(v);
}

/** The task's instruction file at `level` (absolute), or an error naming the manifest field to add. */
export function instructionPath(task: ResolvedTask, level: InstructionLevel): string {
  const m = task.manifest;
  if (level === "paper") return join(task.dir, m.instruction);
  if (m.hints === undefined) {
    throw new LmrError({
      code: "task/no-hinted-level",
      file: task.manifestPath,
      pointer: "/hints",
      message: `task '${m.id}' has no hinted instruction (no "hints" in task.json)`,
      hint: 'write hints.md (the paper level plus the method spelled out) and name it in task.json\'s "hints", or use --level paper',
    });
  }
  return join(task.dir, m.hints);
}

/** Every task has the level, or an error naming the first that lacks it: checked before anything is built or written. */
export function requireLevel(tasks: readonly ResolvedTask[], level: InstructionLevel): void {
  for (const task of tasks) instructionPath(task, level);
}

import { basename } from "node:path";
import { formatProblem, LmrError, type Problem } from "../core/errors.js";
import { findNearIds } from "../evaluate/select-submissions.js";
import { findTaskDirs, loadTask } from "../manifest/load.js";
import type { ResolvedTask } from "../manifest/types.js";
import { validateTasks } from "../manifest/validate.js";
import { isInSet, readTaskSet, type TaskSetChoice } from "../run-folder/index.js";

/**
 * The task folders a command works on (`lmr eval`, `lmr generate`): --tasks (every id must
 * name a task; near ids are suggested), then --set. Without --set: the core set, or every
 * set when --tasks names the tasks. A folder whose manifest does not load is kept (without
 * --tasks), so validation names what is wrong with it.
 */
export function chooseTasks(
  dirs: string[],
  tasks: (ResolvedTask | undefined)[],
  flags: { tasks?: string[]; set?: TaskSetChoice; tasksDir: string },
  command: "eval" | "generate" | "agent" | "export",
): string[] {
  const byId = new Map(tasks.flatMap((t, i) => (t ? [[t.manifest.id, { task: t, dir: dirs[i]! }] as const] : [])));
  if (flags.tasks) {
    const missing = flags.tasks.filter((t) => !byId.has(t));
    if (missing.length > 0) {
      const near = missing.map((m) => ({ m, near: findNearIds(m, [...byId.keys()]) }));
      throw new LmrError({
        code: "usage/unknown-task",
        file: flags.tasksDir,
        pointer: "--tasks",
        message: `no task with id ${near.map(({ m, near: n }) => `'${m}'${n.length > 0 ? ` (did you mean ${n.map((x) => `'${x}'`).join(" or ")}?)` : ""}`).join(", ")}`,
        hint: byId.size > 0 ? `known: ${[...byId.keys()].join(", ")}` : "point --tasks-dir at a folder of tasks",
      });
    }
  }
  const set = flags.set ?? (flags.tasks ? "all" : "core");
  const wanted = flags.tasks ? flags.tasks.map((id) => byId.get(id)!) : [...byId.values()];
  const outside = wanted.filter((w) => !isInSet(readTaskSet(w.task.manifest), set));
  if (flags.tasks && outside.length > 0) {
    throw new LmrError({
      code: "usage/task-not-in-set",
      pointer: "--tasks",
      message: `${outside.map((w) => `'${w.task.manifest.id}' (${readTaskSet(w.task.manifest)})`).join(", ")} not in set ${set}`,
      hint: "drop --set, or pick tasks of that set",
    });
  }
  const chosen = wanted.filter((w) => isInSet(readTaskSet(w.task.manifest), set)).map((w) => w.dir);
  if (!flags.tasks) chosen.push(...dirs.filter((_, i) => tasks[i] === undefined));
  if (chosen.length === 0) {
    const hint =
      dirs.length === 0
        ? "point --tasks-dir at a folder of tasks"
        : set === "all"
          ? "check that the task manifests load (lmr validate)"
          : `no task of ${flags.tasksDir} is in set ${set}; try --set all`;
    throw new LmrError({
      code: "usage/no-tasks",
      file: flags.tasksDir,
      message:
        dirs.length === 0
          ? "no task folders found"
          : `no task to ${command === "eval" ? "grade" : command === "agent" ? "run an agent on" : command === "export" ? "export" : "prompt"} in set ${set}`,
      hint,
    });
  }
  return dirs.filter((d) => chosen.includes(d));
}

/** Tasks that do not validate stop a command (exit 2): the error names the count, and with `listed` every problem. */
export function invalidTasks(problems: Problem[], tasks: number, outcome: string, listed = false): LmrError {
  const n = problems.length;
  const list = listed ? `:\n${problems.map((p) => `  ${formatProblem(p)}`).join("\n")}` : "";
  return new LmrError({
    code: "task/invalid",
    message: `${n} problem${n === 1 ? "" : "s"} in ${tasks} task${tasks === 1 ? "" : "s"}; ${outcome}${list}`,
    hint: "fix them (lmr validate lists them), or leave those tasks out",
  });
}

interface ChosenTasks {
  /** The chosen tasks, loaded and valid, in folder order. */
  tasks: ResolvedTask[];
  /** Every id under --tasks-dir, chosen or not, and the folder name of one whose manifest does not load: rows for them are not "unknown". */
  knownTaskIds: string[];
}

/**
 * The one way a command that runs over tasks (`lmr eval`, `generate`, `agent run`) gets them:
 * find the task folders under --tasks-dir, choose by --tasks and --set (chooseTasks), validate
 * the chosen ones and load them. Invalid tasks stop the command (task/invalid, exit 2), every
 * problem in the message.
 */
export async function loadChosenTasks(
  flags: { tasks?: string[]; set?: TaskSetChoice; tasksDir: string },
  command: "eval" | "generate" | "agent",
): Promise<ChosenTasks> {
  const dirs = await findTaskDirs(flags.tasksDir);
  const all = await Promise.all(dirs.map((d) => loadTask(d).catch(() => undefined)));
  const chosen = chooseTasks(dirs, all, flags, command);
  const report = await validateTasks(chosen);
  if (!report.ok) throw invalidTasks(report.problems, report.tasks, "nothing run", true);
  const tasks = await Promise.all(chosen.map((d) => loadTask(d)));
  const knownTaskIds = [...new Set([...all.filter((t): t is ResolvedTask => t !== undefined).map((t) => t.manifest.id), ...dirs.map((d) => basename(d))])];
  return { tasks, knownTaskIds };
}

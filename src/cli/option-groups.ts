import { Option, type Command } from "commander";
import { TASK_SET_CHOICES } from "../run-folder/index.js";

/**
 * Option groups several commands share, each added by one function so their names, defaults
 * and help read the same everywhere. The flags arrive in the command's options object as
 * `tasks`, `tasksDir`, `set` (loadChosenTasks takes them), `jobs`, `sandbox`, `python`,
 * `mirror`, `queue`, `queueAttempts`.
 */

/** --tasks, --tasks-dir, --set: which tasks a run over tasks takes (lmr eval, generate, agent run). */
export function addTaskSelection(cmd: Command): Command {
  return cmd
    .option("--tasks <ID...>", "only these task ids")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .addOption(new Option("--set <SET>", "only the tasks of this set (default: core, or all with --tasks)").choices(TASK_SET_CHOICES));
}

/** -j/--jobs, --sandbox, --python, --mirror: how submissions are graded (lmr eval, agent run). */
export function addGrading(
  cmd: Command,
  sandboxHelp = "auto | docker | bwrap | none (auto: docker where the task's image is built, else bwrap, else none)",
): Command {
  return cmd
    .option("-j, --jobs <N>", "parallel gradings (default: number of cores)")
    .option("--sandbox <MODE>", sandboxHelp, "auto")
    .option("--python <PATH>", "Python interpreter for the tests; default $LMR_PYTHON, else python3")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR");
}

/** --queue and, where work is retried, --queue-attempts: the work goes to `lmr worker`s through Redis. */
export function addQueue(cmd: Command, what: string, attempts?: { help: string; default: string }): Command {
  cmd.option("--queue <URL>", `${what} on \`lmr worker --queue URL\` processes (redis://… or rediss://…) instead of in this process`);
  return attempts ? cmd.option("--queue-attempts <N>", `with --queue: ${attempts.help}`, attempts.default) : cmd;
}

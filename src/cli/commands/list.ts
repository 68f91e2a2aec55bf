import { Option, type Command } from "commander";
import { readFile } from "node:fs/promises";
import { hashTaskInputs } from "../../bundle/index.js";
import { EXIT, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import { describeTask, renderTaskLines, renderTaskTable, type TaskRow } from "../../report/task-table.js";
import { TASK_SET_CHOICES, isInSet, type TaskSetChoice } from "../../run-folder/index.js";
import { readVerification } from "../../verify/verify-task.js";
import { action } from "../action.js";
import { printJsonFailed, printJsonOk } from "../output.js";

interface ListFlags {
  tasksDir: string;
  format: string;
  set: TaskSetChoice;
  write?: string;
  check?: string;
  json?: boolean;
}

export function registerList(program: Command): void {
  program
    .command("list")
    .description("list the tasks with their verification status (and generate tasks/README.md)")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--format <FORMAT>", "text | md | json", "text")
    .addOption(new Option("--set <SET>", "only the tasks of this set").choices(TASK_SET_CHOICES).default("all"))
    .option("--write <FILE>", "write the listing to FILE (atomically) instead of stdout")
    .option("--check <FILE>", "exit 1 when FILE differs from the listing (for CI)")
    .option("--json", "same as --format json")
    .addHelpText(
      "after",
      `
Status comes from each task's verification.json: verified, failed at <step>, stale
(the task changed since it was verified) or unverified. Every task is in a set,
core (the default), extended or method (the manifest's "set"); the Markdown has
one section per set.

Examples:
  $ lmr list
  $ lmr list --set extended
  $ lmr list --format md --write tasks/README.md
  $ lmr list --format md --check tasks/README.md`,
    )
    .action(action(runList));
}

async function runList(flags: ListFlags): Promise<number> {
  const format = flags.json ? "json" : flags.format;
  if (!["text", "md", "json"].includes(format)) {
    throw new LmrError({ code: "usage/bad-format", message: `--format must be text, md or json, got '${format}'` });
  }
  const rows: TaskRow[] = [];
  for (const dir of await findTaskDirs(flags.tasksDir)) {
    const task = await loadTask(dir);
    const row = describeTask(task, await readVerification(task), await hashTaskInputs(task));
    if (isInSet(row.set, flags.set)) rows.push(row);
  }
  const text = format === "md" ? renderTaskTable(rows, flags.set) : format === "json" ? JSON.stringify(rows, null, 2) + "\n" : renderTaskLines(rows);
  if (flags.check) {
    const current = await readFile(flags.check, "utf8").catch(() => "");
    if (current !== text) {
      const err = new LmrError({
        code: "list/out-of-date",
        file: flags.check,
        message: "is out of date",
        hint: `run lmr list --format ${format}${flags.set === "all" ? "" : ` --set ${flags.set}`} --write ${flags.check}`,
      });
      if (flags.json) printJsonFailed("list", err, rows);
      process.stderr.write(`lmr: ${flags.check} is out of date (hint: ${err.hint})\n`);
      return EXIT.check;
    }
    if (flags.json) printJsonOk("list", rows);
    return EXIT.ok;
  }
  if (flags.write) await writeFileAtomic(flags.write, text);
  else if (format === "json") printJsonOk("list", rows);
  else process.stdout.write(text);
  return EXIT.ok;
}

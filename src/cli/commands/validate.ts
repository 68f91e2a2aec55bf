import type { Command } from "commander";
import { EXIT, formatProblem, isLmrError, LmrError, type Problem } from "../../core/errors.js";
import { changedTasksSince } from "../../source/changed-tasks.js";
import { displayPath, findTaskDirs, resolveTaskDir } from "../../manifest/read.js";
import { validateTasks } from "../../manifest/validate.js";
import { action } from "../action.js";
import { paint, printJsonFailed, printJsonOk } from "../output.js";

interface ValidateOptions {
  tasksDir: string;
  changedSince?: string;
  json?: boolean;
}

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .description("check task manifests against the schema, their files and each other (writes nothing)")
    .argument("[TASK_DIR...]", "task folders (or their task.json) to check; default: every task under --tasks-dir")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option(
      "--changed-since <REF>",
      "only the tasks whose inputs changed between git revision REF and the working tree (the task folder, its local upstream); ids are still compared with every task",
    )
    .option("--json", "print {tasks, problems[], giveaway} as JSON (the data of the --json envelope)")
    .addHelpText(
      "after",
      `
Prints one line per problem, "FILE: /json/pointer: message (hint: fix)", then a summary.
--changed-since REF: a task counts as changed when a file under its folder, or
under its local upstream folder, differs between REF and the working tree
(committed, staged, unstaged or untracked); see lmr verify --help.
Exit codes: 0 valid, 1 problems found, 2 unreadable input (missing folder or file,
malformed JSON, reported with line:column) or a --changed-since REF that is not a commit.

Examples:
  $ lmr validate
  $ lmr validate tasks/dpo-preference-loss --json
  $ lmr validate --tasks-dir examples/tasks
  $ lmr validate --changed-since origin/main`,
    )
    .action(action(runValidate));
}

async function runValidate(taskDirs: string[], opts: ValidateOptions): Promise<number> {
  let report;
  let tasks = 0;
  try {
    const all = taskDirs.length > 0 ? taskDirs : await findTaskDirs(opts.tasksDir);
    let dirs = all;
    if (opts.changedSince !== undefined) {
      const changed = await changedTasksSince(all, opts.changedSince);
      dirs = changed.changed.map((c) => c.dir);
      if (!opts.json) {
        process.stdout.write(
          `changed since ${changed.ref} (${changed.commit.slice(0, 12)}): ${dirs.length} of ${all.length} task${all.length === 1 ? "" : "s"}\n`,
        );
        for (const c of changed.changed) process.stdout.write(`  ${displayPath(resolveTaskDir(c.dir))}: ${c.reason}\n`);
      }
    }
    tasks = dirs.length;
    // ids are compared with every task, changed or not
    report = await validateTasks(dirs, { giveaway: true, idsAmong: all });
  } catch (err) {
    // Unreadable input still gets the --json shape, with the unreadable file as the problem.
    if (!opts.json || !isLmrError(err) || err.kind !== "input") throw err;
    const problem: Problem = { file: err.file, pointer: err.pointer, message: err.message, hint: err.hint };
    printJsonFailed("validate", err, { tasks, problems: [normalizeProblem(problem)] });
    return EXIT.input;
  }
  if (opts.json) {
    const data = { tasks: report.tasks, problems: report.problems.map(normalizeProblem), giveaway: report.giveaway };
    if (report.ok) printJsonOk("validate", data);
    else
      printJsonFailed(
        "validate",
        new LmrError({
          code: "validate/problems",
          message: `${plural(report.problems.length, "problem")} in ${plural(report.tasks, "task")}`,
          hint: "see data.problems",
        }),
        data,
      );
  } else {
    for (const p of report.problems) process.stdout.write(`${formatProblem(p)}\n`);
    if (report.giveaway.length > 0) process.stdout.write(formatGiveaway(report.giveaway));
    const summary = `${plural(report.tasks, "task")}, ${plural(report.problems.length, "problem")}`;
    process.stdout.write(`${paint(report.ok ? "green" : "red", summary)}\n`);
  }
  return report.ok ? EXIT.ok : EXIT.check;
}

/** One line per task: the giveaway score of each instruction level, as lmr verify recorded it; medians last. */
function formatGiveaway(rows: { task: string; paper: number; hinted?: number; allowed: boolean }[]): string {
  const width = Math.max(...rows.map((r) => r.task.length));
  const lines = rows.map(
    (r) =>
      `giveaway  ${r.task.padEnd(width)}  paper ${r.paper.toFixed(2)}${r.allowed ? " (allowed)" : ""}  hinted ${r.hinted === undefined ? "—" : r.hinted.toFixed(2)}`,
  );
  const median = (xs: number[]): string => {
    if (xs.length === 0) return "—";
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
    return m.toFixed(2);
  };
  if (rows.length > 1)
    lines.push(
      `giveaway  median: paper ${median(rows.map((r) => r.paper))}, hinted ${median(rows.flatMap((r) => (r.hinted === undefined ? [] : [r.hinted])))}`,
    );
  return lines.join("\n") + "\n";
}

function normalizeProblem(p: Problem): { file: string | null; pointer: string; message: string; hint: string | null } {
  return { file: p.file ?? null, pointer: p.pointer ?? "", message: p.message, hint: p.hint ?? null };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

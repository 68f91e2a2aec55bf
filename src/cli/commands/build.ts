import type { Command } from "commander";
import { relative, isAbsolute } from "node:path";
import { buildBundle } from "../../bundle/build.js";
import type { BundleInfo } from "../../bundle/types.js";
import { EXIT, exitCodeFor, LmrError, formatProblem } from "../../core/errors.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import { validateTasks } from "../../manifest/validate.js";
import { requireLevel, type InstructionLevel } from "../../manifest/level.js";
import { action } from "../action.js";
import { levelOption } from "../api-flags.js";
import { invalidTasks } from "../choose-tasks.js";
import { paint, printJsonFailed, printJsonOk, printProblems, progress, progressDone } from "../output.js";

interface BuildOptions {
  out: string;
  tasksDir: string;
  mirror?: string;
  papers?: string;
  requirePaper?: boolean;
  json?: boolean;
  level?: InstructionLevel;
}

export function registerBuild(program: Command): void {
  program
    .command("build")
    .description("build task bundles: masked workspace, reference, grader and bundle.json per task")
    .argument("[TASK_DIR...]", "task folders to build; default: every task under --tasks-dir")
    .requiredOption("--out <DIR>", "folder that receives one bundle folder per task (OUT/<task-id>/)")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--mirror <DIR>", "local mirror of github.com repositories (OWNER+NAME/…); default $LMR_MIRROR")
    .option("--papers <DIR>", "folder of paper PDFs (<sha256>.pdf, <arxiv id>.pdf or <task id>.pdf); default $LMR_PAPERS, else the cache")
    .option("--require-paper", "a task whose paper is not available is an error (default: a warning; or $LMR_REQUIRE_PAPER=1)")
    .addOption(levelOption("the workspace's instruction.md is (default paper)"))
    .option("--json", "print the built bundles as a JSON array")
    .addHelpText(
      "after",
      `
Each bundle OUT/<task-id>/ holds:
  workspace/    the upstream at its commit, prepared, targets masked, plus instruction.md,
                paper.pdf and paper.md (the paper's text by page) at the root (paper.json
                too for tasks with their own paper text); .git, __pycache__, *.pyc,
                .ipynb_checkpoints and copies of target files removed
  reference/    the unmasked target files
  grader/       the task's tests and fixtures
  bundle.json   upstream commit, targets, hashes, what was removed, leaks found, level

--level hinted puts hints.md (the method spelled out) in place of instruction.md; the
workspace hash stays the paper level's, so both levels grade alike.

Manifests are validated first; nothing is written when one is invalid. A bundle
appears complete or not at all. Leaks of the reference left in the workspace (copies,
reformatted copies, notebooks, bytecode, .git, backups) are warnings here (bundle.json
"leaks", the same scan as \`lmr verify\`'s leaks step); \`lmr verify\` decides.
The paper is never downloaded here: the PDF comes from --papers DIR or the cache
that \`lmr paper fetch\` fills. A pinned paper that is not there is a warning (once
per task, and in bundle.json "warnings"), and the task builds without it; with
--require-paper it is an error. paper.pdf/paper.md are left out of the workspace
hash (a machine without the paper builds the same hash); bundle.json "paper" records them.
Exit codes: 0 built, 2 invalid task, usage or a required paper missing, 3 git or
file-system failure.

Examples:
  $ lmr build examples/tasks/pref-loss --out bundles
  $ lmr build --tasks-dir tasks --out bundles --mirror /data/mirror --json
  $ lmr build examples/tasks/pref-loss --out bundles --level hinted
  $ lmr paper fetch && lmr build --out bundles --require-paper`,
    )
    .action(action(runBuild));
}

async function runBuild(taskDirs: string[], opts: BuildOptions): Promise<number> {
  const dirs = taskDirs.length > 0 ? taskDirs : await findTaskDirs(opts.tasksDir);
  if (dirs.length === 0) {
    throw new LmrError({
      code: "usage/no-tasks",
      file: opts.tasksDir,
      message: "no task folders found",
      hint: "pass task folders as arguments or point --tasks-dir at a folder of tasks",
    });
  }
  // a task still being written (TODO(author) left in its instruction) builds; lmr validate and verify refuse it
  const report = await validateTasks(dirs, { finished: false });
  if (!report.ok) {
    const err = invalidTasks(report.problems, report.tasks, "nothing built");
    if (opts.json) printJsonFailed("build", err, { problems: report.problems });
    else {
      printProblems(report.problems);
      process.stderr.write(`lmr: ${err.message}\n`);
    }
    return exitCodeFor(err);
  }

  const tasks = await Promise.all(dirs.map((d) => loadTask(d)));
  // every task has the level, or nothing is built
  if (opts.level) requireLevel(tasks, opts.level);
  const built: BundleInfo[] = [];
  for (const [i, task] of tasks.entries()) {
    progress(`building ${task.manifest.id} (${i + 1}/${dirs.length})`);
    const info = await buildBundle(task, opts.out, {
      ...(opts.mirror !== undefined ? { mirror: opts.mirror } : {}),
      ...(opts.papers !== undefined ? { papers: opts.papers } : {}),
      ...(opts.requirePaper ? { requirePaper: true } : {}),
      ...(opts.level ? { level: opts.level } : {}),
    });
    progressDone();
    built.push(info);
    for (const leak of info.leaks) {
      const note = leak.allowed ? " (allowed by verification.allowed_leaks)" : "";
      const cell = leak.cell !== undefined ? ` cell ${leak.cell}` : "";
      const line = leak.line !== undefined ? `:${leak.line}` : "";
      const message = `${leak.kind} leak: ${leak.detail}${note}`;
      process.stderr.write(
        paint("yellow", `warning: ${formatProblem({ file: `${info.task_id}: ${leak.file}${cell}${line}`, message })}`, process.stderr) + "\n",
      );
    }
    for (const w of info.warnings ?? []) process.stderr.write(paint("yellow", `warning: ${w}`, process.stderr) + "\n");
    if (!opts.json) {
      const n = info.targets.length;
      process.stdout.write(`built ${info.task_id} → ${shown(info.dir)} (${n} target${n === 1 ? "" : "s"}, ${info.files.workspace} files)\n`);
    }
  }
  if (opts.json) printJsonOk("build", built);
  return EXIT.ok;
}

function shown(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}

import type { Command } from "commander";
import { availableParallelism } from "node:os";
import { EXIT, LmrError } from "../../core/errors.js";
import { runEval } from "../../evaluate/run-eval.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import { validateTasks } from "../../manifest/validate.js";
import { parseSandboxChoice } from "../../runner/backends.js";
import { action } from "../action.js";
import { printJson, printProblems, progress, progressDone } from "../output.js";

interface EvalFlags {
  submissions: string;
  out: string;
  tasks?: string[];
  tasksDir: string;
  jobs?: string;
  samples?: string;
  sandbox: string;
  python?: string;
  mirror?: string;
  json?: boolean;
}

export function registerEval(program: Command): void {
  program
    .command("eval")
    .description("grade an agent's submissions over tasks: isolated, parallel, resumable")
    .requiredOption("--submissions <PATH>", "folder of workspaces (one per task id) or a JSONL of {task_id, model, patch} / {task_id, model, files}")
    .requiredOption("--out <RUN_DIR>", "run folder: results/<task>/<sample>/, summary.json; rerun to resume")
    .option("--tasks <ID...>", "only these task ids")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("-j, --jobs <N>", "parallel gradings (default: number of cores)")
    .option("--samples <K>", "grade at most K samples per task")
    .option("--sandbox <MODE>", "auto | docker | bwrap | none (auto: docker where the task's image is built, else bwrap, else none)", "auto")
    .option("--python <PATH>", "Python interpreter for the tests; default $LMR_PYTHON, else python3")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("--json", "print summary.json to stdout")
    .addHelpText(
      "after",
      `
Submissions: a JSONL file, one row per sample: {task_id, model, patch} (SWE-bench's
instance_id / model_name_or_path / model_patch work too) or {task_id, model,
files: {path: content}}, with an optional "sample" id; or a folder of workspaces,
DIR/<task_id>/ or DIR/<task_id>/<n>/ per sample, with an optional DIR/model.txt.
Only the target files are taken from a submission; tests, fixtures, conftest.py,
pytest.ini and the like always come from the task. Verdicts: passed, failed,
error (import/collection), timeout, invalid (patch does not apply, touches grader
files, or no submission), infra (our side broke).
Rerunning the same command resumes: a sample keeps its result when neither its
submission nor the task, sandbox or interpreter changed; infra results are
retried. A run folder is locked while a run works in it; after a crash or kill -9
the next run kills the old run's leftover test processes and scratch copies.
Report with \`lmr report RUN_DIR --format md|html|junit|json\`.
Exit codes: 0 graded (whatever the verdicts), 2 bad input, 3 infrastructure.

Examples:
  $ lmr eval --tasks-dir examples/tasks --submissions preds.jsonl --out runs/r1 -j 2
  $ lmr eval --submissions workspaces/ --tasks pref-loss rouge-notebook --out runs/r2`,
    )
    .action(action(runEvalCommand));
}

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new LmrError({ code: "usage/bad-number", kind: "usage", message: `${flag} must be a whole number >= 1, got '${value}'` });
  return n;
}

async function runEvalCommand(flags: EvalFlags): Promise<number> {
  const sandbox = parseSandboxChoice(flags.sandbox);
  const jobs = count(flags.jobs, "--jobs") ?? availableParallelism();
  const samples = count(flags.samples, "--samples");
  let dirs = await findTaskDirs(flags.tasksDir);
  const tasks = await Promise.all(dirs.map((d) => loadTask(d).catch(() => undefined)));
  if (flags.tasks) {
    const wanted = new Set(flags.tasks);
    const found = new Set(tasks.filter((t) => t).map((t) => t!.manifest.id));
    const missing = flags.tasks.filter((t) => !found.has(t));
    if (missing.length > 0) throw new LmrError({ code: "eval/unknown-task", kind: "usage", file: flags.tasksDir, message: `no task with id ${missing.map((m) => `'${m}'`).join(", ")}`, hint: `known: ${[...found].join(", ")}` });
    dirs = dirs.filter((_, i) => tasks[i] && wanted.has(tasks[i]!.manifest.id));
  }
  if (dirs.length === 0) throw new LmrError({ code: "no-tasks", kind: "usage", file: flags.tasksDir, message: "no task folders found", hint: "point --tasks-dir at a folder of tasks" });
  const report = await validateTasks(dirs);
  if (!report.ok) {
    printProblems(report.problems);
    return EXIT.input;
  }
  const loaded = await Promise.all(dirs.map((d) => loadTask(d)));
  const outcome = await runEval({
    submissions: flags.submissions,
    tasks: loaded,
    outDir: flags.out,
    jobs,
    ...(samples !== undefined ? { samples } : {}),
    sandbox,
    ...(flags.python ? { python: flags.python } : {}),
    ...(flags.mirror ? { mirror: flags.mirror } : {}),
    onProgress: (p) => progress(`grading ${p.done}/${p.total}${p.skipped ? ` (${p.skipped} already graded)` : ""}${p.last ? ` — ${p.last.task_id}#${p.last.sample}: ${p.last.verdict}` : ""}`),
  });
  progressDone();
  printProblems(outcome.problems);
  const rec = outcome.recovered;
  if (rec.previousPid !== undefined || rec.killed.length > 0 || rec.swept.length > 0) {
    process.stderr.write(
      `lmr: resumed after an interrupted run${rec.previousPid !== undefined ? ` (pid ${rec.previousPid})` : ""}: killed ${rec.killed.length} leftover test process(es), removed ${rec.swept.length} scratch/temp entr${rec.swept.length === 1 ? "y" : "ies"}\n`,
    );
  }
  const s = outcome.summary;
  if (flags.json) printJson(s);
  else {
    const v = s.totals.verdicts;
    process.stdout.write(
      `${s.totals.samples} samples over ${s.totals.tasks} tasks: ${v.passed} passed, ${v.failed} failed, ${v.error} error, ${v.timeout} timeout, ${v.invalid} invalid, ${v.infra} infra` +
        ` (graded ${outcome.graded}, reused ${outcome.reused})\nrun folder: ${flags.out} — report with: lmr report ${flags.out} --format md\n`,
    );
  }
  return allInfra(s) ? EXIT.infra : EXIT.ok;
}

/** Every sample broke on our side: the run proves nothing about the submissions. */
function allInfra(s: { totals: { samples: number; verdicts: Record<string, number> } }): boolean {
  return s.totals.samples > 0 && s.totals.verdicts.infra === s.totals.samples;
}

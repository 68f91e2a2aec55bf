import type { Command } from "commander";
import { loadChosenTasks } from "../choose-tasks.js";
import { availableParallelism } from "node:os";
import { EXIT, LmrError } from "../../core/errors.js";
import { TOOLKIT_VERSION, runEval } from "../../evaluate/run-eval.js";
import { parseShard } from "../../evaluate/shard.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { createQueueDispatcher } from "../../queue/dispatch-queue.js";
import { formatQueueStatus } from "../../queue/queue-status.js";
import { formatRate, formatVerdictCounts } from "../../report/format.js";
import { writeSummary } from "../../report/summarize.js";
import type { Summary } from "../../report/types.js";
import type { TaskSetChoice } from "../../run-folder/index.js";
import { hostChoiceFor, parseSandboxChoice } from "../../runner/backends.js";
import { action } from "../action.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { resolveSubmissionLevel } from "../../evaluate/submission-level.js";
import { count, levelOption } from "../api-flags.js";
import { addGrading, addQueue, addTaskSelection } from "../option-groups.js";
import { printJsonFailed, printJsonOk, printProblems, progress, progressDone } from "../output.js";

interface EvalFlags {
  submissions: string;
  out: string;
  tasks?: string[];
  tasksDir: string;
  set?: TaskSetChoice;
  jobs?: string;
  samples?: string;
  sandbox: string;
  python?: string;
  mirror?: string;
  queue?: string;
  queueAttempts?: string;
  shard?: string;
  forkServer?: boolean;
  level?: InstructionLevel;
  json?: boolean;
}

export function registerEval(program: Command): void {
  const cmd = program
    .command("eval")
    .description("grade an agent's submissions over tasks: isolated, parallel, resumable")
    .requiredOption("--submissions <PATH>", "folder of workspaces (one per task id) or a JSONL of {task_id, model, patch} / {task_id, model, files}")
    .requiredOption("--out <RUN_DIR>", "run folder: results/<model>/<task>/<sample>/, summary.json; rerun to resume");
  addTaskSelection(cmd);
  addGrading(cmd).option("--samples <K>", "grade at most K samples per task and model");
  addQueue(cmd, "grade", { help: "tries per sample before an infra result is written (retried with backoff: 2 s, 4 s, …)", default: "3" });
  cmd
    .addOption(levelOption("the submissions were made at (default: what generate.json beside the submissions says, else paper); one per run folder"))
    .option("--shard <I/N>", "grade only part I of N of the (task, model, sample) triples; merge with `lmr report RUN_1 … RUN_N`")
    .option("--json", "print summary.json to stdout (with --queue: {summary, queue})")
    .option(
      "--no-fork-server",
      "start a fresh tests' process for every sample (default: each task's tests are forked from one server; candidates are always fresh)",
    )
    .addHelpText(
      "after",
      `
Submissions: a JSONL file, one row per sample: {task_id, model, patch} (SWE-bench's
instance_id / model_name_or_path / model_patch work too) or {task_id, model,
files: {path: content}}, with an optional "sample" id; or a folder of workspaces,
DIR/<task_id>/ or DIR/<task_id>/<n>/ per sample, with an optional DIR/model.txt.
OpenHands' output.jsonl is read as it is: instance_id is the task id,
test_result.git_patch the patch, metadata.llm_config.model the model; a row with
an error and no patch is graded invalid with that error. LMR-Bench's layout works
as a folder: DIR/<n>-<Name>/ holding info.json and the filled repository
(info.json's repo_folder_name); it is graded for the task in info.json's
lmr.task_id, else for every task lmr import makes of that folder (ids
'<name>-…': "1-DPO" → dpo-…). An instance_id that is such a folder name maps the
same way. A folder or row that maps to no task is bad input, named. A row with
"invalid", "timeout" or "infra": "<why>" instead of code is graded with that
verdict and reason (lmr generate and lmr agent run write these).
Every row is graded as (task, model, sample): several models in one file each get
their own results folder and their own pass@k. Samples are numbered per task and
model in file order. Bad input stops the run before anything is written (exit 2):
an unreadable row, a task id that names no task (the nearest ids are suggested),
a (task, model, sample) given twice (both lines are named). Rows for tasks left
out by --tasks / --set are listed and not graded. A model with no row for a task
gets one invalid sample there.
Only the target files are taken from a submission; tests, fixtures, conftest.py,
pytest.ini and the like always come from the task. Verdicts: passed, failed,
error (import/collection), timeout, invalid (patch does not apply, touches grader
files, or no submission), infra (our side broke).
Rerunning the same command resumes: a sample keeps its result when neither its
submission nor the task, sandbox or interpreter changed; infra results are
retried. A run folder is locked while a run works in it; after a crash or kill -9
the next run kills the old run's leftover test processes and scratch copies.
Report with \`lmr report RUN_DIR --format md|html|junit|json\`.
--queue: this process plans, builds the bundles and writes the run folder as
a local run does; \`lmr worker --queue URL\` processes anywhere grade (see
docs/distributed-eval.md). Killed and run again, it resumes from the run folder
and from what the workers finished meanwhile. --shard I/N: a deterministic part
of the run for a batch scheduler's array job, one run folder per part.
--level: the instruction the solver had (paper or hinted). The tests are the same at
both levels; run.json, every result.json and summary.json record it, and a run folder
holds one level (grade the other into another --out; lmr report A B shows both).
Exit codes: 0 graded (whatever the verdicts), 2 bad input, 3 infrastructure.

Examples:
  $ lmr eval --tasks-dir examples/tasks --submissions preds.jsonl --out runs/r1 -j 2
  $ lmr eval --submissions two-models.jsonl --set all --out runs/r2
  $ lmr eval --submissions workspaces/ --tasks pref-loss rouge-notebook --out runs/r3
  $ lmr eval --submissions preds.jsonl --out runs/r4 --queue redis://queue.internal:6379
  $ lmr eval --submissions preds.jsonl --out runs/r5-2 --shard 2/4
  $ lmr eval --submissions hinted.jsonl --level hinted --out runs/r6-hinted`,
    )
    .action(action(runEvalCommand));
}

async function runEvalCommand(flags: EvalFlags): Promise<number> {
  const sandbox = await hostChoiceFor(parseSandboxChoice(flags.sandbox), flags.python);
  const jobs = count(flags.jobs, "--jobs") ?? availableParallelism();
  const samples = count(flags.samples, "--samples");
  const { tasks: loaded, knownTaskIds } = await loadChosenTasks(flags, "eval");
  const level = await resolveSubmissionLevel(flags.submissions, flags.level);
  const queue = flags.queue
    ? createQueueDispatcher({
        connection: parseQueueUrl(flags.queue),
        sandbox,
        attempts: count(flags.queueAttempts, "--queue-attempts") ?? 3,
        toolkitVersion: TOOLKIT_VERSION,
        onStatus: (s) => progress(formatQueueStatus(s)),
        log: (l) => process.stderr.write(`${l}\n`),
      })
    : undefined;
  const outcome = await runEval({
    submissions: flags.submissions,
    tasks: loaded,
    // A folder whose manifest does not load still names a task: rows for it are not "unknown".
    knownTaskIds,
    set: flags.set ?? (flags.tasks ? "all" : "core"),
    level,
    outDir: flags.out,
    jobs,
    ...(samples !== undefined ? { samples } : {}),
    sandbox,
    ...(flags.python ? { python: flags.python } : {}),
    ...(flags.mirror ? { mirror: flags.mirror } : {}),
    ...(flags.shard ? { shard: parseShard(flags.shard) } : {}),
    ...(queue ? { dispatcher: queue } : {}),
    ...(flags.forkServer === false ? { forkServer: false } : {}),
    onProgress: queue
      ? undefined
      : (p) =>
          progress(
            `grading ${p.done}/${p.total}${p.skipped ? ` (${p.skipped} already graded)` : ""}${p.last ? ` — ${p.last.task_id} ${p.last.model}#${p.last.sample}: ${p.last.verdict}` : ""}`,
          ),
  });
  progressDone();
  printProblems(outcome.problems);
  const rec = outcome.recovered;
  if (rec.previousPid !== undefined || rec.killed.length > 0 || rec.swept.length > 0) {
    process.stderr.write(
      `lmr: resumed after an interrupted run${rec.previousPid !== undefined ? ` (pid ${rec.previousPid})` : ""}: killed ${rec.killed.length} leftover test process(es), removed ${rec.swept.length} scratch/temp entr${rec.swept.length === 1 ? "y" : "ies"}\n`,
    );
  }
  const s = await writeSummary(flags.out);
  const infra = allInfra(s);
  if (flags.json) {
    const data = queue ? { summary: s, queue: queue.finalStatus() ?? null } : s;
    if (infra)
      printJsonFailed(
        "eval",
        new LmrError({
          code: "eval/all-infra",
          message: `every one of the ${s.totals.samples} samples ended in an infrastructure error`,
          hint: "see the infra reasons in the summary",
        }),
        data,
      );
    else printJsonOk("eval", data);
  } else {
    if (outcome.shard)
      process.stdout.write(
        `shard ${outcome.shard.index}/${outcome.shard.count} (plan ${outcome.shard.plan.slice(0, 12)}): merge the shards with lmr report RUN_1 … RUN_${outcome.shard.count}\n`,
      );
    process.stdout.write(describeOutcome(s, outcome.graded, outcome.reused, flags.out));
  }
  return infra ? EXIT.infra : EXIT.ok;
}

function describeOutcome(s: Summary, graded: number, reused: number, out: string): string {
  const v = s.totals.verdicts;
  const over = `${s.totals.tasks} tasks${s.totals.models > 1 ? `, ${s.totals.models} models` : ""}`;
  const lines = [
    `${s.totals.samples} samples over ${over}: ${v.passed} passed, ${v.failed} failed, ${v.error} error, ${v.timeout} timeout, ${v.invalid} invalid, ${v.infra} infra (graded ${graded}, reused ${reused})`,
    ...s.models.map(
      (m) =>
        `  ${m.model}: pass@1 ${formatRate(m.pass_at_1)} over ${m.totals.scored_tasks} tasks; ${m.totals.samples} samples: ${formatVerdictCounts(m.totals.verdicts)}`,
    ),
    `run folder: ${out} — report with: lmr report ${out} --format md`,
  ];
  return lines.join("\n") + "\n";
}

/** Every sample broke on our side: the run proves nothing about the submissions. */
function allInfra(s: Summary): boolean {
  return s.totals.samples > 0 && s.totals.verdicts.infra === s.totals.samples;
}

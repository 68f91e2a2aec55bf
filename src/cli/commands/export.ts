import { Option, type Command } from "commander";
import { isAbsolute, relative, resolve } from "node:path";
import { EXIT, exitCodeFor, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { exportLmrBenchTask } from "../../interop/export/lmr-bench.js";
import { makeJsonlRow, renderJsonl, type JsonlRow } from "../../interop/export/jsonl.js";
import { exportHarborTask, writeHarborDatasetFiles } from "../../interop/export/harbor.js";
import type { HarnessTaskInfo } from "../../interop/export/harness-task.js";
import { exportInspectTask, writeInspectFiles } from "../../interop/export/inspect.js";
import { makeHfRow, writeHfDataset, type HfRow } from "../../interop/export/hf.js";
import { forEachBuiltTask, selectTaskDirs } from "../../interop/export/tasks.js";
import { findTaskDirs, loadTask } from "../../manifest/load.js";
import { DEFAULT_LEVEL, requireLevel, type InstructionLevel } from "../../manifest/level.js";
import { TASK_SET_CHOICES, type TaskSetChoice } from "../../run-folder/index.js";
import { action } from "../action.js";
import { levelOption } from "../api-flags.js";
import { chooseTasks, invalidTasks } from "../choose-tasks.js";
import { paint, printJsonFailed, printJsonOk, printProblems, progress, progressDone } from "../output.js";

const FORMATS = ["lmr-bench", "jsonl", "hf", "harbor", "inspect"] as const;
type Format = (typeof FORMATS)[number];

interface ExportOptions {
  format: Format;
  out: string;
  tasksDir: string;
  tasks?: string[];
  set?: TaskSetChoice;
  level?: InstructionLevel;
  mirror?: string;
  json?: boolean;
}

export function registerExport(program: Command): void {
  program
    .command("export")
    .description("export built tasks for other harnesses: LMR-Bench folders, JSONL rows, a Hugging Face dataset, Harbor tasks or an Inspect AI task")
    .argument("[TASK_DIR...]", "task folders to export; default: every task under --tasks-dir")
    .addOption(
      new Option(
        "--format <FORMAT>",
        "lmr-bench (a folder per task), jsonl (one row per task), hf (a Hugging Face dataset folder), harbor (a Harbor task folder per task) or inspect (an Inspect AI task)",
      )
        .choices(FORMATS)
        .makeOptionMandatory(),
    )
    .requiredOption(
      "--out <DIR|FILE>",
      "lmr-bench: the folder that receives <n>-<id>/ folders; jsonl: the file to write; hf, harbor, inspect: the dataset folder",
    )
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
    .option("--tasks <ID...>", "only these task ids (as lmr eval takes them)")
    .addOption(new Option("--set <SET>", "only the tasks of this set (default: all)").choices(TASK_SET_CHOICES))
    .addOption(levelOption("the workspace's instruction.md holds (default paper)"))
    .option("--mirror <DIR>", "local mirror of github.com repositories (OWNER+NAME/…); default $LMR_MIRROR")
    .option("--json", "print what was written as JSON")
    .addHelpText(
      "after",
      `
Each task is built first (as \`lmr build\` does), then written:
  lmr-bench  OUT/<n>-<id>/ with <repo>/ (the masked repository, grader tests and
             fixtures in <repo>/unit_test/), golden_files/ (reference files),
             info.json (LMR-Bench's keys plus an "lmr" block that \`lmr import\`
             reads back) and a Dockerfile (python:<version>-slim, requirements,
             pytest; CMD runs the grader tests). Each folder is written atomically.
  jsonl      one row per task: id, paper, category, upstream, targets, instruction,
             environment, hashes, redistributable, and "code" (the masked target
             files) only when the upstream licence allows redistribution.
  hf         OUT/data/test.jsonl (one row per task: id, paper, category, set, kind,
             upstream URL/commit/licence, targets, both instruction levels,
             environment, verification summary; no code, tests or paper text) and
             OUT/README.md, the dataset card with the YAML header the Hub reads.
  harbor     OUT/<id>/ per task: task.toml, instruction.md (the --level), environment/
             (lmr's image as a Dockerfile, the masked workspace at /app), tests/test.sh
             (lmr's grader: tests/lmr/grade.py, writes /logs/verifier/reward.txt and
             reward.json), solution/solve.sh (the reference); OUT/README.md and
             OUT/adapter_metadata.json. The base stage is FROM the registry's image
             (debian:bookworm, ...) unless LMR_BASE_IMAGE_<BASE> names another.
  inspect    OUT/lmr_inspect.py (the Inspect task: a sample per task, a docker sandbox
             from tasks/<id>/compose.yaml or -T sandbox=local, lmr's grader as the
             scorer) and OUT/tasks/<id>/ (as for harbor, plus compose.yaml, sample.json).
Tasks: the folders given, else --tasks / --set over --tasks-dir (every set by default).
Tasks whose licence does not allow redistribution are listed as warnings on stderr.
Exit codes: 0 exported, 2 invalid task or usage, 3 git or file-system failure.

Examples:
  $ lmr export --format lmr-bench --out export/ --tasks-dir tasks
  $ lmr export --format jsonl --out tasks.jsonl tasks/dpo-preference-loss
  $ lmr export --format hf --out hf-dataset/ --set core
  $ lmr export --format harbor --out harbor-tasks/ --tasks dpo-preference-loss --level hinted
  $ lmr export --format inspect --out inspect/ --set core && inspect eval inspect/lmr_inspect.py --model …`,
    )
    .action(action(runExport));
}

async function runExport(taskDirs: string[], opts: ExportOptions): Promise<number> {
  const dirs = await chooseExportDirs(taskDirs, opts);
  const level = opts.level ?? DEFAULT_LEVEL;
  requireLevel(await Promise.all(dirs.map((d) => loadTask(d).catch(() => undefined))).then((ts) => ts.filter((t) => t !== undefined)), level);
  const source = { ...(opts.mirror !== undefined ? { mirror: opts.mirror } : {}), level };
  const warnings: string[] = [];
  const written: string[] = [];
  const rows: JsonlRow[] = [];
  const hfRows: HfRow[] = [];
  const harnessTasks: { id: string; info: HarnessTaskInfo }[] = [];
  const report = await forEachBuiltTask(dirs, source, async (built) => {
    progress(`exporting ${built.task.manifest.id} (${built.n}/${dirs.length})`);
    if (opts.format === "lmr-bench") {
      const r = await exportLmrBenchTask(opts.out, built);
      warnings.push(...r.warnings);
      written.push(r.folder);
    } else if (opts.format === "hf") {
      hfRows.push(await makeHfRow(built));
    } else if (opts.format === "harbor") {
      const r = await exportHarborTask(opts.out, built, level);
      warnings.push(...r.warnings);
      written.push(r.folder);
      harnessTasks.push({ id: built.task.manifest.id, info: r.info });
    } else if (opts.format === "inspect") {
      const r = await exportInspectTask(opts.out, built, level);
      warnings.push(...r.warnings);
      written.push(r.folder);
      harnessTasks.push({ id: built.task.manifest.id, info: r.info });
    } else {
      const r = await makeJsonlRow(built);
      rows.push(r.row);
      if (r.warning) warnings.push(r.warning);
    }
    progressDone();
  });
  if (!report.ok) {
    const err = invalidTasks(report.problems, report.tasks, "nothing exported");
    if (opts.json) printJsonFailed("export", err, { problems: report.problems });
    else {
      printProblems(report.problems);
      process.stderr.write(`lmr: ${err.message}\n`);
    }
    return exitCodeFor(err);
  }
  if (opts.format === "jsonl") {
    const file = resolve(opts.out);
    await writeFileAtomic(file, renderJsonl(rows)).catch((err: unknown) => {
      throw new LmrError({
        code: "export/write-failed",
        file,
        message: `cannot write it (${(err as Error).message})`,
        hint: "choose a writable --out file",
        cause: err,
      });
    });
    written.push(file);
  }
  if (opts.format === "hf") {
    const dir = resolve(opts.out);
    written.push(
      ...(await writeHfDataset(dir, hfRows).catch((err: unknown) => {
        throw new LmrError({
          code: "export/write-failed",
          file: dir,
          message: `cannot write the dataset there (${(err as Error).message})`,
          hint: "choose a writable --out folder",
          cause: err,
        });
      })),
    );
  }
  if (opts.format === "harbor") written.push(...(await writeHarborDatasetFiles(opts.out, harnessTasks, level)));
  if (opts.format === "inspect")
    written.push(
      ...(await writeInspectFiles(
        opts.out,
        harnessTasks.map((t) => t.id),
        level,
      )),
    );
  for (const w of warnings) process.stderr.write(`${paint("yellow", `warning: ${w}`, process.stderr)}\n`);
  const nRows = opts.format === "jsonl" ? rows.length : hfRows.length;
  if (opts.json)
    printJsonOk("export", { format: opts.format, level, written, warnings, ...(opts.format === "jsonl" || opts.format === "hf" ? { rows: nRows } : {}) });
  else {
    const what =
      opts.format === "jsonl" || opts.format === "hf"
        ? `${nRows} row${nRows === 1 ? "" : "s"} → ${written.map(shown).join(", ")}`
        : written.map(shown).join(", ");
    process.stdout.write(`exported ${dirs.length} task${dirs.length === 1 ? "" : "s"} (${opts.format}): ${what}\n`);
  }
  return EXIT.ok;
}

/** The folders given; else --tasks / --set over --tasks-dir as lmr eval chooses them (every set when neither is given). */
async function chooseExportDirs(taskDirs: string[], opts: ExportOptions): Promise<string[]> {
  if (taskDirs.length > 0 || (opts.tasks === undefined && opts.set === undefined)) return selectTaskDirs(taskDirs, opts.tasksDir);
  const dirs = await findTaskDirs(opts.tasksDir);
  const all = await Promise.all(dirs.map((d) => loadTask(d).catch(() => undefined)));
  return chooseTasks(dirs, all, { ...opts, set: opts.set ?? "all" }, "export");
}

function shown(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}

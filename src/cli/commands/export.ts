import { Option, type Command } from "commander";
import { isAbsolute, relative, resolve } from "node:path";
import { EXIT, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { exportLmrBenchTask } from "../../interop/export-lmr-bench.js";
import { makeJsonlRow, renderJsonl, type JsonlRow } from "../../interop/export-jsonl.js";
import { forEachBuiltTask, selectTaskDirs } from "../../interop/export-tasks.js";
import { action } from "../action.js";
import { paint, printJson, printProblems, progress, progressDone } from "../output.js";

const FORMATS = ["lmr-bench", "jsonl"] as const;
type Format = (typeof FORMATS)[number];

interface ExportOptions {
  format: Format;
  out: string;
  tasksDir: string;
  mirror?: string;
  json?: boolean;
}

export function registerExport(program: Command): void {
  program
    .command("export")
    .description("export built tasks in LMR-Bench's folder layout or as JSONL rows")
    .argument("[TASK_DIR...]", "task folders to export; default: every task under --tasks-dir")
    .addOption(new Option("--format <FORMAT>", "lmr-bench (a folder per task) or jsonl (one row per task)").choices(FORMATS).makeOptionMandatory())
    .requiredOption("--out <DIR|FILE>", "lmr-bench: the folder that receives <n>-<id>/ folders; jsonl: the file to write")
    .option("--tasks-dir <DIR>", "folder whose subfolders are tasks", "tasks")
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
Tasks whose licence does not allow redistribution are listed as warnings on stderr.
Exit codes: 0 exported, 2 invalid task or usage, 3 git or file-system failure.

Examples:
  $ lmr export --format lmr-bench --out export/ --tasks-dir tasks
  $ lmr export --format jsonl --out tasks.jsonl tasks/dpo-preference-loss`,
    )
    .action(action(runExport));
}

async function runExport(taskDirs: string[], opts: ExportOptions): Promise<number> {
  const dirs = await selectTaskDirs(taskDirs, opts.tasksDir);
  const source = opts.mirror !== undefined ? { mirror: opts.mirror } : {};
  const warnings: string[] = [];
  const written: string[] = [];
  const rows: JsonlRow[] = [];
  const report = await forEachBuiltTask(dirs, source, async (built) => {
    progress(`exporting ${built.task.manifest.id} (${built.n}/${dirs.length})`);
    if (opts.format === "lmr-bench") {
      const r = await exportLmrBenchTask(opts.out, built);
      warnings.push(...r.warnings);
      written.push(r.folder);
    } else {
      const r = await makeJsonlRow(built);
      rows.push(r.row);
      if (r.warning) warnings.push(r.warning);
    }
    progressDone();
  });
  if (!report.ok) {
    if (opts.json) printJson({ ok: false, problems: report.problems });
    else {
      printProblems(report.problems);
      process.stderr.write(`lmr: ${report.problems.length} problem(s) in ${report.tasks} task(s); nothing exported\n`);
    }
    return EXIT.input;
  }
  if (opts.format === "jsonl") {
    const file = resolve(opts.out);
    await writeFileAtomic(file, renderJsonl(rows)).catch((err: unknown) => {
      throw new LmrError({ code: "export-write-failed", kind: "infra", file, message: `cannot write it (${(err as Error).message})`, hint: "choose a writable --out file", cause: err });
    });
    written.push(file);
  }
  for (const w of warnings) process.stderr.write(`${paint("yellow", `warning: ${w}`, process.stderr)}\n`);
  if (opts.json) printJson({ ok: true, format: opts.format, written, warnings, ...(opts.format === "jsonl" ? { rows: rows.length } : {}) });
  else {
    const what = opts.format === "jsonl" ? `${rows.length} row${rows.length === 1 ? "" : "s"} → ${shown(written[0]!)}` : written.map(shown).join(", ");
    process.stdout.write(`exported ${dirs.length} task${dirs.length === 1 ? "" : "s"} (${opts.format}): ${what}\n`);
  }
  return EXIT.ok;
}

function shown(abs: string): string {
  const rel = relative(process.cwd(), abs);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : abs;
}

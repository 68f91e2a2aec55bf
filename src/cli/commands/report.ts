import { Option, type Command } from "commander";
import { resolve, join } from "node:path";
import { formatProblem, LmrError } from "../../core/errors.js";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { renderReport } from "../../report/render.js";
import { loadRuns } from "../../report/merge-runs.js";
import { loadSampleDetails } from "../../report/sample-details.js";
import { validateSummary } from "../../report/validate-summary.js";
import { buildSummary, summarizeRun, writeSummary } from "../../report/summarize.js";
import { REPORT_FORMATS, type ReportFormat, type SummaryProblem } from "../../report/types.js";
import { SUMMARY_FILE, TASK_SET_CHOICES, type TaskSetChoice } from "../../run-folder/index.js";
import { action, EXIT } from "../action.js";
import { paint, printJsonOk } from "../output.js";

const MAX_PROBLEMS_SHOWN = 20;

interface ReportOptions {
  format: ReportFormat;
  out?: string;
  set: TaskSetChoice;
  json?: boolean;
}

export function registerReport(program: Command): void {
  program
    .command("report")
    .description("summarise a run folder (writes RUN_DIR/summary.json) and print a report")
    .argument(
      "<RUN_DIR...>",
      "run folder written by `lmr eval` (holds run.json and results/); several: merged into one report (e.g. the shards of --shard I/N)",
    )
    .addOption(new Option("--format <format>", "report format").choices(REPORT_FORMATS).default("md"))
    .option("--out <file>", "write the report to FILE instead of stdout")
    .addOption(new Option("--set <set>", "report only the tasks of this set").choices(TASK_SET_CHOICES).default("all"))
    .addOption(new Option("--json", "print the summary as JSON (same as --format json)").conflicts("format"))
    .addHelpText(
      "after",
      `
Re-reads every results/<model>/<task>/<sample>/result.json (and run folders of
older lmr, results/<task>/<sample>/), so a run can be reported again from disk at
any time. Unreadable results are listed as warnings and in summary.json
"problems"; they never stop the report.

Every model in the run is reported on its own: a table of models, a model ×
category table (pass@1 with a seeded bootstrap 95% interval, pass@k, and, after
\`lmr judge\`, the judge's classes), tests vs judge (confusion matrix, Cohen's
kappa), tokens and cost (from generate.json beside the graded submissions),
then per model its pass@1 and pass@k, category, set and task tables. pass@k is
never pooled across models. The HTML page adds a task × model matrix: each
sample is a link that opens its failing tests, its diff against the masked
file, the judge's rationale and the agent's log (files under its agent/). summary.json always covers the whole run; --set core|extended|method
narrows the printed report to one set's tasks.

Formats: md (Markdown, default), html (one self-contained page), junit (JUnit
XML for CI: one testsuite per task and model, one testcase per sample), json
(the summary, schema/summary.schema.json).

Several run folders (the shards of \`lmr eval --shard I/N\`, or runs over
different samples) are reported as one run; summary.json is then not written
into any of them (use --format json). Merging refuses, exit 2, folders that hold
the same sample, shards of different plans or N, and shards mixed with whole
runs; a missing shard is a warning. Runs at different instruction levels
(\`lmr eval --level paper|hinted\`, one level per run folder) merge as different
models ("MODEL [paper]", "MODEL [hinted]"), never pooled, with a table of each
model's pass@1 at each level side by side.

Exit codes: 0 report written, 2 RUN_DIR is not a run folder or bad usage,
3 summary.json or the report could not be written.

Examples:
  $ lmr report runs/2024-06-01-gpt
  $ lmr report runs/2024-06-01-gpt --format html --out report.html
  $ lmr report runs/2024-06-01-gpt --format junit --out junit.xml
  $ lmr report runs/2024-06-01-gpt --set core --format json
  $ lmr report runs/r-1 runs/r-2 runs/r-3 --format html --out report.html
  $ lmr report runs/gpt-4o runs/qwen --format html --out compare.html   # two models side by side`,
    )
    .action(
      action(async (runDirs: string[], opts: ReportOptions) => {
        const format: ReportFormat = opts.json ? "json" : opts.format;
        let dir = resolve(runDirs[0]!);
        let summary;
        let merged = runDirs.length > 1 ? await loadRuns(runDirs) : undefined;
        if (merged) {
          summary = buildSummary(merged, opts.set === "all" ? {} : { set: opts.set });
          // a merged summary is written nowhere, but what --format json prints is the schema's all the same
          const check = await validateSummary(summary);
          if (!check.ok)
            throw new LmrError({
              code: "report/summary-invalid",
              message: `the merged summary does not match schema/summary.schema.json: ${check.problems.map((p) => `${p.pointer || "/"} ${p.message}`).join("; ")}`,
              hint: "this is a bug in lmr; please report it with the run folders",
            });
          dir = ""; // problems name their folder themselves
        } else {
          const whole = await writeSummary(dir);
          summary = opts.set === "all" ? whole : await summarizeRun(dir, { set: opts.set });
        }
        printWarnings(dir, summary.problems);
        // the HTML page's sample panels show files of the sample folders (diff, logs) that the summary does not hold
        if (format === "html") merged ??= await loadRuns(runDirs);
        // JSON on stdout is the envelope every --json prints; a JSON file (--out) is the summary itself
        if (format === "json" && opts.out === undefined) {
          printJsonOk("report", summary);
          return EXIT.ok;
        }
        const text = renderReport(summary, format, format === "html" && merged ? await loadSampleDetails(merged) : undefined);
        if (opts.out === undefined) {
          process.stdout.write(text);
        } else {
          const out = resolve(opts.out);
          await writeFileAtomic(out, text).catch((err: unknown) => {
            throw new LmrError({
              code: "report/write-failed",
              message: `cannot write the report: ${(err as Error).message}`,
              file: out,
              hint: "choose a writable --out path",
              cause: err,
            });
          });
          process.stderr.write(`lmr: wrote ${format} report to ${out}${dir ? ` (summary: ${join(dir, SUMMARY_FILE)})` : ""}\n`);
        }
        return EXIT.ok;
      }),
    );
}

function printWarnings(runDir: string, problems: SummaryProblem[]): void {
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN);
  for (const p of shown) {
    const line = formatProblem({ ...p, file: p.file === undefined ? undefined : join(runDir, p.file) });
    process.stderr.write(`${paint("yellow", "lmr: warning:", process.stderr)} ${line}\n`);
  }
  if (problems.length > shown.length) {
    process.stderr.write(
      `lmr: ... and ${problems.length - shown.length} more warnings${runDir ? ` in ${join(runDir, SUMMARY_FILE)}` : " (--format json lists them)"}\n`,
    );
  }
}

import type { Command } from "commander";
import { relative, isAbsolute } from "node:path";
import { EXIT, LmrError, formatProblem } from "../../core/errors.js";
import { readCommitMap } from "../../interop/import/commit-map.js";
import { importLmrBench } from "../../interop/import/lmr-bench.js";
import type { Defect, ImportOptions } from "../../interop/types.js";
import { CATEGORIES, type Category } from "../../manifest/types.js";
import { suggestClosest } from "../../manifest/suggest.js";
import { action } from "../action.js";
import { paint, printJsonFailed, printJsonOk } from "../output.js";

interface LmrBenchOptions {
  out: string;
  commitMap?: string;
  defaultCategory?: string;
  force?: boolean;
  json?: boolean;
  dryRun?: boolean;
}

export function registerImport(program: Command): void {
  const cmd = program
    .command("import")
    .description("import tasks from another benchmark's layout")
    .addHelpText("after", "\nExample:\n  $ lmr import lmr-bench ../LMR-Bench/benchmark --out tasks --commit-map commits.json");
  cmd
    .command("lmr-bench")
    .description("import an LMR-Bench benchmark folder (one folder per paper with info.json) as task folders")
    .argument("<DIR>", "the benchmark folder (or one paper folder)")
    .requiredOption("--out <DIR>", "folder that receives one task folder per task (OUT/<task-id>/)")
    .option("--commit-map <FILE>", 'JSON {"<repo url>": "<40-hex sha>"} (or {"commit", "paper_url", "year", "license"}): LMR-Bench pins no commits')
    .option("--default-category <C>", "category for implementations whose category is missing or not one of the nine")
    .option("--force", "replace task folders that already exist")
    .option("--dry-run", "report defects and what would be written; write nothing")
    .option("--json", "print {tasks, written, skipped, defects} as JSON (the data of the --json envelope)")
    .addHelpText(
      "after",
      `
Each implementation becomes a task: id = folder + function ("1-DPO" +
"preference_loss" → dpo-preference-loss), target = class_name.goal_function in
goal_file (mask mode body). Nothing of LMR-Bench's is copied: instruction.md and
tests/test_<id>.py are placeholders (the test fails on purpose), so
\`lmr validate\` passes and \`lmr verify\` fails until a person writes them.

Every defect is printed, repaired or not:
  DIR/1-DPO/info.json: /implementations/0/retrieval_content: <message> (repaired)
A task appears complete or not at all; an existing task folder is never
replaced without --force.
Exit codes: 0 all imported, 1 some defects not repaired (the other tasks are
written), 2 bad input or usage.

Examples:
  $ lmr import lmr-bench benchmark --out tasks --commit-map commits.json --dry-run
  $ lmr import lmr-bench benchmark --out tasks --commit-map commits.json \\
      --default-category "Training Objectives & Optimization Techniques"`,
    )
    .action(action(runLmrBench));
}

async function runLmrBench(dir: string, opts: LmrBenchOptions): Promise<number> {
  const options: ImportOptions = {};
  if (opts.commitMap !== undefined) options.commitMap = await readCommitMap(opts.commitMap);
  if (opts.defaultCategory !== undefined) options.defaultCategory = checkCategory(opts.defaultCategory);
  if (opts.force) options.force = true;
  if (opts.dryRun) options.dryRun = true;

  const result = await importLmrBench(dir, opts.out, options);
  const unrepaired = result.defects.filter((d) => !d.repaired).length;
  if (opts.json) {
    const data = { tasks: result.tasks.map((t) => t.id), written: result.written, skipped: result.skipped, defects: result.defects };
    if (unrepaired === 0) printJsonOk("import lmr-bench", data);
    else
      printJsonFailed(
        "import lmr-bench",
        new LmrError({
          code: "import/unrepaired-defects",
          message: `${unrepaired} defect${unrepaired === 1 ? "" : "s"} not repaired`,
          hint: "see data.defects: fix them in the source or by hand in the imported tasks",
        }),
        data,
      );
  } else {
    for (const d of result.defects) process.stdout.write(`${formatDefect(d)}\n`);
    const verb = opts.dryRun ? "would import" : "imported";
    const where = opts.dryRun ? "" : ` into ${shown(opts.out)}`;
    const line = `${verb} ${result.tasks.length} task${result.tasks.length === 1 ? "" : "s"}${where}; ${result.defects.length} defect${result.defects.length === 1 ? "" : "s"} (${result.defects.length - unrepaired} repaired, ${unrepaired} not repaired); ${result.skipped.length} skipped`;
    process.stdout.write(`${paint(unrepaired === 0 ? "green" : "yellow", line)}\n`);
    for (const t of result.tasks) process.stdout.write(`  ${t.id}\n`);
  }
  return unrepaired === 0 ? EXIT.ok : EXIT.check;
}

export function formatDefect(d: Defect): string {
  return formatProblem({ file: `${d.folder}/info.json`, pointer: d.key, message: `${d.message} (${d.repaired ? "repaired" : "not repaired"})` });
}

function checkCategory(c: string): Category {
  const found = CATEGORIES.find((k) => k.toLowerCase() === c.trim().toLowerCase());
  if (found) return found;
  const close = suggestClosest(c, CATEGORIES);
  throw new LmrError({
    code: "import/unknown-category",
    message: `--default-category ${JSON.stringify(c)} is not one of the nine categories`,
    hint: close ? `did you mean ${JSON.stringify(close)}?` : `use one of: ${CATEGORIES.join("; ")}`,
  });
}

function shown(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : p;
}

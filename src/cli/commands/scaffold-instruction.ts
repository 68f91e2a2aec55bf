import type { Command } from "commander";
import { EXIT } from "../../core/errors.js";
import { displayPath } from "../../manifest/read.js";
import { scaffoldInstruction } from "../../scaffold/instruction.js";
import { action } from "../action.js";
import { printJsonOk } from "../output.js";

interface InstructionFlags {
  force?: boolean;
  paper?: string;
  papers?: string;
  keywords?: string[];
  mirror?: string;
  template?: string;
  json?: boolean;
}

/** `lmr scaffold instruction TASK_DIR`: a subcommand of the `scaffold` group. */
export function registerScaffoldInstruction(group: Command): void {
  group
    .command("instruction")
    .description("write a draft instruction.md for a task, with TODOs for the author")
    .argument("<TASK_DIR>", "the task folder (holds task.json)")
    .option("--force", "replace an existing instruction (your edits are lost)")
    .option("--paper <PATH>", "paper text to search (a PDF or paper.json); default: the task's pinned PDF, else paper.text")
    .option("--papers <DIR>", "folder of paper PDFs, as for lmr build; default $LMR_PAPERS, else the cache")
    .option("--keywords <TERM...>", "more terms to find in the paper (quote multi-word terms)")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("--template <FILE>", "use this template instead of the toolkit's templates/instruction.md.tmpl")
    .option("--json", "print what was written as JSON")
    .addHelpText(
      "after",
      `
Checks out the upstream at its commit, applies the prepare steps and reads each
target's signature and docstring; searches the paper (the pinned PDF from
--papers DIR or the cache that \`lmr paper fetch\` fills, else paper.text in the
manifest, or --paper) for the target's name, its docstring's words and
--keywords, and cites the pages, sections and equations found. The draft says
what to implement, where in the paper, which context files help, what is out of
scope and how the work is checked (that hidden tests must pass, never what they
contain). Every place that needs the author is marked TODO(author).
Exit codes: 0 written, 2 bad input or the file exists (use --force), 3 infrastructure.

Examples:
  $ lmr scaffold instruction tasks/dpo-preference-loss
  $ lmr scaffold instruction tasks/dpo-preference-loss --force --paper paper.pdf --keywords "label smoothing" IPO`,
    )
    .action(action(runInstruction));
}

async function runInstruction(taskDir: string, flags: InstructionFlags): Promise<number> {
  const r = await scaffoldInstruction(taskDir, {
    ...(flags.force ? { force: true } : {}),
    ...(flags.paper !== undefined ? { paper: flags.paper } : {}),
    ...(flags.papers !== undefined ? { papers: flags.papers } : {}),
    ...(flags.keywords ? { keywords: flags.keywords } : {}),
    ...(flags.mirror !== undefined ? { mirror: flags.mirror } : {}),
    ...(flags.template !== undefined ? { template: flags.template } : {}),
  });
  if (flags.json) {
    printJsonOk("scaffold instruction", r);
    return EXIT.ok;
  }
  const paper = r.passages === undefined ? "no paper text" : `${r.passages} paper passage${r.passages === 1 ? "" : "s"} cited`;
  process.stdout.write(`wrote ${displayPath(r.file)} (${r.targets} target${r.targets === 1 ? "" : "s"}, ${paper}, ${r.todos} TODO(author) to resolve)\n`);
  return EXIT.ok;
}

import type { Command } from "commander";
import { spawn } from "node:child_process";
import { EXIT, LmrError } from "../../core/errors.js";
import { createTask, DEFAULT_TASKS_DIR } from "../../new/create-task.js";
import { formatNextSteps, walkNextSteps } from "../../new/next.js";
import type { NewFlags } from "../../new/types.js";
import { action } from "../action.js";
import { printJsonFailed, printJsonOk, printProblems } from "../output.js";

interface NewCliFlags extends NewFlags {
  json?: boolean;
}

export function registerNew(program: Command): void {
  program
    .command("new")
    .description("create a task folder: task.json, a draft instruction, a failing placeholder test")
    .option("--paper-title <TEXT>", "the paper's title")
    .option("--paper-url <URL>", "a stable link to the paper; an arXiv link with a version (https://arxiv.org/abs/2305.18290v3) pins the PDF")
    .option("--paper-pdf <FILE>", "the paper's PDF: its sha256 is pinned (whatever the URL looks like) and the PDF cached; its text never enters the task")
    .option(
      "--pdf-url <URL>",
      "where the PDF is downloaded from (paper.pdf_url), e.g. https://github.com/OWNER/NAME/raw/COMMIT/paper.pdf: a PDF in the upstream at the pinned commit is hashed from the checkout",
    )
    .option("--year <YYYY>", "year of publication")
    .option("--venue <TEXT>", 'where it was published, e.g. "NeurIPS 2023"')
    .option("--repo <URL|PATH>", "the paper's code: a git URL, or a local folder inside this project")
    .option("--commit <SHA>", "commit to pin (a short SHA is resolved to the full one); needed for a URL")
    .option("--file <PATH>", "the target file, relative to the repository")
    .option("--symbol <NAME>", "the target: function, Class.method or Class")
    .option("--line <N>", "line of the def/class, when the symbol is defined more than once")
    .option("--mode <MODE>", "body | region | class (default: class for a class, else body)")
    .option("--region-start <LINE|TEXT>", "mode region: first line to mask (number, or text the line contains)")
    .option("--region-end <LINE|TEXT>", "mode region: last line to mask")
    .option("--category <NAME>", "one of the nine categories (a unique word of it is enough)")
    .option("--id <SLUG>", "task id (default: the method's short name + symbol, e.g. dpo-preference-loss; rename here, before the folder exists)")
    .option("--license <SPDX>", "upstream licence (default: detected from its LICENSE file, else NOASSERTION)")
    .option("--author <NAME>", "who writes the task (default: git config user.name)")
    .option("--tasks-dir <DIR>", "folder that holds the tasks", DEFAULT_TASKS_DIR)
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("-y, --yes", "ask nothing: take defaults, and fail on a missing required flag")
    .option("--json", "print the result as JSON (implies --yes)")
    .addHelpText(
      "after",
      `
On a terminal, lmr new asks for every answer not given as a flag: it lists the
repository's Python files and the chosen file's functions, methods and classes
(type to filter), and suggests the commit (head of the default branch), the id
and the licence. Without a terminal, or with --yes, nothing is asked: a missing
required flag (--paper-title --paper-url --year --repo --commit (URL only) --file
--symbol --category, --author without git user.name) is an error naming it.
Every answer is checked against the upstream at the commit; a wrong one exits 2
naming the flag, with near matches. The task folder is written whole in one
rename, and never over an existing one.
The paper is pinned from --paper-url: an arXiv link with a version sets
paper.arxiv, a direct .pdf link (or --pdf-url) paper.pdf_url. paper.sha256/bytes
come from --paper-pdf whatever the URL looks like (an arXiv link without a
version included), or from the file --pdf-url names inside the upstream at the
pinned commit; the PDF then goes into the paper cache. Else they come from
downloading the pinned PDF (from $LMR_ARXIV_BASE for arXiv); when that fails the
task is written without them (\`lmr paper fetch --update-manifest\` adds them
later). The paper's text never goes into a task whose upstream is a URL: only a
paper.json given to --paper-pdf for a local example upstream is stored.
The id is suggested from the method's short name (the word before the title's
colon, an acronym, else initials) and the symbol; --id sets it.
Exit codes: 0 written, 1 written but it does not validate (please report it),
2 bad usage or a wrong answer (nothing written), 3 infrastructure (git, network).

Examples:
  $ lmr new
  $ lmr new --yes --paper-title "Direct Preference Optimization" --paper-url https://arxiv.org/abs/2305.18290v3 \\
      --year 2023 --repo https://github.com/eric-mitchell/direct-preference-optimization --commit "$COMMIT" \\
      --file trainers.py --symbol preference_loss --category "training objectives" --author "A. Person"`,
    )
    .action(action(runNew));
}

async function runNew(flags: NewCliFlags): Promise<number> {
  const interactive = Boolean(process.stdin.isTTY && process.stdout.isTTY) && !flags.yes && !flags.json;
  // loaded only at a terminal: a scripted run must never wait on a prompt
  const ask = interactive ? await (await import("../../new/wizard.js")).makeTerminalAsker() : undefined;
  const note = (line: string): void => void process.stderr.write(`lmr: ${line}\n`);
  const result = await createTask(flags, { cwd: process.cwd(), ...(ask ? { ask } : {}), ...(flags.json ? {} : { note }) }).catch((err: unknown) => {
    // Ctrl+C at a prompt: nothing was written (the task folder appears only at the end)
    if (err instanceof Error && err.name === "ExitPromptError") throw new LmrError({ code: "new/cancelled", message: "cancelled; nothing was written" });
    throw err;
  });
  if (flags.json) {
    const data = { task_dir: result.taskDir, files: result.files, manifest: result.manifest, problems: result.problems, next: result.next };
    if (result.problems.length === 0) printJsonOk("new", data);
    else
      printJsonFailed(
        "new",
        new LmrError({
          code: "new/not-valid-yet",
          file: result.taskDir,
          message: `the new task does not validate yet: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`,
          hint: "see data.problems and data.next: the steps that fill in what is missing",
        }),
        data,
      );
    return result.problems.length === 0 ? EXIT.ok : EXIT.check;
  }
  if (result.problems.length > 0) {
    process.stderr.write("lmr: the new task does not validate yet:\n");
    printProblems(result.problems);
  }
  if (ask) await walkNextSteps(ask, result.next, runLmr, (text) => void process.stdout.write(text));
  else process.stdout.write(`Next steps:\n${formatNextSteps(result.next)}\n`);
  return result.problems.length === 0 ? EXIT.ok : EXIT.check;
}

/** Runs this same lmr with `args`, on the same terminal. */
function runLmr(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [process.argv[1]!, ...args], { stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? EXIT.infra));
    child.on("error", () => resolve(EXIT.infra));
  });
}

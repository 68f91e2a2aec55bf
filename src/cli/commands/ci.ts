import type { Command } from "commander";
import { EXIT } from "../../core/errors.js";
import { displayPath } from "../../manifest/read.js";
import { DEFAULT_CRON, DEFAULT_WORKFLOW, writeCiWorkflow } from "../../scaffold/ci-workflow.js";
import { action } from "../action.js";
import { printJsonOk } from "../output.js";

interface InitFlags {
  out: string;
  tasksDir: string;
  install?: string;
  cron: string;
  node: string;
  force?: boolean;
  json?: boolean;
}

export function registerCi(program: Command): void {
  const ci = program.command("ci").description("continuous integration for a dataset repository: write its GitHub Actions workflow");
  ci.command("init")
    .description(
      "write a GitHub Actions workflow that validates and verifies the tasks a pull request changes, pins papers, and re-verifies every task on a schedule",
    )
    .option("--out <FILE>", "where to write the workflow", DEFAULT_WORKFLOW)
    .option("--tasks-dir <DIR>", "the tasks folder, relative to the repository root", "tasks")
    .option("--install <SPEC>", "what the jobs install with npm install -g (default: this lmr, lmr@<version>; a tarball or git URL works too)")
    .option("--cron <EXPR>", "when the scheduled jobs run (five cron fields, UTC)", DEFAULT_CRON)
    .option("--node <VERSION>", "the Node.js the jobs run lmr with", "20")
    .option("--force", "replace an existing workflow file")
    .option("--json", "print {path, replaced} as JSON")
    .addHelpText(
      "after",
      `
The workflow's jobs:
  validate        every pull request: lmr validate on every task.
  verify-changed  every pull request: lmr verify --changed-since <base commit> --force,
                  i.e. every check of the tasks whose inputs changed, run from scratch;
                  then refuses a committed verification.json that does not pass or was
                  made by another toolkit version or for other inputs.
  pin-papers      schedule and by hand: lmr paper fetch --update-manifest, re-verifies
                  the tasks it pinned, and opens a pull request with the pins and records.
  full-verify     schedule and by hand: every task verified again from scratch.
Upstream clones are cached by the commits the manifests pin, Debian packages as .deb
files, task images (lmr env build) as a docker save archive. Check the file with
actionlint before committing it.
Exit codes: 0 written, 2 the file exists (without --force) or a bad option.

Examples:
  $ lmr ci init
  $ lmr ci init --tasks-dir tasks --cron "0 4 * * 0" --force`,
    )
    .action(action(runInit));
}

async function runInit(flags: InitFlags): Promise<number> {
  const r = await writeCiWorkflow(flags.out, {
    tasksDir: flags.tasksDir,
    cron: flags.cron,
    nodeVersion: flags.node,
    ...(flags.install ? { install: flags.install } : {}),
    ...(flags.force ? { force: true } : {}),
  });
  if (flags.json) printJsonOk("ci init", { path: displayPath(r.path), replaced: r.replaced });
  else {
    process.stdout.write(
      `${r.replaced ? "replaced" : "wrote"} ${displayPath(r.path)}: jobs validate and verify-changed on pull requests, pin-papers and full-verify on "${flags.cron}" and by hand\n`,
    );
    process.stdout.write(
      "next: check it with actionlint, commit it, and let the pin-papers job open pull requests (Settings → Actions → Workflow permissions: allow GitHub Actions to create pull requests)\n",
    );
  }
  return EXIT.ok;
}

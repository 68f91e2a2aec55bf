#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { createRequire } from "node:module";
import { EXIT } from "../core/errors.js";
import { registerValidate } from "./commands/validate.js";
import { registerMask } from "./commands/mask.js";
import { registerBuild } from "./commands/build.js";
import { registerPrepare } from "./commands/prepare.js";
import { registerReport } from "./commands/report.js";
import { registerPaper } from "./commands/paper.js";
import { registerImport } from "./commands/import.js";
import { registerExport } from "./commands/export.js";
import { registerVerify } from "./commands/verify.js";
import { registerList } from "./commands/list.js";
import { registerEval } from "./commands/eval.js";
import { registerRecord } from "./commands/record.js";
import { registerScaffold } from "./commands/scaffold.js";
import { registerNew } from "./commands/new.js";
import { registerEnv } from "./commands/env.js";
import { registerWorker } from "./commands/worker.js";
import { registerGenerate } from "./commands/generate.js";
import { registerAgent } from "./commands/agent.js";
import { registerJudge } from "./commands/judge.js";

const require = createRequire(import.meta.url);
const { version } = require("../../package.json") as { version: string };

export function createProgram(): Command {
  const program = new Command("lmr")
    .description("Build, curate and run paper-code-reproduction benchmarks")
    .version(version)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  program.configureOutput({ outputError: (str, write) => write(str) });
  registerNew(program);
  registerValidate(program);
  registerMask(program);
  registerPrepare(program);
  registerBuild(program);
  registerRecord(program);
  registerScaffold(program);
  registerVerify(program);
  registerList(program);
  registerEval(program);
  registerGenerate(program);
  registerAgent(program);
  registerJudge(program);
  registerWorker(program);
  registerEnv(program);
  registerReport(program);
  registerPaper(program);
  registerImport(program);
  registerExport(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  // `lmr … | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EXIT.ok);
    throw err;
  });
  const program = createProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; any other parse error is bad usage
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.input;
      return;
    }
    throw err;
  }
}

await main();

#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { createRequire } from "node:module";
import { EXIT } from "../core/errors.js";
import { registerValidate } from "./commands/validate.js";
import { registerMask } from "./commands/mask.js";
import { registerBuild } from "./commands/build.js";
import { registerPrepare } from "./commands/prepare.js";
import { registerReport } from "./commands/report.js";

const require = createRequire(import.meta.url);
const { version } = require("../../package.json") as { version: string };

export function createProgram(): Command {
  const program = new Command("lmr")
    .description("Build, curate and run paper-code-reproduction benchmarks")
    .version(version)
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  program.configureOutput({ outputError: (str, write) => write(str) });
  registerValidate(program);
  registerMask(program);
  registerPrepare(program);
  registerBuild(program);
  registerReport(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
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

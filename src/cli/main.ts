#!/usr/bin/env node
import { CommanderError } from "commander";
import { EXIT } from "../core/errors.js";
import { commandNamed, createProgram } from "./program.js";

export async function main(argv: string[] = process.argv): Promise<void> {
  // `lmr … | head` closes the pipe early: that is the reader's choice, not an error.
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") process.exit(EXIT.ok);
    throw err;
  });
  const program = await createProgram(commandNamed(argv.slice(2)));
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

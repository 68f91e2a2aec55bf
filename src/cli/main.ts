#!/usr/bin/env node
import { Command, CommanderError } from "commander";
import { EXIT, LmrError } from "../core/errors.js";
import { commandPath, wantsJson } from "./action.js";
import { printJsonFailed } from "./output.js";
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
      // help and version exit 0; any other parse error is bad usage (commander has said why on stderr)
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.input;
      if (err.exitCode !== 0 && wantsJson(argv)) {
        printJsonFailed(
          commandPath(commandOf(program, argv.slice(2))) || "lmr",
          new LmrError({ code: "usage/bad-args", message: err.message.replace(/^error: /, ""), hint: "run the command with --help" }),
        );
      }
      return;
    }
    throw err;
  }
}

/** The (sub)command the words of a run name, as far as they name one. */
function commandOf(program: Command, args: readonly string[]): Command {
  let cmd = program;
  for (const a of args) {
    if (a.startsWith("-")) continue;
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    cmd = sub;
  }
  return cmd;
}

await main();

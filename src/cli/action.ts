import { Command } from "commander";
import { exitCodeFor, isLmrError, EXIT, LmrError } from "../core/errors.js";
import { printJsonFailed } from "./output.js";

/**
 * Wraps a command body: the body returns an exit code; thrown LmrErrors are
 * printed in the one format (or, with --json, as the envelope's error) and mapped to exit codes here.
 */
export function action<A extends unknown[]>(body: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const json = wantsJson(process.argv);
    try {
      process.exitCode = await body(...args);
    } catch (err) {
      if (json) {
        const last = args[args.length - 1];
        printJsonFailed(
          last instanceof Command ? commandPath(last) : "lmr",
          isLmrError(err) ? err : new LmrError({ code: "internal/unexpected", message: String(err) }),
        );
      }
      if (isLmrError(err)) {
        if (!json) process.stderr.write(`lmr: ${err.format()}\n`);
      } else {
        process.stderr.write(`lmr: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      }
      process.exitCode = exitCodeFor(err);
    }
  };
}

/** Whether a run asked for JSON on stdout: --json, or --format json (lmr list, lmr report). */
export function wantsJson(argv: readonly string[]): boolean {
  return argv.includes("--json") || argv.includes("--format=json") || argv.some((a, i) => a === "--format" && argv[i + 1] === "json");
}

/** A command's words without the program's: "validate", "env build". */
export function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c?.parent; c = c.parent) words.unshift(c.name());
  return words.join(" ");
}

export { EXIT };

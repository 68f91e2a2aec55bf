import { exitCodeFor, isLmrError, EXIT } from "../core/errors.js";
import { printJson } from "./output.js";

/**
 * Wraps a command body: the body returns an exit code; thrown LmrErrors are
 * printed in the one format (or as JSON with --json) and mapped to exit codes here.
 */
export function action<A extends unknown[]>(body: (...args: A) => Promise<number>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const wantsJson = process.argv.includes("--json");
    try {
      process.exitCode = await body(...args);
    } catch (err) {
      if (wantsJson) {
        printJson({ ok: false, error: isLmrError(err) ? err.toJSON() : { code: "internal/unexpected", kind: "infra", message: String(err) } });
      }
      if (isLmrError(err)) {
        if (!wantsJson) process.stderr.write(`lmr: ${err.format()}\n`);
      } else {
        process.stderr.write(`lmr: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      }
      process.exitCode = exitCodeFor(err);
    }
  };
}

export { EXIT };

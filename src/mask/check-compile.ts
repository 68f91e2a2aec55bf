import { PythonWorker, resolvePython } from "./python/worker.js";

interface CompileError {
  /** Python's exception type: SyntaxError, IndentationError, TabError, ValueError... */
  type: string;
  message: string;
  line?: number;
  column?: number;
}

export interface CompileOutcome {
  /** The path, or the name given with an in-memory source. */
  file: string;
  ok: boolean;
  error?: CompileError;
}

/** A file path (Python reads it) or an in-memory source with a display name. */
export type CompileInput = string | { name: string; source: string };

interface WorkerAnswer {
  ok: boolean;
  error?: CompileError;
}

/**
 * `compile()`s many files or sources in ONE Python process (LMR_PYTHON or
 * python3 unless `python` is given) and returns one outcome per input, in order.
 * Throws LmrError (kind "infra") when the interpreter cannot run.
 */
export async function checkCompiles(files: readonly CompileInput[], python?: string): Promise<CompileOutcome[]> {
  if (files.length === 0) return [];
  const worker = new PythonWorker(resolvePython(python));
  try {
    const answers: Promise<WorkerAnswer>[] = [];
    for (const f of files) {
      answers.push(
        typeof f === "string"
          ? worker.request<WorkerAnswer>({ op: "compile", path: f })
          : worker.request<WorkerAnswer>({ op: "compile", name: f.name }, f.source),
      );
      await worker.drained();
    }
    const settled = await Promise.all(answers);
    return settled.map((a, i) => {
      const input = files[i]!;
      const outcome: CompileOutcome = { file: typeof input === "string" ? input : input.name, ok: a.ok };
      if (a.error) outcome.error = a.error;
      return outcome;
    });
  } finally {
    await worker.close();
  }
}

/** `file:line:col: Type: message`, the way the CLI prints a compile failure. */
export function formatCompileError(outcome: CompileOutcome): string {
  const e = outcome.error;
  if (!e) return `${outcome.file}: compiles`;
  const where = [outcome.file, e.line, e.column].filter((x) => x !== undefined && x !== null).join(":");
  return `${where}: ${e.type}: ${e.message}`;
}

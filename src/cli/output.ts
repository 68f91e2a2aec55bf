import { formatProblem, type LmrError, type Problem } from "../core/errors.js";
import type { JsonEnvelope, JsonError } from "../core/json-envelope.js";

/** Colour only on a TTY and when NO_COLOR is unset (https://no-color.org). */
function useColor(stream: NodeJS.WriteStream = process.stdout): boolean {
  return Boolean(stream.isTTY) && !("NO_COLOR" in process.env && process.env.NO_COLOR !== "");
}

const codes = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const;
export function paint(color: keyof typeof codes, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  return useColor(stream) ? `\u001b[${codes[color]}m${text}\u001b[0m` : text;
}

function jsonError(err: Pick<LmrError, "code" | "kind" | "message" | "file" | "pointer" | "hint">): JsonError {
  return {
    code: err.code,
    kind: err.kind,
    message: err.message,
    ...(err.file !== undefined ? { file: err.file } : {}),
    ...(err.pointer !== undefined ? { pointer: err.pointer } : {}),
    ...(err.hint !== undefined ? { hint: err.hint } : {}),
  };
}

/** The one writer of `--json` output: a command that succeeded prints its result as `data`. */
export function printJsonOk(command: string, data: unknown): void {
  writeEnvelope({ ok: true, command, data });
}

/** A command that ends non-zero prints why (`err`, whose code gives the exit code) and, if it has one, what it found. */
export function printJsonFailed(command: string, err: LmrError, data?: unknown): void {
  writeEnvelope({ ok: false, command, error: jsonError(err), ...(data !== undefined ? { data } : {}) });
}

/** A file's content printed in place of the file (`lmr paper extract` without --out): data, not a command's result, so no envelope. */
export function printArtifact(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

function writeEnvelope(envelope: JsonEnvelope): void {
  process.stdout.write(JSON.stringify(envelope, null, 2) + "\n");
}

export function printProblems(problems: Problem[], stream: NodeJS.WriteStream = process.stderr): void {
  for (const p of problems) stream.write(formatProblem(p) + "\n");
}

/** Progress lines only on a TTY, so logs and CI stay clean. */
export function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\u001b[2K${text}`);
}
export function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
}

import { kindOf, type ErrorCode, type ErrorKind } from "./error-codes.js";

export type { ErrorCode, ErrorKind } from "./error-codes.js";

/**
 * One error type for everything the toolkit reports. `code` is stable and
 * machine-readable (one of ERROR_CODES in error-codes.ts, which also fixes its kind and so
 * the exit code); `file` and `pointer` say where; `hint` says how to fix it.
 * Expected outcomes (a failed check, an invalid manifest) are values, not
 * exceptions: LmrError is for things that stop a command.
 */
export interface LmrErrorInit {
  code: ErrorCode;
  message: string;
  file?: string;
  pointer?: string;
  hint?: string;
  cause?: unknown;
}

export class LmrError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly file?: string;
  readonly pointer?: string;
  readonly hint?: string;

  constructor(init: LmrErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "LmrError";
    this.code = init.code;
    this.kind = kindOf(init.code);
    if (init.file !== undefined) this.file = init.file;
    if (init.pointer !== undefined) this.pointer = init.pointer;
    if (init.hint !== undefined) this.hint = init.hint;
  }

  /** `file: /pointer: message (hint: ...)`, the one format every command prints. */
  format(): string {
    return formatProblem({ file: this.file, pointer: this.pointer, message: this.message, hint: this.hint });
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, kind: this.kind, file: this.file, pointer: this.pointer, message: this.message, hint: this.hint };
  }
}

export interface Problem {
  file?: string | undefined;
  pointer?: string | undefined;
  message: string;
  hint?: string | undefined;
}

export function formatProblem(p: Problem): string {
  const where = [p.file, p.pointer].filter((s): s is string => s !== undefined && s !== "").join(": ");
  const hint = p.hint ? ` (hint: ${p.hint})` : "";
  return `${where ? `${where}: ` : ""}${p.message}${hint}`;
}

/** Exit codes, one place: 0 ok, 1 a check failed, 2 bad usage/input, 3 infrastructure. */
export const EXIT = { ok: 0, check: 1, input: 2, infra: 3 } as const;

export function exitCodeFor(err: unknown): number {
  if (err instanceof LmrError) {
    switch (err.kind) {
      case "check":
        return EXIT.check;
      case "infra":
        return EXIT.infra;
      default:
        return EXIT.input;
    }
  }
  return EXIT.infra;
}

export function isLmrError(err: unknown): err is LmrError {
  return err instanceof LmrError;
}

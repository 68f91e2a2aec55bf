import type { ErrorCode, ErrorKind } from "./errors.js";

/** An error as `--json` prints it: the LmrError's fields, without the unset ones. */
export interface JsonError {
  code: ErrorCode;
  kind: ErrorKind;
  message: string;
  file?: string;
  pointer?: string;
  hint?: string;
}

/**
 * What every command prints with `--json` (schema/cli-envelope.schema.json), one JSON value on
 * stdout: `{ok: true, command, data}`, or `{ok: false, command, error, data?}` when the command
 * exits non-zero; `data` then holds what the command found (the problems, the failed records).
 * `command` is the command's words without `lmr` ("validate", "env build").
 */
export type JsonEnvelope = { ok: true; command: string; data: unknown } | { ok: false; command: string; error: JsonError; data?: unknown };

import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import { VALIDATORS, loadValidator, readSchemaText } from "../core/schema-validator.js";

let compiled: ValidateFunction | undefined;
let schema: Record<string, unknown> | undefined;

/** The task schema as JSON (read once from the installed toolkit). */
export function readTaskSchema(): Record<string, unknown> {
  schema ??= JSON.parse(readSchemaText(VALIDATORS.task)) as Record<string, unknown>;
  return schema;
}

/** Compiled once per process (ahead of time by `npm run build`); strict mode so a sloppy schema fails loudly rather than validating loosely. */
function compileTaskSchema(): ValidateFunction {
  compiled ??= loadValidator(VALIDATORS.task);
  return compiled;
}

/** Raw ajv errors of a manifest value against the schema; [] when it conforms. */
export function collectSchemaErrors(data: unknown): ErrorObject[] {
  const validate = compileTaskSchema();
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

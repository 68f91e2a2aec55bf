import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { LmrError } from "../core/errors.js";
import { toolkitPath } from "../core/paths.js";

export const SCHEMA_PATH = toolkitPath("schema", "task.schema.json");

let compiled: ValidateFunction | undefined;
let schema: Record<string, unknown> | undefined;

/** The task schema as JSON (read once from the installed toolkit). */
export function readTaskSchema(): Record<string, unknown> {
  try {
    schema ??= JSON.parse(readFileSync(SCHEMA_PATH, "utf8")) as Record<string, unknown>;
    return schema;
  } catch (err) {
    throw new LmrError({
      code: "schema-unreadable",
      kind: "infra",
      file: SCHEMA_PATH,
      message: `cannot read the task schema: ${err instanceof Error ? err.message : String(err)}`,
      hint: "reinstall lmr; schema/task.schema.json ships with it",
      cause: err,
    });
  }
}

/** Compiled once per process; strict mode so a sloppy schema fails loudly here rather than validating loosely. */
export function compileTaskSchema(): ValidateFunction {
  if (compiled) return compiled;
  const ajv = new Ajv2020({ strict: true, allErrors: true, verbose: true });
  addFormats.default(ajv);
  compiled = ajv.compile(readTaskSchema());
  return compiled;
}

/** Raw ajv errors of a manifest value against the schema; [] when it conforms. */
export function collectSchemaErrors(data: unknown): ErrorObject[] {
  const validate = compileTaskSchema();
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

import type { ValidateFunction } from "ajv/dist/2020.js";
import { LmrError } from "../core/errors.js";
import { toolkitPath } from "../core/paths.js";
import { VALIDATORS, loadValidator } from "../core/schema-validator.js";
import type { SummaryProblem } from "./types.js";

const SUMMARY_SCHEMA_PATH = toolkitPath("schema", "summary.schema.json");

let compiled: Promise<ValidateFunction> | undefined;

async function compileSchema(): Promise<ValidateFunction> {
  try {
    return loadValidator(VALIDATORS.summary);
  } catch (err) {
    throw new LmrError({
      code: "report/schema-missing",
      message: `cannot load the summary schema: ${(err as Error).message}`,
      file: SUMMARY_SCHEMA_PATH,
      hint: "reinstall lmr; schema/ ships with it",
      cause: err,
    });
  }
}

/** Check a value against schema/summary.schema.json; problems carry the JSON pointer of each mismatch. */
export async function validateSummary(value: unknown): Promise<{ ok: boolean; problems: SummaryProblem[] }> {
  compiled ??= compileSchema();
  let validate: ValidateFunction;
  try {
    validate = await compiled;
  } catch (err) {
    compiled = undefined;
    throw err;
  }
  if (validate(value)) return { ok: true, problems: [] };
  const problems = (validate.errors ?? []).map((e) => {
    const detail = e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : "";
    return { pointer: e.instancePath, message: `${e.message ?? "is invalid"}${detail}` };
  });
  return { ok: false, problems };
}

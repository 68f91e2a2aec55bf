import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { REPO_ROOT } from "../helpers/git-fixture.js";

function load(name: string): object {
  return JSON.parse(readFileSync(join(REPO_ROOT, "schema", name), "utf8")) as object;
}

/** Both verify schemas, compiled the way lmr compiles its schemas (strict, 2020-12, formats). */
export function compileVerifySchemas(): { record: ValidateFunction; output: ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  const record = ajv.compile(load("verification.schema.json"));
  const output = ajv.compile(load("verify-output.schema.json"));
  return { record, output };
}

/** Validation errors as short lines, for readable test failures ([] when valid). */
export function schemaErrors(validate: ValidateFunction, value: unknown): string[] {
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
}

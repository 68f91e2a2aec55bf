import { existsSync, readFileSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VALIDATORS, loadValidator, makeAjv, precompiledPath, readSchemaText } from "./schema-validator.js";
import { toolkitPath } from "./paths.js";

const exampleManifests = readdirSync(toolkitPath("examples", "tasks")).map(
  (id) => JSON.parse(readFileSync(toolkitPath("examples", "tasks", id, "task.json"), "utf8")) as Record<string, unknown>,
);

/** Manifests with one fault each: a missing field, a wrong type, an unknown field, a broken format, a bad enum. */
function brokenManifests(): unknown[] {
  const base = exampleManifests[0]!;
  const copy = (): Record<string, unknown> => structuredClone(base);
  const missing = copy();
  delete missing.id;
  const wrongType = copy();
  wrongType.targets = "not a list";
  const extra = copy();
  extra.no_such_field = 1;
  const format = copy();
  (format.paper as Record<string, unknown>).url = "not a uri";
  return [missing, wrongType, extra, format, { ...copy(), tests: { runner: "no-such-runner" } }, 42, null];
}

describe("schema validators compiled ahead of time", () => {
  it("exist after the build for every schema's current text", () => {
    for (const spec of Object.values(VALIDATORS)) expect(existsSync(precompiledPath(spec, readSchemaText(spec))), spec.schema).toBe(true);
  });

  it("judge the task schema exactly as a validator compiled now: verdicts and errors", () => {
    const ahead = loadValidator(VALIDATORS.task);
    const now = makeAjv(VALIDATORS.task).compile(JSON.parse(readSchemaText(VALIDATORS.task)) as object);
    expect(ahead).not.toBe(now);
    const values = [...exampleManifests, ...brokenManifests()];
    let failures = 0;
    for (const value of values) {
      const a = ahead(value);
      const b = now(value);
      expect(a).toBe(b);
      if (!a) failures++;
      expect(JSON.parse(JSON.stringify(ahead.errors ?? null))).toEqual(JSON.parse(JSON.stringify(now.errors ?? null)));
    }
    expect(failures).toBe(brokenManifests().length);
  });

  it("are not used for a schema text they were not compiled from: an edited schema is compiled and enforced", () => {
    const schema = JSON.parse(readSchemaText(VALIDATORS.task)) as { required: string[]; properties: Record<string, unknown> };
    schema.required = [...schema.required, "lmr_test_only_field"];
    schema.properties.lmr_test_only_field = { type: "string" };
    const text = JSON.stringify(schema);
    expect(existsSync(precompiledPath(VALIDATORS.task, text))).toBe(false);
    const validate = loadValidator(VALIDATORS.task, text);
    expect(validate(exampleManifests[0])).toBe(false);
    expect(validate.errors?.[0]?.params).toEqual({ missingProperty: "lmr_test_only_field" });
    expect(loadValidator(VALIDATORS.task)(exampleManifests[0])).toBe(true);
  });
});

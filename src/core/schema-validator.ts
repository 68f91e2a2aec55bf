import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Options, ValidateFunction } from "ajv/dist/2020.js";
import { LmrError } from "./errors.js";
import { toolkitPath } from "./paths.js";

const require = createRequire(import.meta.url);

/** How a schema is compiled: the ajv options, and whether ajv-formats' formats are added. */
export interface ValidatorSpec {
  /** file name under schema/ */
  schema: string;
  options: Pick<Options, "strict" | "allErrors" | "verbose" | "allowUnionTypes">;
  formats: boolean;
}

/** Every schema lmr validates with; `npm run build` compiles each ahead of time (scripts/build-validators.mjs). */
export const VALIDATORS = {
  task: { schema: "task.schema.json", options: { strict: true, allErrors: true, verbose: true }, formats: true },
  summary: { schema: "summary.schema.json", options: { strict: true, allErrors: true }, formats: true },
  judgeReply: { schema: "judge-reply.schema.json", options: { strict: true, allErrors: true }, formats: false },
  forkServerMessage: { schema: "fork-server-message.schema.json", options: { strict: true, allErrors: false, allowUnionTypes: true }, formats: false },
  harnessRecord: { schema: "harness-record.schema.json", options: { strict: true, allErrors: false, allowUnionTypes: true }, formats: false },
} as const satisfies Record<string, ValidatorSpec>;

/** Where the ahead-of-time validator for this schema text and spec lives: its name is their hash, so an edited schema never meets a stale one. */
export function precompiledPath(spec: ValidatorSpec, schemaText: string): string {
  const key = createHash("sha256")
    .update(JSON.stringify([spec.options, spec.formats]))
    .update("\0")
    .update(schemaText)
    .digest("hex")
    .slice(0, 16);
  return toolkitPath("dist", "validators", `${spec.schema.replace(/\.json$/, "")}.${key}.cjs`);
}

export function readSchemaText(spec: ValidatorSpec): string {
  const file = toolkitPath("schema", spec.schema);
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new LmrError({
      code: "schema/unreadable",
      file,
      message: `cannot read the schema: ${err instanceof Error ? err.message : String(err)}`,
      hint: `reinstall lmr; schema/${spec.schema} ships with it`,
      cause: err,
    });
  }
}

/** A new ajv with the spec's options (and formats), loaded only when a schema has to be compiled here. */
export function makeAjv(spec: ValidatorSpec, extra: Options = {}): import("ajv/dist/2020.js").Ajv2020 {
  const { Ajv2020 } = require("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
  const ajv = new Ajv2020({ ...spec.options, ...extra });
  if (spec.formats) (require("ajv-formats") as typeof import("ajv-formats")).default(ajv);
  return ajv;
}

/**
 * The validator for a schema: the one `npm run build` compiled when its
 * schema text and spec match, else compiled now. Compiling the task schema
 * costs ~0.3 s (ajv's load and code generation), on every CLI call that reads a manifest.
 */
export function loadValidator(spec: ValidatorSpec, text: string = readSchemaText(spec)): ValidateFunction {
  const ahead = precompiledPath(spec, text);
  if (existsSync(ahead)) return require(ahead) as ValidateFunction;
  return makeAjv(spec).compile(JSON.parse(text) as object);
}

/** A check against one schema, loaded on first use; `firstError` describes why its last call failed. */
export interface SchemaCheck {
  (value: unknown): boolean;
  firstError(): string;
}

export function schemaCheck(spec: ValidatorSpec): SchemaCheck {
  let validate: ValidateFunction | undefined;
  const check = ((value: unknown) => (validate ??= loadValidator(spec))(value)) as SchemaCheck;
  check.firstError = () => {
    const e = validate?.errors?.[0];
    return e ? `${e.instancePath || "/"} ${e.message ?? "is invalid"}` : "invalid";
  };
  return check;
}

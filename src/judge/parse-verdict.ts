import type { ValidateFunction } from "ajv/dist/2020.js";
import { VALIDATORS, loadValidator, readSchemaText } from "../core/schema-validator.js";
import type { JudgeClass } from "../run-folder/index.js";

let compiled: { schema: object; validate: ValidateFunction } | undefined;

/** schema/judge-reply.schema.json, loaded once: sent as response_format and used to check each reply. */
export function judgeReplySchema(): { schema: object; validate: ValidateFunction } {
  if (!compiled) {
    const schema = JSON.parse(readSchemaText(VALIDATORS.judgeReply)) as object;
    compiled = { schema, validate: loadValidator(VALIDATORS.judgeReply) };
  }
  return compiled;
}

export type ParsedVerdict = { ok: true; class: JudgeClass; rationale: string } | { ok: false; reason: string };

/**
 * The class and rationale of one judge reply. Servers that ignore
 * response_format often wrap the object in a ```json fence or add a line of
 * prose: the first {...} span of the text is taken. Anything else (no
 * object, not JSON, an unknown class, extra or missing fields) is a reason.
 */
export function parseVerdict(text: string): ParsedVerdict {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, reason: "the reply is empty" };
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(trimmed)?.[1];
  const candidate = fenced ?? trimmed;
  const start = candidate.indexOf("{");
  const end = candidate.lastIndexOf("}");
  if (start < 0 || end < start) return { ok: false, reason: `the reply holds no JSON object: ${JSON.stringify(trimmed.slice(0, 80))}` };
  let value: unknown;
  try {
    value = JSON.parse(candidate.slice(start, end + 1));
  } catch (err) {
    return { ok: false, reason: `the reply's JSON does not parse: ${(err as Error).message}` };
  }
  const { validate } = judgeReplySchema();
  if (!validate(value)) {
    const why = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath || "/"} ${e.message ?? "is invalid"}${e.keyword === "additionalProperties" ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})` : ""}${e.keyword === "enum" ? ` (${JSON.stringify((e.params as { allowedValues?: unknown }).allowedValues)})` : ""}`,
    );
    return { ok: false, reason: `the reply does not match schema/judge-reply.schema.json: ${why.join("; ")}` };
  }
  const v = value as { class: JudgeClass; rationale: string };
  return { ok: true, class: v.class, rationale: v.rationale.trim() };
}

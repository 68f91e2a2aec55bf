import type { ErrorObject } from "ajv/dist/2020.js";
import { suggestClosest } from "./suggest.js";

/**
 * A problem inside one manifest, before it gets its file name. `keyword` marks a
 * schema finding; `replaces` lets a semantic check with a friendlier message stand
 * in for the schema finding of that keyword at the same pointer.
 */
export interface Finding {
  pointer: string;
  message: string;
  hint: string;
  keyword?: string;
  replaces?: string[];
  /** The task-relative path the manifest names that is not there (a file the caller may be about to write). */
  missing?: string;
}

type Schema = Record<string, unknown>;

const SHAPE_KEYWORDS = new Set(["required", "additionalProperties", "type"]);

/**
 * Turns ajv's errors into one readable finding per real problem: oneOf noise is
 * reduced to the branch the value was evidently meant to be (or one "neither form"
 * finding), if/then bookkeeping errors are dropped, duplicates merged.
 */
export function explainSchemaErrors(errors: ErrorObject[], root: Schema): Finding[] {
  const { kept, findings } = resolveOneOfs(errors);
  for (const e of kept) {
    if (e.keyword === "if") continue;
    findings.push(explainError(e, root));
  }
  return dedupeFindings(findings);
}

export function dedupeFindings(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.pointer}\u0000${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isUnder(pointer: string, parent: string): boolean {
  return pointer === parent || pointer.startsWith(`${parent}/`);
}

function resolveOneOfs(errors: ErrorObject[]): { kept: ErrorObject[]; findings: Finding[] } {
  let remaining = [...errors];
  const findings: Finding[] = [];
  const depth = (e: ErrorObject) => e.instancePath.split("/").length;
  const oneOfs = errors.filter((e) => e.keyword === "oneOf").sort((a, b) => depth(a) - depth(b));
  for (const o of oneOfs) {
    if (!remaining.includes(o)) continue;
    const prefix = `${o.schemaPath}/`;
    const branchOf = (e: ErrorObject): number | undefined =>
      e !== o && e.schemaPath.startsWith(prefix) && isUnder(e.instancePath, o.instancePath)
        ? Number(e.schemaPath.slice(prefix.length).split("/")[0])
        : undefined;
    const branches = Array.isArray(o.schema) ? (o.schema as Schema[]) : [];
    const groups = branches.map((_, i) => remaining.filter((e) => branchOf(e) === i));
    remaining = remaining.filter((e) => e !== o && branchOf(e) === undefined);

    const passing = (o.params as { passingSchemas?: number[] | null }).passingSchemas;
    if (Array.isArray(passing)) {
      const titles = passing.map((i) => branches[i]?.title ?? `form ${i}`);
      findings.push({
        pointer: o.instancePath,
        keyword: "oneOf",
        message: `matches more than one form (${titles.join(", ")})`,
        hint: "remove the fields that make it ambiguous",
      });
      continue;
    }
    const isShapeError = (e: ErrorObject) =>
      (e.instancePath === o.instancePath && SHAPE_KEYWORDS.has(e.keyword)) || (e.keyword === "const" && parentPointer(e.instancePath) === o.instancePath);
    const candidates = groups
      .map((errs, i) => ({ errs, i }))
      .filter(({ errs }) => !errs.some(isShapeError))
      .sort((a, b) => a.errs.length - b.errs.length);
    const chosen = candidates[0];
    if (chosen) {
      remaining.push(...chosen.errs);
      continue;
    }
    findings.push(explainNoForm(o, branches, groups));
  }
  return { kept: remaining, findings };
}

function explainNoForm(o: ErrorObject, branches: Schema[], groups: ErrorObject[][]): Finding {
  const titles = branches.map((b, i) => String(b.title ?? `form ${i + 1}`));
  const typeErrors = groups.map((g) => g.find((e) => e.keyword === "type" && e.instancePath === o.instancePath));
  if (typeErrors.every((e) => e !== undefined)) {
    const wanted = String((typeErrors[0]!.params as { type: unknown }).type);
    return {
      pointer: o.instancePath,
      keyword: "oneOf",
      message: `must be ${withArticle(wanted)} (${titles.join(" or ")}), got ${describeValue(o.data)}`,
      hint: describeSchema(o.parentSchema) ?? "see schema/task.schema.json",
    };
  }
  const fixes = groups.map((g, i) => {
    const add = g.filter((e) => e.keyword === "required" && e.instancePath === o.instancePath).map((e) => `'${String(e.params.missingProperty)}'`);
    const remove = g
      .filter((e) => e.keyword === "additionalProperties" && e.instancePath === o.instancePath)
      .map((e) => `'${String(e.params.additionalProperty)}'`);
    const parts = [add.length ? `add ${add.join(", ")}` : "", remove.length ? `remove ${remove.join(", ")}` : ""].filter(Boolean);
    return `${titles[i]}: ${parts.join(" and ") || "fix its fields"}`;
  });
  return {
    pointer: o.instancePath,
    keyword: "oneOf",
    message: `is neither ${titles.map(withArticle).join(" nor ")}`,
    hint: `pick one form: ${fixes.join("; or ")}`,
  };
}

function explainError(e: ErrorObject, root: Schema): Finding {
  const p = e.params as Record<string, unknown>;
  const here = e.instancePath;
  const describe = (s: unknown) => describeSchema(s, root) ?? "see schema/task.schema.json";
  const base = { pointer: here, keyword: e.keyword };
  switch (e.keyword) {
    case "required": {
      const missing = String(p.missingProperty);
      const propSchema = (e.parentSchema?.properties as Schema | undefined)?.[missing];
      return { ...base, pointer: `${here}/${escapePointer(missing)}`, message: "missing required field", hint: `add "${missing}": ${describe(propSchema)}` };
    }
    case "additionalProperties": {
      const extra = String(p.additionalProperty);
      const allowed = Object.keys((e.parentSchema?.properties as Schema | undefined) ?? {});
      const close = suggestClosest(extra, allowed);
      return {
        ...base,
        pointer: `${here}/${escapePointer(extra)}`,
        message: `unknown field '${extra}'`,
        hint: close ? `did you mean '${close}'?` : `remove it; allowed fields here: ${allowed.join(", ")}`,
      };
    }
    case "type":
      return { ...base, message: `must be ${withArticle(String(p.type))}, got ${describeValue(e.data)}`, hint: describe(e.parentSchema) };
    case "enum": {
      const allowed = (p.allowedValues as unknown[]) ?? [];
      const close = typeof e.data === "string" ? suggestClosest(e.data, allowed.map(String)) : undefined;
      return {
        ...base,
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}; got ${describeValue(e.data)}`,
        hint: close ? `did you mean ${JSON.stringify(close)}?` : describe(e.parentSchema),
      };
    }
    case "const":
      return { ...base, message: `must be ${JSON.stringify(p.allowedValue)}, got ${describeValue(e.data)}`, hint: describe(e.parentSchema) };
    case "pattern":
      return { ...base, message: `${describeValue(e.data)} does not have the expected form (${String(p.pattern)})`, hint: describe(e.parentSchema) };
    case "format":
      return { ...base, message: `${describeValue(e.data)} is not a valid ${String(p.format)}`, hint: describe(e.parentSchema) };
    case "minLength":
      return { ...base, message: p.limit === 1 ? "must not be empty" : `must be at least ${String(p.limit)} characters`, hint: describe(e.parentSchema) };
    case "maxLength":
      return { ...base, message: `must be at most ${String(p.limit)} characters`, hint: describe(e.parentSchema) };
    case "minItems":
      return { ...base, message: `must have at least ${String(p.limit)} item${p.limit === 1 ? "" : "s"}`, hint: describe(e.parentSchema) };
    case "uniqueItems": {
      // ajv's two loops report the pair in either order.
      const [first, later] = [Number(p.i), Number(p.j)].sort((a, b) => a - b);
      return { ...base, pointer: `${here}/${later}`, message: `repeats item ${first}`, hint: "remove the duplicate" };
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { ...base, message: `must be ${String(p.comparison)} ${String(p.limit)}, got ${describeValue(e.data)}`, hint: describe(e.parentSchema) };
    default:
      return { ...base, message: e.message ?? `fails schema keyword '${e.keyword}'`, hint: describe(e.parentSchema) };
  }
}

/** The description of a schema node, following a local $ref when the node has none of its own. */
function describeSchema(schema: unknown, root?: Schema): string | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const s = schema as Schema;
  if (typeof s.description === "string") return s.description.replace(/\.$/, "");
  if (root && typeof s.$ref === "string" && s.$ref.startsWith("#/")) {
    const target = s.$ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node && typeof node === "object" ? (node as Schema)[key.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), root);
    return describeSchema(target);
  }
  return undefined;
}

function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "object") return "an object";
  if (typeof v === "string") return JSON.stringify(v.length > 60 ? `${v.slice(0, 57)}...` : v);
  return `${typeof v} ${String(v)}`;
}

function withArticle(word: string): string {
  return `${/^[aeiou]/i.test(word) ? "an" : "a"} ${word}`;
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function parentPointer(pointer: string): string {
  return pointer.slice(0, Math.max(0, pointer.lastIndexOf("/")));
}

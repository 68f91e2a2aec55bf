import { basename } from "node:path";
import type { Problem } from "../core/errors.js";
import { readManifest, resolveTaskDir, type RawManifest } from "./read.js";
import { collectSchemaErrors, readTaskSchema } from "./schema.js";
import { dedupeFindings, explainSchemaErrors, type Finding } from "./schema-errors.js";
import { asObject, checkSemantics, checkUniqueIds } from "./semantic.js";
import { checkTaskContent, readGiveaway } from "./task-content.js";
import { checkTaskFiles } from "./task-files.js";

export interface ValidationReport {
  ok: boolean;
  /** How many tasks were validated. */
  tasks: number;
  problems: Problem[];
  /** The giveaway scores verify recorded, per task that has them. */
  giveaway: { task: string; paper: number; hinted?: number; allowed: boolean }[];
}

/**
 * Validates task folders: schema, field semantics, files, and ids unique across
 * them all. Problems are values; only an unreadable folder, file or JSON throws.
 */
/**
 * `finished`: the checks a finished task must pass (see checkManifest). `giveaway`: also refuse a
 * paper level the recorded giveaway score finds too revealing, a curation check that lmr validate
 * makes and the commands that only use tasks (build, eval, generate, agent) do not.
 */
/**
 * `idsAmong`: other task folders whose ids count when ids are compared (a validation of only
 * the tasks a change touched still refuses an id an untouched task has); an unreadable one is left out.
 */
export async function validateTasks(dirs: string[], opts: { finished?: boolean; giveaway?: boolean; idsAmong?: string[] } = {}): Promise<ValidationReport> {
  const unique = [...new Set(dirs.map(resolveTaskDir))];
  const raws: RawManifest[] = [];
  for (const dir of unique) raws.push(await readManifest(dir));
  const others: { id: unknown; file: string }[] = [];
  for (const dir of new Set((opts.idsAmong ?? []).map(resolveTaskDir))) {
    if (unique.includes(dir)) continue;
    const raw = await readManifest(dir).catch(() => undefined);
    if (raw) others.push({ id: asObject(raw.data)?.id, file: raw.displayPath });
  }

  const duplicates = checkUniqueIds([...raws.map((r) => ({ id: asObject(r.data)?.id, file: r.displayPath })), ...others]);
  const problems: Problem[] = [];
  const giveaway: ValidationReport["giveaway"] = [];
  for (const raw of raws) {
    const g = await readGiveaway(raw.dir);
    const data = asObject(raw.data);
    if (g)
      giveaway.push({
        task: typeof data?.id === "string" ? data.id : basename(raw.dir),
        paper: g.paper,
        ...(g.hinted !== undefined ? { hinted: g.hinted } : {}),
        allowed: typeof asObject(data?.giveaway)?.allow === "string",
      });
    const findings = await checkManifest(raw, { finished: opts.finished ?? true, giveaway: opts.giveaway ?? false });
    const dup = duplicates.get(raw.displayPath);
    if (dup) findings.push(dup);
    problems.push(...sortFindings(findings).map((f) => toProblem(raw.displayPath, f)));
  }
  return { ok: problems.length === 0, tasks: raws.length, problems, giveaway };
}

/**
 * Every problem of one manifest on its own, in document order (ids are not compared with other tasks).
 * `finished`: also what only a finished task must satisfy (no TODO(author) left in the instruction):
 * `lmr validate` and `lmr verify` ask for it; building and recording a task still being written do not.
 */
export async function checkManifest(raw: RawManifest, opts: { finished?: boolean; giveaway?: boolean } = {}): Promise<Finding[]> {
  const schemaFindings = explainSchemaErrors(collectSchemaErrors(raw.data), readTaskSchema());
  const semantic = [
    ...checkSemantics(raw.data, basename(raw.dir), raw.duplicateKeys),
    ...(await checkTaskFiles(raw.data, raw.dir)),
    ...(await checkTaskContent(raw.data, raw.dir, opts)),
  ];
  const replaced = new Set(semantic.flatMap((f) => (f.replaces ?? []).map((k) => `${f.pointer}\u0000${k}`)));
  const kept = schemaFindings.filter((f) => !replaced.has(`${f.pointer}\u0000${f.keyword ?? ""}`));
  return sortFindings(dedupeFindings([...kept, ...semantic]));
}

function toProblem(file: string, f: Finding): Problem {
  return { file, pointer: f.pointer, message: f.message, hint: f.hint };
}

/** Document order of pointers (array indices numerically); stable within one pointer. */
function sortFindings(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => comparePointers(a.f.pointer, b.f.pointer) || a.i - b.i)
    .map(({ f }) => f);
}

function comparePointers(a: string, b: string): number {
  const sa = a.split("/");
  const sb = b.split("/");
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const x = sa[i]!;
    const y = sb[i]!;
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return sa.length - sb.length;
}

import { LmrError } from "../core/errors.js";
import { readManifest, type RawManifest } from "./read.js";
import type { Finding } from "./schema-errors.js";
import type { ResolvedTask, TaskManifest } from "./types.js";
import { checkManifest } from "./validate.js";

export { findTaskDirs } from "./read.js";

export interface LoadOptions {
  /** Test files (tests.files) that may be missing: the caller is about to write them (`lmr scaffold tests`). */
  missingTestsAllowed?: boolean;
}

/**
 * Reads DIR/task.json, validates it on its own (schema, semantics, files) and
 * returns the frozen task spec every later stage works from. Throws LmrError
 * (kind "input") when the file is unreadable, malformed or invalid.
 */
export async function loadTask(dir: string, opts: LoadOptions = {}): Promise<ResolvedTask> {
  const raw = await readManifest(dir);
  const findings = (await checkManifest(raw)).filter((f) => !(opts.missingTestsAllowed && f.missing !== undefined && f.pointer.startsWith("/tests/files/")));
  return resolveTask(raw, findings);
}

/**
 * The frozen task spec of a read manifest whose remaining findings are `findings` (what the
 * caller still counts as problems). Throws LmrError "manifest-invalid" naming the first finding
 * and how many more there are.
 */
export function resolveTask(raw: RawManifest, findings: readonly Finding[]): ResolvedTask {
  const first = findings[0];
  if (first) {
    const more = findings.length > 1 ? ` (and ${findings.length - 1} more problem${findings.length > 2 ? "s" : ""})` : "";
    throw new LmrError({
      code: "manifest/invalid",
      file: raw.displayPath,
      pointer: first.pointer,
      message: `${first.message}${more}`,
      hint: findings.length > 1 ? `${first.hint}; run \`lmr validate ${raw.dir}\` for the full list` : first.hint,
    });
  }
  return Object.freeze({ manifest: deepFreeze(raw.data as TaskManifest), dir: raw.dir, manifestPath: raw.manifestPath });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

import { CLAIM_FINDINGS, listFixtureClaims } from "../manifest/fixture-claims.js";
import { readManifest } from "../manifest/read.js";
import { resolveTask } from "../manifest/load.js";
import type { ResolvedTask } from "../manifest/types.js";
import { checkManifest } from "../manifest/validate.js";

/**
 * loadTask for `lmr record`: the same checks, except the fixture-claims findings and a
 * tests.fixtures entry that does not exist yet but that the driver or a generator makes.
 * Recording is what makes a declared output exist, so those cannot stop it; every other
 * problem does, as in loadTask.
 */
export async function loadTaskForRecording(dir: string): Promise<ResolvedTask> {
  const raw = await readManifest(dir);
  const made = new Set(listFixtureClaims(raw.data).map((c) => c.file));
  const listed = (raw.data as { tests?: { fixtures?: unknown[] } })?.tests?.fixtures ?? [];
  const toBeMade = (pointer: string, message: string): boolean => {
    const m = /^\/tests\/fixtures\/(\d+)$/.exec(pointer);
    const value = m ? listed[Number(m[1])] : undefined;
    return typeof value === "string" && made.has(value) && message.includes("does not exist");
  };
  const findings = (await checkManifest(raw)).filter((f) => !CLAIM_FINDINGS.has(f) && !toBeMade(f.pointer, f.message));
  return resolveTask(raw, findings);
}

import { createHash } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { VerificationRecord } from "./record.js";

/**
 * What a verification record claims, reduced to what a run elsewhere must reproduce exactly:
 * the inputs, each step's outcome, the kill count and which mutants survive. Timings, dates,
 * paths and durations are left out.
 */
function recordClaims(r: VerificationRecord): Record<string, unknown> {
  const s = r.steps;
  const statuses = (runs: { status: string }[]): string =>
    runs
      .map((x) => x.status)
      .sort()
      .join(",");
  return {
    ok: r.ok,
    toolkit_hash: r.toolkit_hash ?? null,
    inputs: { task: r.inputs.task, workspace: r.inputs.workspace ?? null, reference: r.inputs.reference ?? null, grader: r.inputs.grader ?? null },
    fixtures: s.fixtures.skipped ? "skipped" : s.fixtures.ok,
    reference: statuses(s.reference.runs),
    reference_tests: [...(s.reference.tests ?? [])].sort(),
    stub: statuses(s.stub.runs),
    alternatives: (s.alternatives.alternatives ?? []).map((a) => `${a.name}:${a.status}`).sort(),
    mutants: { total: s.mutants.total ?? null, killed: s.mutants.killed ?? null },
    survivors: (s.mutants.survivors ?? []).map((x) => x.id).sort(),
    equivalent: (s.mutants.equivalent ?? []).map((x) => x.id).sort(),
    leaks: (s.leaks.leaks ?? []).filter((l) => !l.allowed).length,
  };
}

/** The claims on which two records differ (empty: the second reproduces the first). */
export function claimDifferences(committed: VerificationRecord, fresh: VerificationRecord): string[] {
  const a = recordClaims(committed);
  const b = recordClaims(fresh);
  return Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Stamps in the machine's lmr cache: this record file (by its bytes) was made or reproduced by
 * a verify run on this machine. A committed record is only a claim until then: verify reuses
 * a record without running it only where its stamp is (a fresh clone verifies for real once).
 */
function stampPath(cacheDir: string, text: string): string {
  return join(cacheDir, "reproduced", createHash("sha256").update(text).digest("hex"));
}

export async function readRecordText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

export async function isReproducedHere(cacheDir: string, text: string): Promise<string | undefined> {
  const st = await stat(stampPath(cacheDir, text)).catch(() => undefined);
  return st ? st.mtime.toISOString() : undefined;
}

export async function stampReproduced(cacheDir: string, text: string): Promise<void> {
  const p = stampPath(cacheDir, text);
  await mkdir(join(cacheDir, "reproduced"), { recursive: true });
  await writeFile(p, "");
}

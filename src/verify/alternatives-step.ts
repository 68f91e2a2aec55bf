import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { BUNDLE_FILES, type BundleInfo } from "../bundle/index.js";
import type { RunOutcome } from "../runner/types.js";
import type { AlternativeOutcome, AlternativesStep } from "./record.js";
import type { RunSlots } from "./run-slots.js";
import { failingTests, since, type Tick } from "./steps.js";

/**
 * Grades every alternative solution once, as a submission is graded (same
 * runner, same sandbox, the alternative's files over the workspace): each must
 * pass every test. Alternatives are written by someone who has not seen the
 * reference or the tests, so a failure says the tests pin something the task
 * does not ask for, or the alternative is wrong: the record names the tests.
 */
export async function alternativesStep(
  bundle: BundleInfo,
  minAlternatives: number,
  limit: RunSlots,
  runOverlay: (overlay: Record<string, string>) => Promise<RunOutcome>,
  tick: Tick,
): Promise<AlternativesStep> {
  const t = performance.now();
  const targetFiles = [...new Set(bundle.targets.map((x) => x.file))].sort();
  let done = 0;
  const results = await Promise.all(
    bundle.alternatives.map(async (name): Promise<AlternativeOutcome> => {
      const r = await gradeAlternative(bundle, name, targetFiles, limit, runOverlay);
      tick(++done, bundle.alternatives.length, `alternative ${name} ${r.status}`);
      return r;
    }),
  );
  const step: AlternativesStep = { ok: true, min: minAlternatives, alternatives: results, duration_s: since(t) };
  const infra = results.find((r) => r.status === "infra");
  if (infra) return { ...step, ok: false, infra: true, reason: `infra: alternative '${infra.name}' could not run (${infra.reason ?? "no reason given"})` };
  const bad = results.filter((r) => r.status !== "passed");
  if (bad.length > 0) {
    const first = bad[0]!;
    const tests = first.failing?.length
      ? `: ${first.failing
          .map((f) => f.id)
          .slice(0, 3)
          .join(", ")}${first.failing.length > 3 ? ", …" : ""} — ${first.failing[0]!.message.split("\n").find((l) => l.trim() !== "") ?? ""}`
      : first.reason
        ? `: ${first.reason}`
        : "";
    return {
      ...step,
      ok: false,
      reason: `${bad.length} of ${results.length} alternative(s) fail; '${first.name}' ${first.status}${tests}. Decide whether the alternative or the tests are wrong: a correct solution must pass`,
    };
  }
  if (results.length < minAlternatives) {
    return {
      ...step,
      ok: false,
      reason: `${results.length} alternative(s) under alternatives/, at least ${minAlternatives} needed (verification.min_alternatives): independently written solutions prove the tests accept correct code written differently`,
    };
  }
  return step;
}

async function gradeAlternative(
  bundle: BundleInfo,
  name: string,
  targetFiles: string[],
  limit: RunSlots,
  runOverlay: (overlay: Record<string, string>) => Promise<RunOutcome>,
): Promise<AlternativeOutcome> {
  const dir = join(bundle.dir, BUNDLE_FILES.alternatives, name);
  const overlay: Record<string, string> = {};
  const lacking: string[] = [];
  for (const file of targetFiles) {
    const text = await readFile(join(dir, file), "utf8").catch(() => undefined);
    if (text === undefined) lacking.push(file);
    else overlay[file] = text;
  }
  if (lacking.length > 0)
    return { name, status: "invalid", passed: 0, failed: 0, errors: 0, duration_s: 0, reason: `lacks the target file(s) ${lacking.join(", ")}` };
  const o = await limit(() => runOverlay(overlay));
  const failing = failingTests(o);
  return {
    name,
    status: o.status,
    passed: o.counts.passed,
    failed: o.counts.failed,
    errors: o.counts.errors,
    duration_s: Math.round(o.duration_s * 1000) / 1000,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(failing.length > 0 ? { failing } : {}),
  };
}

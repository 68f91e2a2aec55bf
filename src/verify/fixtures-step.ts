import type { BundleInfo } from "../bundle/index.js";
import { checkFixtures } from "../record/fixtures-check.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { FixturesStep } from "./record.js";
import type { VerifyOptions } from "./verify-task.js";

/**
 * The fixtures step: regenerate the task's fixtures from its driver and
 * generators against the reference (in a temp folder, as `lmr record --check`
 * does) and compare them byte for byte with the committed files.
 */
export async function checkFixturesStep(task: ResolvedTask, opts: VerifyOptions, bundle?: BundleInfo): Promise<FixturesStep> {
  const t0 = performance.now();
  const r = await checkFixtures(task, {
    ...(opts.mirror ? { mirror: opts.mirror } : {}),
    ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.python ? { python: opts.python } : {}),
    // fixtures are regenerated where the tests run: in the task's image under docker
    sandbox: opts.sandbox ?? "auto",
    ...(bundle ? { bundle } : {}),
  });
  const duration_s = Math.round(performance.now() - t0) / 1000;
  const files = r.compared;
  if (r.status === "identical") {
    return files.length === 0 ? { ok: true, files, reason: "the task has no fixtures", duration_s } : { ok: true, files, duration_s };
  }
  if (r.status === "failed") {
    const e = r.error;
    return {
      ok: false,
      files,
      reason: `the fixtures could not be regenerated: ${e ? `${e.file ? `${e.file}: ` : ""}${e.message}${e.hint ? ` (hint: ${e.hint})` : ""}` : "unknown error"}`,
      duration_s,
    };
  }
  const first = r.differences[0]!;
  const where = [first.line ? `line ${first.line}` : "", first.json_pointer ? `at ${first.json_pointer}` : "", first.member ? `member ${first.member}` : ""]
    .filter(Boolean)
    .join(", ");
  const difference = `${first.file} (${first.kind}${where ? `, ${where}` : ""}): ${first.message}`;
  return {
    ok: false,
    files,
    difference,
    reason: `${r.differences.length} fixture file(s) do not regenerate byte for byte; first: ${difference}${first.hint ? ` (hint: ${first.hint})` : ""}; rerun \`lmr record\` or fix the driver/generator`,
    duration_s,
  };
}

import { EXIT, formatProblem, LmrError } from "../../core/errors.js";
import { displayPath } from "../../manifest/read.js";
import { checkFixtures, type FixtureCheckOptions, type FixtureCheckResult } from "../../record/fixtures-check.js";
import { loadTaskForRecording } from "../../record/load.js";
import { paint, printJsonFailed, printJsonOk, progress, progressDone } from "../output.js";

/**
 * `lmr record --check TASK_DIR…`: checkFixtures on each task, one after the other (each
 * runs the task's Python; two at once would only compete for the same cores).
 * Exit 0 when every task's fixtures are identical, 1 when one differs, 2 when one could
 * not be regenerated (its driver or a generator failed); the worst wins.
 */
export async function runRecordCheck(taskDirs: string[], opts: FixtureCheckOptions & { json: boolean }): Promise<number> {
  const results: (FixtureCheckResult & { task_dir: string })[] = [];
  for (const dir of taskDirs) {
    const task = await loadTaskForRecording(dir);
    progress(`regenerating the fixtures of ${task.manifest.id}`);
    const { json: _json, ...checkOpts } = opts;
    const result = await checkFixtures(task, checkOpts).finally(progressDone);
    results.push({ task_dir: displayPath(task.dir), ...result });
    if (!opts.json) printResult(displayPath(task.dir), result);
  }
  const code = Math.max(EXIT.ok, ...results.map((r) => (r.status === "failed" ? EXIT.input : r.status === "different" ? EXIT.check : EXIT.ok)));
  if (opts.json) {
    const failed = results.filter((r) => r.status === "failed");
    const different = results.filter((r) => r.status === "different");
    if (failed.length > 0) {
      const e = failed[0]!.error!;
      printJsonFailed(
        "record",
        new LmrError({
          code: "record/check-failed",
          message: `${failed.length} task${failed.length === 1 ? "" : "s"} could not regenerate ${failed.length === 1 ? "its" : "their"} fixtures; ${failed[0]!.task_id}: ${e.code}: ${e.message}`,
          ...(e.file ? { file: e.file } : {}),
          ...(e.pointer ? { pointer: e.pointer } : {}),
          ...(e.hint ? { hint: e.hint } : {}),
        }),
        { results },
      );
    } else if (different.length > 0) {
      printJsonFailed(
        "record",
        new LmrError({
          code: "record/fixtures-differ",
          message: `the regenerated fixtures of ${different.map((r) => r.task_id).join(", ")} differ from the committed ones`,
          hint: "see data.results[].differences; re-record with lmr record if the change is meant",
        }),
        { results },
      );
    } else printJsonOk("record", { results });
  }
  return code;
}

function printResult(where: string, r: FixtureCheckResult): void {
  const took = `in ${r.duration_s.toFixed(1)} s`;
  if (r.status === "failed") {
    const e = r.error!;
    process.stdout.write(
      `${paint("red", `${where}: cannot regenerate the fixtures`)} ${took}\n  ${formatProblem({ file: e.file, pointer: e.pointer, message: e.message, hint: e.hint })}\n`,
    );
    return;
  }
  if (r.status === "identical") {
    const what = r.compared.length > 0 ? r.compared.join(", ") : "no fixtures to regenerate";
    process.stdout.write(`${where}: ${paint("green", "identical")} (${what}) ${took}\n`);
    return;
  }
  process.stdout.write(
    `${where}: ${paint("red", `${r.differences.length} fixture file${r.differences.length === 1 ? "" : "s"} differ${r.differences.length === 1 ? "s" : ""}`)} ${took}\n`,
  );
  for (const d of r.differences) {
    process.stdout.write(`  ${where}/${d.file}: ${d.message}${d.hint ? ` (hint: ${d.hint})` : ""}\n`);
  }
}

import { execa } from "execa";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/git-fixture.js";

// The package as a library: `import … from "lmr"` goes through package.json's "exports" to the
// built dist/index.js (`npm run build` first), in a plain Node process as a user's script would.

describe("the library entry (package.json exports → dist/index.js)", () => {
  it("validates the example tasks, and reports a bad folder as an LmrError with its code", async () => {
    const script = `
      import { findTaskDirs, validateTasks, loadTask, LmrError, ERROR_CODES } from "lmr";
      const dirs = await findTaskDirs(${JSON.stringify(join(REPO_ROOT, "examples", "tasks"))});
      const report = await validateTasks(dirs);
      let missing;
      try { await loadTask(${JSON.stringify(join(REPO_ROOT, "examples", "no-such-task"))}); } catch (err) { missing = err; }
      console.log(JSON.stringify({
        tasks: report.tasks, ok: report.ok, problems: report.problems.length,
        id: (await loadTask(dirs[0])).manifest.id,
        error: missing instanceof LmrError ? { code: missing.code, kind: missing.kind } : String(missing),
        codes: Object.keys(ERROR_CODES).length,
      }));`;
    const r = await execa("node", ["--input-type=module", "-e", script], { cwd: REPO_ROOT, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { tasks: number; ok: boolean; problems: number; id: string; error: unknown; codes: number };
    expect(out.tasks).toBeGreaterThanOrEqual(5);
    expect(out).toMatchObject({ ok: true, problems: 0, id: "beam-search", error: { code: "task/dir-missing", kind: "input" } });
    expect(out.codes).toBeGreaterThan(100);
  });

  it("publishes no other path: a deep import is refused by the exports map", async () => {
    const r = await execa("node", ["--input-type=module", "-e", 'await import("lmr/dist/core/errors.js")'], { cwd: REPO_ROOT, reject: false });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });
});

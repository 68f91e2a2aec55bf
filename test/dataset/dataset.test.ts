import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { hashTaskInputs } from "../../src/bundle/index.js";
import { findTaskDirs, loadTask } from "../../src/manifest/load.js";
import type { VerificationRecord } from "../../src/verify/record.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const TASKS = join(ROOT, "tasks");

// The shipped dataset, checked without its upstreams (CI has none): manifests valid,
// every task verified against exactly the files committed, tasks/README.md current.
describe("the dataset in tasks/", async () => {
  const dirs = existsSync(TASKS) ? await findTaskDirs(TASKS) : [];

  it.runIf(dirs.length > 0)("validates", async () => {
    const r = await run("node", [CLI, "validate", "--tasks-dir", TASKS, "--json"], { cwd: ROOT }).catch((e: { stdout: string; code: number }) => e);
    const out = JSON.parse(r.stdout) as { ok: boolean; problems: unknown[] };
    expect(out.problems).toEqual([]);
    expect(out.ok).toBe(true);
  });

  it.each(dirs.map((d) => [d.split("/").pop()!, d]))("%s has a passing verification.json for its committed files", async (_id, dir) => {
    const task = await loadTask(dir);
    const record = JSON.parse(await readFile(join(dir, "verification.json"), "utf8")) as VerificationRecord;
    expect(record.task_id).toBe(task.manifest.id);
    expect(record.inputs.task).toBe(await hashTaskInputs(task));
    expect(record.ok, record.failure?.reason).toBe(true);
    expect(record.steps.reference.runs.filter((r) => r.status === "passed")).toHaveLength(record.settings.runs);
    expect(record.steps.stub.runs.filter((r) => r.status === "failed")).toHaveLength(record.settings.runs);
    expect(record.steps.mutants.kill_ratio).toBeGreaterThanOrEqual(0.8);
    expect(record.steps.leaks.leaks.filter((l) => !l.allowed)).toEqual([]);
  });

  it.runIf(dirs.length > 0)("has a tasks/README.md generated from the current tasks", async () => {
    const r = await run("node", [CLI, "list", "--tasks-dir", TASKS, "--format", "md", "--check", join(TASKS, "README.md")], { cwd: ROOT }).catch((e: { stderr: string; code: number }) => e);
    expect("code" in r ? r.stderr : "").toBe("");
  });
});

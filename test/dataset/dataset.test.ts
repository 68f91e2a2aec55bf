import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { hashTaskInputs } from "../../src/bundle/index.js";
import { findTaskDirs, loadTask } from "../../src/manifest/load.js";
import type { VerificationRecord } from "../../src/verify/record.js";
import { jsonEnvelope } from "../helpers/run-cli.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli", "main.js");
const TASKS = join(ROOT, "tasks");
const EXAMPLES = join(ROOT, "examples", "tasks");

/** What every committed verification.json must show: the task standard, step by step. */
async function expectSoundRecord(dir: string): Promise<void> {
  const task = await loadTask(dir);
  const record = JSON.parse(await readFile(join(dir, "verification.json"), "utf8")) as VerificationRecord;
  expect(record.task_id).toBe(task.manifest.id);
  expect(record.inputs.task).toBe(await hashTaskInputs(task));
  expect(record.ok, record.failure?.reason).toBe(true);
  const s = record.steps;
  expect(s.fixtures.ok && !s.fixtures.skipped, s.fixtures.reason ?? "fixtures not checked").toBe(true);
  expect(s.reference.runs.filter((r) => r.status === "passed")).toHaveLength(record.settings.runs);
  expect(record.settings.runs).toBeGreaterThanOrEqual(3);
  expect(s.environment.ok && !s.environment.skipped, s.environment.reason ?? "environment not checked").toBe(true);
  expect(s.stub.runs.filter((r) => r.status === "failed")).toHaveLength(record.settings.runs);
  expect(s.alternatives.alternatives.filter((a) => a.status === "passed").length).toBeGreaterThanOrEqual(2);
  expect(s.alternatives.alternatives.every((a) => a.status === "passed")).toBe(true);
  expect(s.mutants.kill_ratio).toBeGreaterThanOrEqual(0.8);
  expect(s.leaks.leaks.filter((l) => !l.allowed)).toEqual([]);
}

// The shipped dataset and the examples, checked without their upstreams (CI has none):
// manifests valid, every task verified to the task standard against exactly the files
// committed, tasks/README.md current.
describe("the examples in examples/tasks/", async () => {
  const dirs = existsSync(EXAMPLES) ? await findTaskDirs(EXAMPLES) : [];
  it.each(dirs.map((d) => [d.split("/").pop()!, d]))("%s has a sound verification.json for its committed files", async (_id, dir) => {
    await expectSoundRecord(dir);
  });
});

describe("the dataset in tasks/", async () => {
  const dirs = existsSync(TASKS) ? await findTaskDirs(TASKS) : [];

  it.runIf(dirs.length > 0)("validates", async () => {
    const r = await run("node", [CLI, "validate", "--tasks-dir", TASKS, "--json"], { cwd: ROOT }).catch((e: { stdout: string; code: number }) => e);
    const out = jsonEnvelope<{ problems: unknown[] }>(r.stdout);
    expect(out.data?.problems).toEqual([]);
    expect(out.ok).toBe(true);
  });

  it.each(dirs.map((d) => [d.split("/").pop()!, d]))("%s has a sound verification.json for its committed files", async (_id, dir) => {
    await expectSoundRecord(dir);
  });

  it.runIf(dirs.length > 0)("pins every paper (arXiv id with its version, or a PDF URL)", async () => {
    for (const dir of dirs) {
      const { manifest } = await loadTask(dir);
      expect(manifest.paper.arxiv ?? manifest.paper.pdf_url, manifest.id).toBeTruthy();
    }
  });

  it.runIf(dirs.length > 0)("has a tasks/README.md generated from the current tasks", async () => {
    const r = await run("node", [CLI, "list", "--tasks-dir", TASKS, "--format", "md", "--check", join(TASKS, "README.md")], { cwd: ROOT }).catch(
      (e: { stderr: string; code: number }) => e,
    );
    expect("code" in r ? r.stderr : "").toBe("");
  });
});

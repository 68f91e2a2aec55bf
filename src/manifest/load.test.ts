import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { findTaskDirs, loadTask } from "./load.js";

const FIXTURES = resolve("test/fixtures/manifests");

async function rejection(p: Promise<unknown>): Promise<LmrError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LmrError);
  return err as LmrError;
}

describe("loadTask", () => {
  it("returns the frozen manifest with absolute paths", async () => {
    const task = await loadTask(join(FIXTURES, "valid-local"));
    expect(task.dir).toBe(join(FIXTURES, "valid-local"));
    expect(task.manifestPath).toBe(join(FIXTURES, "valid-local", "task.json"));
    expect(task.manifest.id).toBe("valid-local");
    expect(Object.isFrozen(task.manifest)).toBe(true);
    expect(Object.isFrozen(task.manifest.targets[0]!.region!.start)).toBe(true);
  });

  it("refuses an invalid manifest, naming the first problem and how many more", async () => {
    const err = await rejection(loadTask(join(FIXTURES, "missing-files")));
    expect(err.code).toBe("manifest/invalid");
    expect(err.kind).toBe("input");
    expect(err.pointer).toBe("/instruction");
    expect(err.message).toBe("'instruction.md' does not exist in the task folder (and 1 more problem)");
    expect(err.hint).toContain("lmr validate");
  });

  it("reports malformed JSON with line and column", async () => {
    const err = await rejection(loadTask(join(FIXTURES, "bad-json")));
    expect(err.code).toBe("manifest/bad-json");
    expect(err.message).toMatch(/^invalid JSON at line 5, column 3 \(5:3\): /);
  });

  it("reports a missing folder and a folder without task.json", async () => {
    expect((await rejection(loadTask(join(FIXTURES, "nope")))).code).toBe("task/dir-missing");
    expect((await rejection(loadTask(join(FIXTURES, "_upstreams")))).code).toBe("manifest/missing");
  });
});

describe("findTaskDirs", () => {
  it("lists immediate subfolders holding a task.json, sorted, skipping hidden ones", async () => {
    const root = await mkdtemp(join(tmpdir(), "lmr-find-"));
    try {
      for (const name of ["b-task", "a-task", ".hidden", "no-manifest", "nested/deep"]) await mkdir(join(root, name), { recursive: true });
      for (const name of ["b-task", "a-task", ".hidden", "nested/deep"]) await writeFile(join(root, name, "task.json"), "{}");
      await writeFile(join(root, "task.json"), "{}");
      expect(await findTaskDirs(root)).toEqual([join(root, "a-task"), join(root, "b-task")]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("throws an input error with a hint when the root is missing", async () => {
    const err = await rejection(findTaskDirs(join(FIXTURES, "no-such-root")));
    expect([err.code, err.kind]).toEqual(["task/tasks-dir-missing", "input"]);
    expect(err.hint).toContain("--tasks-dir");
  });
});

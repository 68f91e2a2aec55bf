import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applySubmission, isForbiddenPath } from "./apply-submission.js";
import type { Submission, SubmissionContent } from "./submissions.js";

let ws: string;
const STUB = "def f():\n    raise NotImplementedError\n\n\ndef g():\n    return 2\n";
const DONE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n";

beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), "lmr-apply-"));
  await mkdir(join(ws, "pkg"), { recursive: true });
  await writeFile(join(ws, "pkg", "mod.py"), STUB);
  await writeFile(join(ws, "util.py"), "u = 1\n");
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

const sub = (content: SubmissionContent): Submission => ({ task_id: "t", sample: "0", model: "m", content, origin: "subs.jsonl:1" });
const apply = (content: SubmissionContent) => applySubmission(sub(content), ws, ["pkg/mod.py"], "lmr_tests");
const patchOf = (before: string, after: string, path = "pkg/mod.py") => createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after);

describe("applySubmission", () => {
  it("applies a git-style patch to the target", async () => {
    expect(await apply({ kind: "patch", patch: patchOf(STUB, DONE) })).toEqual({ ok: true, overlay: { "pkg/mod.py": DONE }, ignored: [] });
  });

  it("ignores non-target files and lists them", async () => {
    const r = await apply({ kind: "patch", patch: patchOf(STUB, DONE) + patchOf("u = 1\n", "u = 2\n", "util.py") });
    expect(r).toEqual({ ok: true, overlay: { "pkg/mod.py": DONE }, ignored: ["util.py"] });
    expect(await apply({ kind: "files", files: { "./pkg/mod.py": DONE, "notes.txt": "x" } })).toEqual({
      ok: true,
      overlay: { "pkg/mod.py": DONE },
      ignored: ["notes.txt"],
    });
  });

  it("is invalid with the producer's reason when the row says it gives no code", async () => {
    expect(await apply({ kind: "invalid", reason: "the reply holds no code block" })).toEqual({
      ok: false,
      reason: "the submission gives no code: the reply holds no code block",
    });
  });

  it("is invalid when the patch does not apply, is empty, or changes no target", async () => {
    expect(await apply({ kind: "patch", patch: patchOf("something else\n", DONE) })).toMatchObject({
      ok: false,
      reason: "the patch does not apply to pkg/mod.py",
    });
    expect(await apply({ kind: "patch", patch: "" })).toMatchObject({ ok: false, reason: "the patch is empty" });
    expect(await apply({ kind: "files", files: { "util.py": "u = 3\n" } })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/changes none of the target files/),
    });
  });

  it("refuses grader files, pytest configuration and escaping paths", async () => {
    for (const path of ["lmr_tests/tests/test_x.py", "conftest.py", "pkg/conftest.py", "pytest.ini", "sitecustomize.py", "x.pth"]) {
      const r = await apply({ kind: "files", files: { "pkg/mod.py": DONE, [path]: "" } });
      expect(r, path).toMatchObject({ ok: false, reason: expect.stringMatching(/which only the grader may provide/) });
    }
    expect(await apply({ kind: "files", files: { "../outside.py": "" } })).toMatchObject({ ok: false, reason: expect.stringMatching(/contains '\.\.'/) });
    expect(await apply({ kind: "files", files: { "/etc/passwd": "" } })).toMatchObject({ ok: false, reason: expect.stringMatching(/absolute/) });
    expect(isForbiddenPath("lmr_tests", "lmr_tests")).toBe(true);
    expect(isForbiddenPath("lmr_tests_x/a.py", "lmr_tests")).toBe(false);
  });

  it("reads a workspace folder's target and refuses a symlinked or missing one", async () => {
    const tree = join(ws, "..", `${ws.split("/").pop()}-tree`);
    await mkdir(join(tree, "pkg"), { recursive: true });
    await writeFile(join(tree, "pkg", "mod.py"), DONE);
    expect(await apply({ kind: "tree", dir: tree })).toEqual({ ok: true, overlay: { "pkg/mod.py": DONE }, ignored: [] });
    await rm(join(tree, "pkg", "mod.py"));
    expect(await apply({ kind: "tree", dir: tree })).toMatchObject({ ok: false, reason: "the submitted workspace has no pkg/mod.py" });
    await symlink(join(ws, "pkg", "mod.py"), join(tree, "pkg", "mod.py"));
    expect(await apply({ kind: "tree", dir: tree })).toMatchObject({ ok: false, reason: expect.stringMatching(/symbolic link/) });
    await rm(tree, { recursive: true, force: true });
  });
});

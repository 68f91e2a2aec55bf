import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkTaskFiles, findProjectRoot } from "./task-files.js";

let root: string;
let task: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "lmr-task-files-"));
  await writeFile(join(root, "package.json"), "{}\n");
  task = join(root, "tasks", "demo");
  await mkdir(join(task, "tests"), { recursive: true });
  await writeFile(join(task, "instruction.md"), "# demo\n");
  await writeFile(join(task, "tests", "test_demo.py"), "def test_demo():\n    assert 1 + 1 == 2\n");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const manifest = (extra: Record<string, unknown> = {}, tests: Record<string, unknown> = {}) => ({
  instruction: "instruction.md",
  tests: { files: ["tests/test_demo.py"], ...tests },
  upstream: { repo: "https://example.org/x", commit: "0".repeat(40), license: "MIT" },
  ...extra,
});
const run = async (data: unknown) => (await checkTaskFiles(data, task)).map((f) => `${f.pointer}: ${f.message}`);

describe("checkTaskFiles", () => {
  it("accepts files that exist inside the task folder, symlinks that stay inside too", async () => {
    await mkdir(join(task, "fixtures"));
    await writeFile(join(task, "fixtures", "a.json"), "[]\n");
    await symlink("a.json", join(task, "fixtures", "b.json"));
    expect(await run(manifest({}, { fixtures: ["fixtures", "fixtures/b.json"] }))).toEqual([]);
  });

  it("wants the instruction and test files to be regular files", async () => {
    await mkdir(join(task, "notes.md"));
    expect(await run(manifest({ instruction: "notes.md" }, { files: ["tests"] }))).toEqual([
      "/instruction: 'notes.md' is not a regular file",
      "/tests/files/0: 'tests' is not a regular file",
    ]);
  });

  it("rejects listed files and folder entries that resolve outside the task folder", async () => {
    await writeFile(join(root, "secret.py"), "x = 1\n");
    await symlink("../../../secret.py", join(task, "tests", "test_link.py"));
    await mkdir(join(task, "fixtures"));
    await symlink(join(root, "secret.py"), join(task, "fixtures", "leak.py"));
    await symlink(join(root, "missing.py"), join(task, "fixtures", "dangling.py"));
    const out = await run(manifest({}, { files: ["tests/test_link.py"], fixtures: ["fixtures"] }));
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^\/tests\/files\/0: 'tests\/test_link.py' resolves outside the task folder/);
    expect(out[1]).toBe("/tests/fixtures/0: 'fixtures/dangling.py' is a broken symlink");
    expect(out[2]).toMatch(/^\/tests\/fixtures\/0: 'fixtures\/leak.py' resolves outside the task folder/);
  });

  it("recognises Git LFS pointers among fixtures", async () => {
    await mkdir(join(task, "fixtures", "deep"), { recursive: true });
    const pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a".repeat(64) + "\nsize 12345\n";
    await writeFile(join(task, "fixtures", "deep", "weights.npz"), pointer);
    await writeFile(join(task, "fixtures", "ok.json"), "{}\n");
    expect(await run(manifest({}, { fixtures: ["fixtures"] }))).toEqual(["/tests/fixtures/0: 'fixtures/deep/weights.npz' is a Git LFS pointer, not the data"]);
  });

  it("skips paths the relative-path check already rejects", async () => {
    expect(await run(manifest({ instruction: "../instruction.md" }))).toEqual([]);
  });
});

describe("local upstream", () => {
  it("may go up with '..' while it stays inside the project", async () => {
    await mkdir(join(root, "upstreams", "toy"), { recursive: true });
    expect(await run(manifest({ upstream: { path: "../../upstreams/toy", license: "MIT" } }))).toEqual([]);
  });

  it("must exist, be a folder and stay inside the project", async () => {
    await writeFile(join(root, "file.txt"), "x\n");
    const out = async (path: string) => (await run(manifest({ upstream: { path, license: "MIT" } }))).join("\n");
    expect(await out("../../upstreams/none")).toMatch(/^\/upstream\/path: local upstream '..\/..\/upstreams\/none' does not exist/);
    expect(await out("../../file.txt")).toMatch(/is not a folder$/);
    expect(await out("../../..")).toMatch(/resolves to .*, outside the project/);
    expect(await out("/tmp")).toMatch(/path is absolute/);
    expect(await out("..\\up")).toMatch(/backslashes/);
  });

  it("finds the project root by .git or package.json", async () => {
    expect(await findProjectRoot(task)).toBe(root);
    await mkdir(join(task, ".git"));
    expect(await findProjectRoot(task)).toBe(task);
  });
});

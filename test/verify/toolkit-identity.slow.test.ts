import { execa } from "execa";
import { appendFile, cp, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolkitPath } from "../../src/core/paths.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";

afterAll(removeTempDirs);

/**
 * The toolkit's identity in reuse: a copy of the built toolkit verifies the pref-loss example;
 * one changed line of its Python harness makes verify run again and say why; reverting the line
 * makes the record made before valid again.
 */
describe("a verification record belongs to the toolkit build that made it", () => {
  let root: string;
  let harness: string;
  let cache = "";
  const verify = async (...extra: string[]) => {
    const r = await execa(
      "node",
      [
        join(root, "dist", "cli", "main.js"),
        "verify",
        "--tasks-dir",
        join(root, "examples", "tasks"),
        join(root, "examples", "tasks", "pref-loss"),
        "--sandbox",
        "bwrap",
        "--python",
        "/usr/bin/python3",
        ...extra,
      ],
      { reject: false, env: { ...process.env, LMR_DOCKER: "/nonexistent/docker", LMR_CACHE: cache } },
    );
    expect(r.exitCode, String(r.stderr).slice(-2000)).toBe(0);
    return String(r.stdout);
  };

  beforeAll(async () => {
    root = await makeTempDir("toolkit-copy");
    for (const d of ["dist", "python", "node", "schema", "templates", "package.json"]) await cp(toolkitPath(d), join(root, d), { recursive: true });
    await symlink(toolkitPath("node_modules"), join(root, "node_modules"));
    await mkdir(join(root, "test", "fixtures", "upstreams"), { recursive: true });
    await cp(toolkitPath("test", "fixtures", "upstreams", "pref-trainer"), join(root, "test", "fixtures", "upstreams", "pref-trainer"), { recursive: true });
    await cp(toolkitPath("examples", "tasks", "pref-loss"), join(root, "examples", "tasks", "pref-loss"), { recursive: true });
    harness = join(root, "python", "lmr_harness", "run_pytest.py");
    cache = await makeTempDir("toolkit-cache");
  }, 60_000);

  it("re-verifies after one harness line changes, says why, and takes the old record back once the line is reverted", async () => {
    // a record this build made is reused
    await verify("--force");
    const record = await readFile(join(root, "examples", "tasks", "pref-loss", "verification.json"), "utf8");
    expect(JSON.parse(record).toolkit_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await verify()).toContain("(unchanged since last verification)");

    const original = await readFile(harness, "utf8");
    await appendFile(harness, "# one changed line\n");
    const changed = await verify("--no-write");
    expect(changed).not.toContain("unchanged since last verification");
    expect(changed).toMatch(/verified again: the toolkit's grading code changed since the record/);

    await writeFile(harness, original);
    expect(await verify()).toContain("(unchanged since last verification)");
  });

  it("a record this machine never reproduced (a fresh clone's) is verified for real once, its file left as it is", async () => {
    const file = join(root, "examples", "tasks", "pref-loss", "verification.json");
    const before = await readFile(file, "utf8");
    cache = await makeTempDir("fresh-cache");
    const first = await verify();
    expect(first).toContain("verified again: the record has not been reproduced on this machine yet");
    expect(first).toContain("reproduced: this run matches every claim of the committed record");
    expect(await readFile(file, "utf8")).toBe(before);
    const second = await verify();
    expect(second).toContain("(unchanged since last verification)");
    expect(second).toMatch(/reproduced on this machine at /);
  });
});

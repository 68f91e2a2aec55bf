import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { completeFlags, makeProject, type Project } from "../new/project.js";

/*
 * Issue 27, trap 7: a stray fixtures/.gitkeep (written by `lmr new`) was left beside the
 * recorded fixtures, shipped to graders, and `lmr validate` did not flag it.
 */

afterAll(removeTempDirs);

const DRIVER = `from trainers import preference_loss

preference_loss([-1.0, -2.0], [-2.0, -1.0], [-1.5, -1.5], [-1.5, -1.5], 0.1)
preference_loss([-3.0], [-4.0], [-3.5], [-3.5], 0.5, ipo=True)
`;

describe("the fixtures placeholder lmr new leaves", () => {
  let p: Project;
  let taskDir: string;
  beforeAll(async () => {
    p = await makeProject("placeholder");
    const r = await runCli(completeFlags(p, { "--id": "placeholder" }), { cwd: p.root });
    expect([0, 1], r.stderr).toContain(r.exitCode);
    taskDir = join(p.root, "tasks", "placeholder");
  });

  async function validateProblems(): Promise<{ pointer: string; message: string; hint: string }[]> {
    const v = await runCli(["validate", taskDir, "--json"], { cwd: p.root, env: { LMR_APT_CACHE: "none" } });
    return (jsonData(v.stdout) as { problems: { pointer: string; message: string; hint: string }[] }).problems.filter((x) => x.pointer !== "/instruction");
  }

  it("is fine while the folder is empty, removed by lmr record, and flagged by validate when left beside fixtures", async () => {
    expect(await readdir(join(taskDir, "fixtures"))).toEqual([".gitkeep"]);
    expect(await validateProblems()).toEqual([]);

    await writeFile(join(taskDir, "driver.py"), DRIVER);
    const rec = await runCli(["record", taskDir], { cwd: p.root, env: { LMR_PYTHON: process.env.LMR_PYTHON ?? "python3" } });
    expect(rec.exitCode, rec.stderr).toBe(0);
    expect(await readdir(join(taskDir, "fixtures"))).toEqual(["calls.json"]);
    expect(await validateProblems()).toEqual([]);

    // a placeholder planted again (as a hand-made task keeps it): no driver or generator makes it
    await writeFile(join(taskDir, "fixtures", ".gitkeep"), "");
    const problems = await validateProblems();
    expect(problems).toEqual([
      {
        file: "tasks/placeholder/task.json",
        pointer: "/record",
        message: "'fixtures/.gitkeep' is a placeholder left beside the recorded fixtures: no driver or generator makes it, yet graders get it",
        hint: "delete fixtures/.gitkeep (`lmr record` removes it when it writes the fixtures)",
      },
    ]);
  });
});

import { execa } from "execa";
import { chmod, cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { CLI } from "../helpers/run-cli.js";

afterAll(removeTempDirs);

const START = "<!-- e2e:start -->";
const END = "<!-- e2e:end -->";

/** The shell code of the ```sh blocks between the e2e markers of CONTRIBUTING.md, as written there. */
function extractE2eScript(markdown: string): string {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`CONTRIBUTING.md has no ${START} … ${END} section`);
  const section = markdown.slice(start + START.length, end);
  const blocks = [...section.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  if (blocks.length === 0) throw new Error("the e2e section has no ```sh block");
  return blocks.join("\n");
}

describe("CONTRIBUTING.md worked example", () => {
  it("runs as written, in a copy of the repository, and ends with a verified task", async () => {
    const script = extractE2eScript(await readFile(join(REPO_ROOT, "CONTRIBUTING.md"), "utf8"));
    // the walk-through must cover the whole path, in order
    const commands = [...script.matchAll(/^lmr ([a-z]+(?: (?:tests|instruction))?)/gm)].map((m) => m[1]);
    expect(commands).toEqual(["new", "record", "scaffold tests", "scaffold instruction", "build", "verify", "validate", "list"]);

    // a copy of what the example reads from a checkout: the fixture upstream and the example paper text
    const root = await makeTempDir("contributing");
    await writeFile(join(root, "package.json"), "{}\n");
    for (const dir of ["test/fixtures/upstreams/pref-trainer", "examples/tasks/pref-loss"]) {
      await cp(join(REPO_ROOT, dir), join(root, dir), { recursive: true });
    }
    // `lmr` on PATH is the built CLI of this checkout
    const bin = join(root, ".bin");
    await mkdir(bin);
    await writeFile(join(bin, "lmr"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    await chmod(join(bin, "lmr"), 0o755);

    const r = await execa("bash", ["-euo", "pipefail", "-c", script], {
      cwd: root,
      env: { PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" },
      reject: false,
      all: true,
      timeout: 420_000,
    });
    expect(r.exitCode, String(r.all)).toBe(0);
    const out = String(r.all);
    expect(out).toMatch(/✓ dpo-preference-loss — fixtures identical \(\d+\), reference 3\/3 pass, stub 3\/3 fail in-test, alternatives 2\/2 pass/);
    expect(out).toContain("1/1 tasks verified");

    const taskDir = join(root, "tasks", "dpo-preference-loss");
    const record = JSON.parse(await readFile(join(taskDir, "verification.json"), "utf8")) as {
      ok: boolean;
      steps: { reference: { runs: { status: string }[] }; stub: { runs: { status: string }[] }; mutants: { kill_ratio: number; threshold: number } };
    };
    expect(record.ok).toBe(true);
    expect(record.steps.reference.runs.map((x) => x.status)).toEqual(["passed", "passed", "passed"]);
    expect(record.steps.stub.runs.map((x) => x.status)).toEqual(["failed", "failed", "failed"]);
    expect(record.steps.mutants.kill_ratio).toBeGreaterThanOrEqual(record.steps.mutants.threshold);
    // the flow ends with what CI checks: the manifest valid, tasks/README.md current
    const check = await execa("node", [CLI, "list", "--format", "md", "--check", join(root, "tasks", "README.md")], { cwd: root, reject: false });
    expect(check.exitCode, String(check.stderr)).toBe(0);

    // the placeholder test was replaced, and the instruction cites the paper text
    const manifest = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as { tests: { files: string[] } };
    expect(manifest.tests.files).toContain("tests/test_preference_loss.py");
    expect(await readFile(join(taskDir, "tests", "test_preference_loss.py"), "utf8")).not.toContain("placeholder written by `lmr new`");
    expect(await readFile(join(taskDir, "instruction.md"), "utf8")).toMatch(/- page 2[^\n]*label smoothing/);
  }, 480_000);
});

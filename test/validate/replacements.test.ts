import { execa } from "execa";
import { existsSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkReplacements, defaultApt } from "../../src/manifest/standin-checks.js";
import type { TaskManifest } from "../../src/manifest/types.js";
import { candidateSetupTemplate } from "../../src/scaffold/task-skeleton.js";
import { makeTempDir, pythonBin, removeTempDirs, writeFiles } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { completeFlags, makeProject, type Project } from "../new/project.js";

/*
 * Issue 27, trap 3: no stand-in template, no manifest way to declare a patched attribute of an
 * installed module (torch.compile on torch 1.13), and stand-in reasons that nothing checks.
 */

afterAll(removeTempDirs);

/** The indented code blocks of the template's docstring, in order. */
function templateBlocks(): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  for (const line of candidateSetupTemplate().split("\n")) {
    if (line.startsWith("    ")) current.push(line.slice(4));
    else if (line.trim() === "" && current.length > 0) current.push("");
    else if (current.length > 0) {
      blocks.push(current.join("\n").trim() + "\n");
      current = [];
    }
  }
  return blocks;
}

describe("the candidate set-up template lmr new writes", () => {
  it("is a no-op as written, and its two patterns work when copied out (real Python)", async () => {
    const dir = await makeTempDir("template");
    // an installed module that lacks the attribute the upstream calls (as torch 1.13 lacks compile)
    await writeFiles(dir, { "site/torch/__init__.py": '__version__ = "1.13.1"\n', "setup_as_written.py": candidateSetupTemplate() });
    const noop = await execa(
      pythonBin(),
      [
        "-c",
        "import sys; before = set(sys.modules); exec(open('setup_as_written.py').read()); import torch; print(sorted(set(sys.modules) - before), hasattr(torch, 'compile'))",
      ],
      { cwd: dir, env: { PYTHONPATH: join(dir, "site") }, reject: false },
    );
    expect(noop.stdout.trim(), noop.stderr).toBe("['torch'] False");
    const [standIn, patch] = templateBlocks();
    expect(standIn).toContain('sys.modules["wandb"] = wandb');
    expect(patch).toContain("torch.compile =");
    const probe = `
${standIn}
${patch}
import importlib.util, wandb, torch
step = lambda x: x + 1
assert torch.compile(step) is step and torch.compile(mode="max-autotune")(step) is step
assert importlib.util.find_spec("wandb") is not None
try:
    wandb.init(project="p")
except RuntimeError as e:
    print("stand-in:", e)
`;
    const r = await execa(pythonBin(), ["-c", probe], { cwd: dir, env: { PYTHONPATH: join(dir, "site") }, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("stand-in: wandb.init is a stand-in in the grader: the tests never use it");
  });
});

describe("environment.patches", () => {
  let p: Project;
  let taskDir: string;
  beforeAll(async () => {
    p = await makeProject("patches");
    const r = await runCli(completeFlags(p, { "--id": "patched" }), { cwd: p.root });
    expect([0, 1], r.stderr).toContain(r.exitCode);
    taskDir = join(p.root, "tasks", "patched");
  });

  async function problemsWith(edit: (m: TaskManifest) => void): Promise<string[]> {
    const m = JSON.parse(await readFile(join(taskDir, "task.json"), "utf8")) as TaskManifest;
    edit(m);
    await writeFile(join(taskDir, "task.json"), JSON.stringify(m, null, 2) + "\n");
    const v = await runCli(["validate", taskDir, "--json"], { cwd: p.root, env: { LMR_APT_CACHE: "none" } });
    return (jsonData(v.stdout) as { problems: { pointer: string; message: string }[] }).problems
      .filter((x) => x.pointer !== "/instruction")
      .map((x) => `${x.pointer}: ${x.message}`);
  }

  it("is a manifest field the set-up must honour: declared but not made, on a stand-in, without a set-up", async () => {
    const patches = [{ attribute: "torch.compile", reason: "Debian's torch 1.13 has no torch.compile; the upstream decorates its step with it" }];
    // the template shows the pattern in its docstring: that does not make the patch
    expect(await problemsWith((m) => (m.environment.patches = patches))).toEqual([
      '/environment/patches/0/attribute: tests/candidate_setup.py never sets torch.compile (no `torch` with `.compile = …` or setattr(…, "compile", …) in it)',
    ]);
    await writeFile(
      join(taskDir, "tests", "candidate_setup.py"),
      candidateSetupTemplate() +
        '\nimport torch\n\nif not hasattr(torch, "compile"):\n    torch.compile = lambda fn=None, **kwargs: fn if fn is not None else (lambda f: f)\n',
    );
    expect(await problemsWith(() => {})).toEqual([]);
    expect(await problemsWith((m) => (m.environment.stand_ins = [{ module: "torch", reason: "not installed here" }]))).toEqual([
      "/environment/patches/0/attribute: torch.compile patches torch, which is a stand-in (environment.stand_ins)",
    ]);
    expect(
      await problemsWith((m) => {
        delete m.environment.stand_ins;
        delete m.tests.candidate;
      }),
    ).toEqual(["/environment/patches/0/attribute: torch.compile is patched, but the task has no candidate set-up to patch it (tests.candidate.setup)"]);
    expect(await problemsWith((m) => (m.environment.patches = [{ attribute: "torch", reason: "x" }]))).toEqual([
      expect.stringMatching(/^\/environment\/patches\/0\/attribute: /),
    ]);
  });
});

/** This machine runs Debian bookworm with apt-cache: the stand-in reasons can be checked against it. */
const onBookworm =
  existsSync("/usr/bin/apt-cache") && /^VERSION_CODENAME=bookworm$/m.test(existsSync("/etc/os-release") ? readFileSync("/etc/os-release", "utf8") : "");

describe.skipIf(!onBookworm)("stand-in reasons against the base's Debian (apt-cache, Debian bookworm)", () => {
  const manifest = (standIns: { module: string; reason: string }[]) => ({
    environment: { python: "3.11", base: "debian:bookworm", requirements: [], stand_ins: standIns },
  });

  it("finds a reason that says a packaged module is not in Debian, or names a package Debian lacks", async () => {
    // bookworm packages omegaconf (python3-omegaconf) and not transformers
    expect((await defaultApt("bookworm", ["python3-omegaconf", "python3-transformers"]))?.has("python3-omegaconf")).toBe(true);
    const findings = await checkReplacements(
      manifest([
        { module: "omegaconf", reason: "imported for configs only; not a Debian package, so a stand-in" },
        { module: "transformers", reason: "Debian has python3-transformers, but it is too old" },
        { module: "bs4", reason: "Debian has python3-bs4 4.11, but the import pulls lxml the target never uses" },
        { module: "wandb", reason: "logging only; not a Debian package (pip install wandb: 8 distributions, measured)" },
        { module: "sagemaker", reason: "AWS deployment only" },
      ]),
      "/nonexistent",
    );
    expect(findings.map((f) => `${f.pointer}: ${f.message}`)).toEqual([
      "/environment/stand_ins/0/reason: the reason says omegaconf is not in Debian, but Debian bookworm has python3-omegaconf (apt-cache policy python3-omegaconf)",
      "/environment/stand_ins/1/reason: the reason says Debian has python3-transformers, but Debian bookworm has no such package (apt-cache policy python3-transformers)",
    ]);
    expect(findings[0]!.hint).toContain('"system_packages": ["python3-omegaconf"]');
    // another release than this machine's: apt here cannot answer for it, so nothing is claimed
    expect(
      await checkReplacements(
        { environment: { ...manifest([{ module: "omegaconf", reason: "not a Debian package" }]).environment, base: "debian:trixie" } },
        "/nonexistent",
      ),
    ).toEqual([]);
  });
});

import { copyFile, mkdir, readFile, symlink } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
import type { PrepareStep } from "../../src/manifest/types.js";
import { applyPrepareSteps } from "../../src/prepare/apply.js";
import { materializeUpstream } from "../../src/source/materialize.js";
import { git, taskWith, removeTempDirs, tempDir } from "../source/git-fixture.js";
import { compileError, runPython } from "./python.js";

afterAll(removeTempDirs);

const here = import.meta.dirname;
const fixtures = join(here, "fixtures");
const notebooks = join(here, "..", "fixtures", "notebooks");

async function failure(p: Promise<unknown>): Promise<LmrError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected an LmrError");
}

/** An upstream repo with a notebook and the MCTS module in a sub-package. */
async function upstreamRepo(): Promise<{ url: string; commit: string }> {
  const dir = await tempDir("nb-up");
  await git(dir, "init", "-q");
  await mkdir(join(dir, "core"));
  await copyFile(join(notebooks, "contrast.ipynb"), join(dir, "demo.ipynb"));
  await copyFile(join(fixtures, "mcts.py"), join(dir, "core", "mcts.py"));
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "upstream");
  return { url: pathToFileURL(dir).href, commit: await git(dir, "rev-parse", "HEAD") };
}

const steps: PrepareStep[] = [
  { kind: "notebook-to-module", notebook: "demo.ipynb", cells: [0, 1, 3], out: "demo_module.py" },
  {
    kind: "extract-function",
    file: "core/mcts.py",
    within: "MCTS.search",
    start: { anchor: "# selection" },
    end: { anchor: "path.append(node)" },
    name: "select",
    params: ["node", "path"],
    returns: ["node"],
    as_method: true,
  },
  // works on the module the first step wrote: the scoring lines at module level become a function
  {
    kind: "extract-function",
    file: "demo_module.py",
    start: { anchor: "scores = contrast" },
    end: { anchor: "scores = contrast" },
    name: "score_example",
    params: [],
    returns: ["scores"],
  },
];

describe("applyPrepareSteps", () => {
  it("applies the steps in order to a materialized upstream", async () => {
    const up = await upstreamRepo();
    const taskDir = await tempDir("task");
    const tree = join(await tempDir("tree"), "t");
    await materializeUpstream(taskWith({ repo: up.url, commit: up.commit, license: "MIT" }, taskDir), tree, { cacheDir: await tempDir("cache") });
    const report = await applyPrepareSteps(tree, steps, { file: join(taskDir, "task.json") });
    expect(report.steps).toEqual([
      { index: 0, kind: "notebook-to-module", file: "demo_module.py", cells: [0, 1, 3], dropped_lines: 6, dropped_cells: [] },
      { index: 1, kind: "extract-function", file: "core/mcts.py", start_line: 28, end_line: 37, def_line: 43, call: "node = self.select(node, path)" },
      { index: 2, kind: "extract-function", file: "demo_module.py", start_line: 22, end_line: 22, def_line: 24, call: "scores = score_example()" },
    ]);
    expect(await readFile(join(tree, "core", "mcts.py"), "utf8")).toBe(await readFile(join(fixtures, "mcts.select.expected.py"), "utf8"));
    const mod = await readFile(join(tree, "demo_module.py"), "utf8");
    expect(mod).toContain(
      "\n\ndef score_example():\n    scores = contrast([0.0, -1.0, -3.0], [-1.0, -0.5, -1.0])\n    return scores\n\n\nscores = score_example()\n",
    );
    expect(await compileError(mod)).toBeUndefined();
    expect(await runPython("import demo_module", tree)).toBe("[1.0, -inf, -inf]");
  });

  it("names the failing step, with a pointer into it", async () => {
    const tree = await tempDir("tree");
    await copyFile(join(fixtures, "mcts.py"), join(tree, "mcts.py"));
    const bad: PrepareStep[] = [
      { ...(steps[1] as PrepareStep & { kind: "extract-function" }), file: "mcts.py" },
      { ...(steps[1] as PrepareStep & { kind: "extract-function" }), file: "mcts.py", start: { anchor: "no such text" } },
    ];
    const err = await failure(applyPrepareSteps(tree, bad, { file: "/tasks/x/task.json" }));
    expect(err.message).toBe('prepare step 1 (extract-function): start anchor "no such text": no line contains it in MCTS.search (lines 24-41)');
    expect(err.pointer).toBe("/prepare/1/start/anchor");
    expect(err.file).toBe("/tasks/x/task.json");
    expect(err.hint).toBeDefined();
  });

  it("refuses paths outside the tree and missing files", async () => {
    const tree = await tempDir("tree");
    const outside = await tempDir("outside");
    await copyFile(join(notebooks, "contrast.ipynb"), join(tree, "nb.ipynb"));
    await symlink(outside, join(tree, "escape"));
    const ctx = { file: "task.json" };
    const up = await failure(applyPrepareSteps(tree, [{ kind: "notebook-to-module", notebook: "../nb.ipynb", out: "m.py" }], ctx));
    expect(up).toMatchObject({ code: "prepare/path-invalid", pointer: "/prepare/0/notebook" });
    const link = await failure(applyPrepareSteps(tree, [{ kind: "notebook-to-module", notebook: "nb.ipynb", out: "escape/m.py" }], ctx));
    expect(link).toMatchObject({ code: "prepare/path-invalid", pointer: "/prepare/0/out" });
    const missing = await failure(
      applyPrepareSteps(tree, [{ kind: "extract-function", file: "nope.py", start: { line: 1 }, end: { line: 1 }, name: "f", params: [], returns: [] }], ctx),
    );
    expect(missing.message).toBe("prepare step 0 (extract-function): 'nope.py' is not a file in the upstream tree");
  });
});

import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isLmrError } from "../../src/core/errors.js";
import { scaffoldInstruction } from "../../src/scaffold/instruction.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData, jsonEnvelope } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { buildPdf } from "../paper/pdf-writer.js";

afterAll(removeTempDirs);

async function errorOf(p: Promise<unknown>): Promise<{ code: string; pointer?: string | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isLmrError(err)) return { code: err.code, pointer: err.pointer, message: err.message };
    throw err;
  }
  throw new Error("expected an LmrError");
}

describe("scaffold instruction (library) on copies of the example tasks", () => {
  it("writes a missing instruction from the paper text; validate then asks only for the TODO(author) decisions", async () => {
    const root = await makeTempDir("instr");
    const dir = await copyTask(root, "pref-loss");
    await rm(join(dir, "instruction.md"));
    const r = await scaffoldInstruction(dir);
    expect(r.file).toBe(join(dir, "instruction.md"));
    expect(r.targets).toBe(1);
    expect(r.passages).toBeGreaterThan(0);
    const text = await readFile(r.file, "utf8");
    expect(r.todos).toBe((text.match(/TODO\(author\)/g) ?? []).length);
    expect(text).toContain("The paper is at the root of this workspace: `paper.md` holds its text, page by page.");
    expect(text).toMatch(/- page 2[^\n]*label smoothing|- page 1:/);
    expect(text).toContain("- `utils.py`\n- `models.py`\n- `train.py`");
    expect(text).toContain("the\n  parameters with defaults are `label_smoothing` and `ipo`");
    // a draft is not a finished task: the only problem left is the author's to resolve
    const v = await runCli(["validate", dir, "--json"], { cwd: root });
    expect(v.exitCode).toBe(1);
    const problems = (jsonData(v.stdout) as { problems: { pointer: string; message: string }[] }).problems;
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ pointer: "/instruction" });
    expect(problems[0]!.message).toContain(`${r.todos} TODO(author) marker(s)`);
    await writeFile(r.file, text.replace(/TODO\(author\)/g, "Decided"));
    expect((await runCli(["validate", dir], { cwd: root })).exitCode).toBe(0);
  });

  it("refuses to replace an instruction unless forced", async () => {
    const root = await makeTempDir("instr");
    const dir = await copyTask(root, "trainer-class");
    const before = await readFile(join(dir, "instruction.md"), "utf8");
    const e = await errorOf(scaffoldInstruction(dir));
    expect(e.code).toBe("instruction/exists");
    expect(await readFile(join(dir, "instruction.md"), "utf8")).toBe(before);
    await scaffoldInstruction(dir, { force: true });
    const text = await readFile(join(dir, "instruction.md"), "utf8");
    expect(text).toContain("Every method body of this class has been removed");
    for (const m of [
      "def learning_rate(self) -> float:",
      "def batch_logps(model: BagOfWordsPolicy, batch: Sequence[dict]) -> Tuple[List[float], List[float]]:",
      "async def evaluate(",
    ]) {
      expect(text).toContain(m);
    }
  });

  it("describes targets of the prepared tree: a method made by extract-function, two functions from a notebook", async () => {
    const root = await makeTempDir("instr");
    const mcts = await copyTask(root, "mcts-best-action");
    await scaffoldInstruction(mcts, { force: true });
    const text = await readFile(join(mcts, "instruction.md"), "utf8");
    expect(text).toContain("### `OpenLoopMCTS.find_best_action` in `core/mcts.py`");
    expect(text).toContain("def find_best_action(self, key, actions, priors):");
    const rouge = await copyTask(root, "rouge-notebook");
    await scaffoldInstruction(rouge, { force: true });
    const two = await readFile(join(rouge, "instruction.md"), "utf8");
    expect(two).toContain("# Implement `lcs_length` and `rouge_l`");
    expect(two).toContain("### `lcs_length` in `metrics.py`");
    expect(two).toContain("### `rouge_l` in `metrics.py`");
    expect(two).toContain("Hidden pytest tests (1 file) exercise `lcs_length` and `rouge_l`");
  });

  it("searches a PDF given with --paper for the author's keywords", async () => {
    const root = await makeTempDir("instr");
    const dir = await copyTask(root, "dpo-grad-region");
    const pdf = join(root, "paper.pdf");
    await writeFile(
      pdf,
      buildPdf([
        ["1 Introduction", "Nothing here."],
        ["5 Gradient", "The gradient of the objective scales the", "difference of the two sigmoids.      (9)"],
      ]),
    );
    const r = await scaffoldInstruction(dir, { force: true, paper: pdf, keywords: ["gradient of the objective"] });
    expect(r.passages).toBeGreaterThan(0);
    const text = await readFile(r.file, "utf8");
    expect(text).toContain('- page 2, section "5 Gradient", near equation (9): "The gradient of the objective scales the');
    expect(text).toContain("Some lines inside this method have been removed");
    // the PDF is not in the workspace, so the instruction must not point the agent to paper.json
    expect(text).not.toContain("paper.json");
  });

  it("points at the manifest field when a target is not in the upstream", async () => {
    const root = await makeTempDir("instr");
    const dir = await copyTask(root, "pref-loss", (m) => {
      m.targets[0].symbol = "no_such_function";
    });
    // the alternatives' blocks name the real symbol, which validation would report first
    await rm(join(dir, "alternatives"), { recursive: true });
    const e = await errorOf(scaffoldInstruction(dir, { force: true }));
    expect(e.code).toBe("task/target-not-found");
    expect(e.pointer).toBe("/targets/0/symbol");
    const bad = await copyTask(await makeTempDir("instr"), "pref-loss", (m) => {
      m.category = "Robotics";
    });
    expect((await errorOf(scaffoldInstruction(bad, { force: true }))).pointer).toBe("/category");
  });
});

describe("lmr scaffold instruction (built CLI)", () => {
  it("exits 2 with a hint when the instruction exists, writes it with --force, and reports JSON", async () => {
    const root = await makeTempDir("instr-cli");
    const dir = await copyTask(root, "pref-loss");
    const refused = await runCli(["scaffold", "instruction", dir], { cwd: root });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/instruction\.md: the instruction already exists \(hint: pass --force/);
    const r = await runCli(["scaffold", "instruction", dir, "--force", "--keywords", "label smoothing", "--json"], { cwd: root });
    expect(r.exitCode).toBe(0);
    expect(jsonEnvelope(r.stdout)).toMatchObject({ ok: true, command: "scaffold instruction" });
    const out = jsonData(r.stdout) as { file: string; targets: number; passages: number; todos: number };
    expect(out).toMatchObject({ file: join(dir, "instruction.md"), targets: 1 });
    expect(out.passages).toBeGreaterThan(0);
    const text = await readFile(join(dir, "instruction.md"), "utf8");
    expect(text).toContain("label smoothing");
    expect(out.todos).toBe((text.match(/TODO\(author\)/g) ?? []).length);
    const missing = await runCli(["scaffold", "instruction", join(root, "nope")], { cwd: root });
    expect(missing.exitCode).toBe(2);
  });
});

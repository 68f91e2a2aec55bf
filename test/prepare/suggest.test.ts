import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { suggestSignature } from "../../src/prepare/suggest.js";

const fixture = (name: string): Promise<string> => readFile(join(import.meta.dirname, "fixtures", name), "utf8");

describe("suggestSignature", () => {
  it("proposes the MCTS selection loop's inputs and outputs; self only when not a method", async () => {
    const mcts = await fixture("mcts.py");
    const start = { anchor: "# selection" };
    const end = { anchor: "path.append(node)" };
    // action/child/best_* are assigned in the loop but re-bound or unused after it: not returned.
    expect(await suggestSignature(mcts, "MCTS.search", start, end, { asMethod: true })).toEqual({
      params: ["node", "path"],
      returns: ["node"],
      start_line: 28,
      end_line: 37,
    });
    expect((await suggestSignature(mcts, "MCTS.search", start, end)).params).toEqual(["node", "self", "path"]);
  });

  it("proposes main()'s block inputs (not imports or builtins) and what is read later", async () => {
    const train = await fixture("train.py");
    expect(await suggestSignature(train, "main", { anchor: "# exponential" }, { anchor: "summary = " })).toEqual({
      params: ["rows", "alpha"],
      returns: ["counts", "summary"],
      start_line: 19,
      end_line: 27,
    });
  });

  it("treats a conditional assignment as not covering a later read", async () => {
    const src = ["def f(x, flag):", "    y = 0", "    if flag:", "        y = x", "    z = y + 1", "    w = z * 2", "    return w, y", ""].join("\n");
    expect(await suggestSignature(src, "f", { line: 3 }, { line: 5 })).toEqual({ params: ["flag", "x", "y"], returns: ["y", "z"], start_line: 3, end_line: 5 });
  });

  it("returns what a later loop iteration reads, and skips names re-bound before their next read", async () => {
    const src = [
      "def f(xs):",
      "    acc = 0",
      "    for x in xs:",
      "        tmp = acc + x",
      "        acc = tmp * 2",
      "        tmp = None",
      "    return acc",
      "",
    ].join("\n");
    expect(await suggestSignature(src, "f", { line: 4 }, { line: 5 })).toEqual({ params: ["acc", "x"], returns: ["acc"], start_line: 4, end_line: 5 });
  });

  it("passes earlier module variables at module level, but not imports or functions", async () => {
    const src = [
      "import os",
      "",
      "def helper(v):",
      "    return v",
      "",
      "base = os.sep",
      "items = [1, 2]",
      "total = 0",
      "for it in items:",
      "    total += helper(it)",
      "print(base, total)",
      "",
    ].join("\n");
    // the block and the print after it run on import: main_guard is proposed
    expect(await suggestSignature(src, undefined, { anchor: "total = 0" }, { anchor: "total += " })).toEqual({
      params: ["items"],
      returns: ["total"],
      start_line: 8,
      end_line: 10,
      main_guard: true,
      runs_on_import: [[6, 11]],
    });
  });

  it("proposes main_guard for a script whose top-level code runs on import, naming those lines", async () => {
    const script = await fixture("layer_scores.py");
    expect(await suggestSignature(script, undefined, { anchor: "# one score per layer" }, { anchor: "scores.append(" })).toEqual({
      params: ["n_layers", "rows", "args", "scores"],
      returns: [],
      start_line: 24,
      end_line: 34,
      main_guard: true,
      runs_on_import: [
        [5, 13],
        [23, 38],
      ],
    });
    // code that runs on import outside `if __name__`, even when the block is inside it
    const exp = await suggestSignature(
      await fixture("experiments.py"),
      undefined,
      { anchor: "layer_id = args.layer - 1" },
      { anchor: 'print(json.dumps({"layer"' },
    );
    expect(exp).toMatchObject({ params: ["args", "SCALE", "layers"], returns: [], main_guard: true, runs_on_import: [[5, 6]] });
  });

  it("proposes no main_guard for a module that only defines things", async () => {
    expect(await suggestSignature(await fixture("train.py"), "main", { anchor: "# exponential" }, { anchor: "summary = " })).not.toHaveProperty("main_guard");
  });

  it("counts a name read on the right of its own assignment as an input", async () => {
    const src = "def f(a, b):\n    a = a + b\n    b += 1\n    return a, b\n";
    expect(await suggestSignature(src, "f", { line: 2 }, { line: 3 })).toEqual({ params: ["a", "b"], returns: ["a", "b"], start_line: 2, end_line: 3 });
  });

  it("is not thrown off by non-ASCII text before the block", async () => {
    const src = 'def f(x):\n    label = "température €"\n    y = x * 2\n    return label, y\n';
    expect(await suggestSignature(src, "f", { anchor: "y = x" }, { anchor: "y = x" })).toEqual({ params: ["x"], returns: ["y"], start_line: 3, end_line: 3 });
  });

  it("sees names a nested function or comprehension reads", async () => {
    const src = [
      "def f(scale, data):",
      "    k = 3",
      "    fn = lambda v: v * scale",
      "    out = [fn(d) + k for d in data]",
      "    g = lambda: out",
      "    return g",
      "",
    ].join("\n");
    expect(await suggestSignature(src, "f", { line: 3 }, { line: 4 })).toEqual({
      params: ["scale", "k", "data"],
      returns: ["out"],
      start_line: 3,
      end_line: 4,
    });
  });
});

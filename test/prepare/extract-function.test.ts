import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
import { applyPrepareSteps } from "../../src/prepare/apply.js";
import { extractFunction, type ExtractSpec } from "../../src/prepare/extract-function.js";
import { removeTempDirs, tempDir } from "../source/git-fixture.js";
import { compileError, runPython } from "./python.js";

afterAll(removeTempDirs);

const fixture = (name: string): Promise<string> => readFile(join(import.meta.dirname, "fixtures", name), "utf8");

async function failure(source: string, spec: ExtractSpec): Promise<LmrError> {
  try {
    await extractFunction(source, spec);
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected the extraction to fail");
}

const selectStep: ExtractSpec = {
  within: "MCTS.search",
  start: { anchor: "# selection" },
  end: { anchor: "path.append(node)" },
  name: "select",
  params: ["node", "path"],
  returns: ["node"],
  as_method: true,
};

describe("extract-function as a method (MCTS selection loop)", () => {
  it("moves the loop into a method after search and calls it with self", async () => {
    const r = await extractFunction(await fixture("mcts.py"), selectStep);
    expect(r.source).toBe(await fixture("mcts.select.expected.py"));
    expect(r).toMatchObject({ start_line: 28, end_line: 37, def_line: 43, call: "node = self.select(node, path)" });
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("behaves like the original search", async () => {
    const dir = await tempDir("mcts");
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    await writeFile(join(dir, "a", "mod.py"), await fixture("mcts.py"));
    await writeFile(join(dir, "b", "mod.py"), (await extractFunction(await fixture("mcts.py"), selectStep)).source);
    // Visit counts of every root child over several seeds: any change in selection shows up here.
    const script = `
import sys, json
sys.path.insert(0, sys.argv[1])
import mod
out = []
for seed in range(5):
    m = mod.MCTS(lambda s: [] if len(s) >= 3 else [1, 2, 3], lambda s, a: s + (a,),
                 lambda s, rng: 1.0 if sum(s) == 7 else rng.random() * 0.1, seed=seed)
    best = m.search((), 150)
    out.append([best, mod.run(60, seed)])
print(json.dumps(out))
`;
    const before = await runPython(script, dir, [join(dir, "a")]);
    const after = await runPython(script, dir, [join(dir, "b")]);
    expect(JSON.parse(before)).toHaveLength(5);
    expect(after).toBe(before);
  });
});

describe("extract-function at module level", () => {
  const emaStep: ExtractSpec = {
    within: "main",
    start: { anchor: "# exponential" },
    end: { anchor: "summary = " },
    name: "ema_by_label",
    params: ["rows", "alpha"],
    returns: ["counts", "summary"],
  };

  it("puts the function right before the top-level statement holding `within`", async () => {
    const r = await extractFunction(await fixture("train.py"), emaStep);
    expect(r.source).toBe(await fixture("train.ema.expected.py"));
    expect(r.call).toBe("counts, summary = ema_by_label(rows, alpha)");
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("keeps main()'s output", async () => {
    const dir = await tempDir("train");
    await writeFile(
      join(dir, "rows.jsonl"),
      [
        '{"label": "a", "score": 1}',
        '{"label": "b", "score": 2.5}',
        '{"label": "a", "score": 3}',
        '{"label": "c", "score": -1}',
        '{"label": "a", "score": 0.25}',
      ].join("\n") + "\n",
    );
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    await writeFile(join(dir, "a", "mod.py"), await fixture("train.py"));
    await writeFile(join(dir, "b", "mod.py"), (await extractFunction(await fixture("train.py"), emaStep)).source);
    const script = "import sys\nsys.path.insert(0, sys.argv[1])\nimport mod\nmod.main(['rows.jsonl', '--alpha', '0.3'])";
    const before = await runPython(script, dir, [join(dir, "a")]);
    expect(before).toContain('"counts": {"a": 3, "b": 1, "c": 1}');
    expect(await runPython(script, dir, [join(dir, "b")])).toBe(before);
  });

  it("extracts from an `if __name__` block with line numbers, placing the function above it", async () => {
    const src = [
      "import sys",
      "",
      "",
      "if __name__ == '__main__':",
      "    n = int(sys.argv[1])",
      "    total = 0",
      "    for i in range(n):",
      "        total += i * i",
      "    print(total)",
      "",
    ].join("\n");
    const r = await extractFunction(src, { start: { line: 6 }, end: { line: 8 }, name: "sum_squares", params: ["n"], returns: ["total"] });
    expect(r.source).toBe(
      [
        "import sys",
        "",
        "",
        "def sum_squares(n):",
        "    total = 0",
        "    for i in range(n):",
        "        total += i * i",
        "    return total",
        "",
        "",
        "if __name__ == '__main__':",
        "    n = int(sys.argv[1])",
        "    total = sum_squares(n)",
        "    print(total)",
        "",
      ].join("\n"),
    );
    expect(r.def_line).toBe(4);
  });

  it("keeps tabs, CRLF line ends and multi-line string bodies byte for byte", async () => {
    const src = 'def f(x):\r\n\tif x:\r\n\t\tmsg = """a\r\n  b"""\r\n\t\ty = len(msg) + x\r\n\t\treturn y\r\n\treturn 0\r\n';
    const r = await extractFunction(src, { within: "f", start: { anchor: "msg =" }, end: { anchor: "y = len" }, name: "g", params: ["x"], returns: ["y"] });
    expect(r.source).toBe(
      'def g(x):\r\n\tmsg = """a\r\n  b"""\r\n\ty = len(msg) + x\r\n\treturn y\r\n\r\n\r\ndef f(x):\r\n\tif x:\r\n\t\ty = g(x)\r\n\t\treturn y\r\n\treturn 0\r\n',
    );
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("uses cls and @classmethod when extracting from a classmethod as a method", async () => {
    const src = "class A:\n    @classmethod\n    def make(cls, n):\n        parts = [cls.__name__] * n\n        name = '-'.join(parts)\n        return name\n";
    const r = await extractFunction(src, {
      within: "A.make",
      start: { line: 4 },
      end: { line: 5 },
      name: "join",
      params: ["n"],
      returns: ["name"],
      as_method: true,
    });
    expect(r.source).toBe(
      "class A:\n    @classmethod\n    def make(cls, n):\n        name = cls.join(n)\n        return name\n\n    @classmethod\n    def join(cls, n):\n        parts = [cls.__name__] * n\n        name = '-'.join(parts)\n        return name\n",
    );
    expect(r.def_line).toBe(8);
  });
});

describe("extract-function errors", () => {
  it("rejects a block that crosses indentation levels", async () => {
    const err = await failure(await fixture("mcts.py"), {
      ...selectStep,
      start: { anchor: "best_score, best_child = -math.inf" },
      end: { anchor: "path.append(node)", occurrence: 2 },
    });
    expect(err.code).toBe("prepare/block-crosses-indentation");
    expect(err.message).toBe(
      "lines 31-45 are not whole statements at one indentation level: line 45 is outside the block that line 31 belongs to (it ends at line 37)",
    );
    expect(err.pointer).toBe("/end");
  });

  it("rejects a start in the middle of a statement", async () => {
    const src = "def f():\n    x = (1 +\n         2)\n    return x\n";
    const err = await failure(src, { within: "f", start: { line: 3 }, end: { line: 3 }, name: "g", params: [], returns: [] });
    expect(err.message).toBe("line 3 is in the middle of a statement that starts at line 2");
  });

  it("reports an anchor that is not inside `within`, and a missing occurrence", async () => {
    const mcts = await fixture("mcts.py");
    const err = await failure(mcts, { ...selectStep, start: { anchor: "self.rng = random.Random" } });
    expect(err.code).toBe("prepare/anchor-not-found");
    expect(err.message).toBe('start anchor "self.rng = random.Random": no line contains it in MCTS.search (lines 24-50)');
    expect(err.pointer).toBe("/start/anchor");
    const err2 = await failure(mcts, { ...selectStep, end: { anchor: "path.append(node)", occurrence: 3 } });
    expect(err2.message).toBe('end anchor "path.append(node)" (occurrence 3): only 2 line(s) contain it in MCTS.search (lines 24-50)');
  });

  it("refuses a block containing return, or a break of an outer loop", async () => {
    const src = "def f(xs):\n    for x in xs:\n        if x > 2:\n            break\n        y = x\n    if not xs:\n        return None\n    return y\n";
    const ret = await failure(src, { within: "f", start: { line: 6 }, end: { line: 7 }, name: "g", params: ["xs"], returns: [] });
    expect(ret.code).toBe("prepare/block-escapes");
    expect(ret.message).toBe("line 7: the block contains `return`, which returns from f; as a new function it would return from that function instead");
    const brk = await failure(src, { within: "f", start: { line: 3 }, end: { line: 4 }, name: "g", params: ["x"], returns: [] });
    expect(brk.message).toBe("line 4: `break` refers to a loop outside the block; a new function cannot break it");
    // the whole loop is fine: its break stays inside
    const ok = await extractFunction(src, { within: "f", start: { line: 2 }, end: { line: 5 }, name: "g", params: ["xs"], returns: ["y"] });
    expect(await compileError(ok.source)).toBeUndefined();
  });

  it("names near matches for an unknown `within`, and refuses as_method on a function", async () => {
    const train = await fixture("train.py");
    const err = await failure(train, { within: "mian", start: { line: 1 }, end: { line: 1 }, name: "g", params: [], returns: [] });
    expect(err.message).toBe("no function or method 'mian'; near matches: main");
    expect(err.pointer).toBe("/within");
    const err2 = await failure(train, {
      within: "main",
      start: { anchor: "ema = {}" },
      end: { anchor: "ema = {}" },
      name: "g",
      params: [],
      returns: ["ema"],
      as_method: true,
    });
    expect(err2.message).toBe("as_method is true but main is not a method of a class");
  });

  it("refuses a name that is taken where the function goes or is called", async () => {
    const train = await fixture("train.py");
    const spec = {
      within: "main",
      start: { anchor: "# exponential" },
      end: { anchor: "summary = " },
      params: ["rows", "alpha"],
      returns: ["counts", "summary"],
    };
    expect((await failure(train, { ...spec, name: "load" })).message).toBe("'load' is already bound at module level (line 6)");
    expect((await failure(train, { ...spec, name: "parser" })).message).toBe(
      "'parser' is already a local name of main, so the call would not reach the new function (line 12)",
    );
    expect((await failure(train, { ...spec, name: "class" })).message).toBe('name "class" is not a Python identifier');
  });
});

describe("extract-function from a block nested in control flow inside main()", () => {
  const src = [
    "import json",
    "import os",
    "",
    "",
    "def main(items, method, demo):",
    "    out = []",
    '    with open(os.devnull, "w") as wp:',
    "        for x in items:",
    "            tries = 0",
    "            while tries < 2:",
    "                tries += 1",
    '                if method == "zero":',
    '                    k = x + " A:"',
    '                elif method == "few":',
    "                    k = demo + x",
    "                else:",
    '                    raise ValueError("bad method: " + method)',
    "                out.append(k * tries)",
    "            wp.write(json.dumps(k))",
    "    return out",
    "",
  ].join("\n");
  const step: ExtractSpec = {
    within: "main",
    start: { anchor: 'if method == "zero"' },
    end: { anchor: "raise ValueError" },
    name: "build_prompt",
    params: ["method", "x", "demo"],
    returns: ["k"],
  };

  it("moves the if/elif/else chain (raise included) into a function above main", async () => {
    const r = await extractFunction(src, step);
    expect(r).toMatchObject({ start_line: 12, end_line: 17, def_line: 5, call: "k = build_prompt(method, x, demo)" });
    const lines = r.source.split("\n");
    expect(lines.slice(4, 13)).toEqual([
      "def build_prompt(method, x, demo):",
      '    if method == "zero":',
      '        k = x + " A:"',
      '    elif method == "few":',
      "        k = demo + x",
      "    else:",
      '        raise ValueError("bad method: " + method)',
      "    return k",
      "",
    ]);
    expect(lines).toContain("                k = build_prompt(method, x, demo)");
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("keeps main()'s results and its error", async () => {
    const dir = await tempDir("nested");
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    await writeFile(join(dir, "a", "mod.py"), src);
    await writeFile(join(dir, "b", "mod.py"), (await extractFunction(src, step)).source);
    const script = [
      "import sys, json",
      "sys.path.insert(0, sys.argv[1])",
      "import mod",
      "out = [mod.main(['Q1', 'Q2'], m, 'D: ') for m in ('zero', 'few')]",
      "try:",
      "    mod.main(['Q'], 'other', '')",
      "except ValueError as e:",
      "    out.append(str(e))",
      "print(json.dumps(out))",
    ].join("\n");
    const before = await runPython(script, dir, [join(dir, "a")]);
    expect(JSON.parse(before)).toHaveLength(3);
    expect(await runPython(script, dir, [join(dir, "b")])).toBe(before);
  });
});

describe("extract-function with main_guard (script code at module level)", () => {
  const scoresStep: ExtractSpec = {
    start: { anchor: "# one score per layer" },
    end: { anchor: "scores.append(" },
    name: "layer_scores",
    params: ["n_layers", "rows", "args", "scores"],
    returns: ["scores"],
    main_guard: true,
  };
  const exp1Step: ExtractSpec = {
    start: { anchor: "layer_id = args.layer - 1" },
    end: { anchor: 'print(json.dumps({"layer"' },
    name: "run_exp1",
    params: ["args", "layers", "SCALE"],
    returns: ["feat"],
    main_guard: true,
  };
  const rows = {
    pos: [
      [
        [0, 0],
        [1, 1],
      ],
      [
        [0.5, 0],
        [1, 2],
      ],
      [
        [0, 1],
        [3, 0],
      ],
    ],
    neg: [
      [
        [4, 4],
        [1, 1.5],
      ],
      [
        [5, 3],
        [2, 1],
      ],
    ],
  };

  it("extracts a module-level loop and guards every top-level statement but imports and definitions", async () => {
    const r = await extractFunction(await fixture("layer_scores.py"), scoresStep);
    expect(r.source).toBe(await fixture("layer_scores.guarded.expected.py"));
    expect(r).toMatchObject({
      start_line: 24,
      end_line: 34,
      def_line: 28,
      call: "scores = layer_scores(n_layers, rows, args, scores)",
      guarded: [
        [6, 14],
        [25, 25],
        [44, 48],
      ],
    });
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("imports without running the script, and runs as a script as before", async () => {
    const dir = await tempDir("guard");
    await writeFile(join(dir, "rows.json"), JSON.stringify(rows));
    await mkdir(join(dir, "a"));
    await mkdir(join(dir, "b"));
    await writeFile(join(dir, "a", "layer_scores.py"), await fixture("layer_scores.py"));
    await writeFile(join(dir, "b", "layer_scores.py"), (await extractFunction(await fixture("layer_scores.py"), scoresStep)).source);
    const run = (sub: string): Promise<string> =>
      runPython(
        `import runpy, sys\nsys.argv = ['layer_scores.py', 'rows.json']\nrunpy.run_path(${JSON.stringify(join(dir, sub, "layer_scores.py"))}, run_name='__main__')`,
        dir,
      );
    const before = await run("a");
    expect(before).toContain('"scores": [');
    expect(await run("b")).toBe(before);
    // Imported with no arguments at all: argparse would exit if the script ran.
    const imported = await runPython(
      `import sys, json, argparse\nsys.argv = ['x']\nsys.path.insert(0, ${JSON.stringify(join(dir, "b"))})\nimport layer_scores as m\nprint(json.dumps(m.layer_scores(2, json.load(open('rows.json')), argparse.Namespace(rule='centroid'), [])))`,
      dir,
    );
    const expected = JSON.parse(before.split("\n").pop()!).scores;
    expect(JSON.parse(imported)).toEqual(expected);
  });

  it('extracts a branch of an `if` inside `if __name__ == "__main__":`, leaving that block as it is', async () => {
    const r = await extractFunction(await fixture("experiments.py"), exp1Step);
    expect(r.source).toBe(await fixture("experiments.exp1.expected.py"));
    expect(r).toMatchObject({ start_line: 17, end_line: 20, def_line: 9, call: "feat = run_exp1(args, layers, SCALE)", guarded: [[6, 7]] });
    const dir = await tempDir("guard");
    await writeFile(join(dir, "experiments.py"), r.source);
    await writeFile(join(dir, "original.py"), await fixture("experiments.py"));
    const imported = await runPython(
      "import sys, argparse, json\nsys.argv = ['x', '--bad-flag']\nimport experiments as m\nprint(json.dumps(m.run_exp1(argparse.Namespace(layer=2), [[1.0, -2.0], [3.0, -4.5]], 2.0)))",
      dir,
    );
    expect(imported.split("\n")).toEqual(['{"layer": 1, "feat": [6.0, 9.0]}', "[6.0, 9.0]"]);
    for (const args of [["--exp1", "--layer", "3"], ["--exp2"]]) {
      const run = (file: string): Promise<string> =>
        runPython(`import runpy, sys\nsys.argv = ['p'] + ${JSON.stringify(args)}\nrunpy.run_path(${JSON.stringify(file)}, run_name='__main__')`, dir);
      expect(await run("experiments.py")).toBe(await run("original.py"));
    }
  });
});

describe("extract-function main_guard errors", () => {
  it("refuses main_guard when there is no script code to guard", async () => {
    const err = await failure(await fixture("train.py"), {
      within: "main",
      start: { anchor: "# exponential" },
      end: { anchor: "summary = " },
      name: "ema_by_label",
      params: ["rows", "alpha"],
      returns: ["counts", "summary"],
      main_guard: true,
    });
    expect(err.code).toBe("prepare/main-guard-empty");
    expect(err.pointer).toBe("/main_guard");
  });

  it("refuses a new function that reads a name only the script code binds, naming the upstream lines", async () => {
    const err = await failure(await fixture("experiments.py"), {
      start: { anchor: "layer_id = args.layer - 1" },
      end: { anchor: 'print(json.dumps({"layer"' },
      name: "run_exp1",
      params: ["args", "layers"],
      returns: ["feat"],
      main_guard: true,
    });
    expect(err.code).toBe("prepare/main-guard-unsafe");
    expect(err.message).toBe(
      "line 18: the new function run_exp1 reads 'SCALE', which only the script code binds (line 6): after importing the module it is undefined",
    );
    expect(err.pointer).toBe("/params");
    expect(err.hint).toBe("add 'SCALE' to params");
  });

  it("refuses when a definition that stays reads guarded names as it is defined", async () => {
    const src = [
      "import sys",
      "LIMIT = int(sys.argv[1])",
      "",
      "",
      "def clip(v, hi=LIMIT):",
      "    return min(v, hi)",
      "",
      "",
      "total = 0",
      "for i in range(5):",
      "    total += clip(i)",
      "print(total)",
      "",
    ].join("\n");
    const err = await failure(src, { start: { line: 9 }, end: { line: 11 }, name: "clipped_sum", params: [], returns: ["total"], main_guard: true });
    expect(err.code).toBe("prepare/main-guard-unsafe");
    expect(err.message).toBe(
      "line 5: 'LIMIT' is read when the definition at line 5 runs (a decorator, default, base class or class body), but only the script code binds it (line 2): importing the module would fail",
    );
    expect(err.pointer).toBe("/main_guard");
  });

  it("refuses an import and script code on one line", async () => {
    const src = "import os; home = os.getcwd()\nn = len(home)\nprint(n)\n";
    const err = await failure(src, { start: { line: 2 }, end: { line: 2 }, name: "size", params: ["home"], returns: ["n"], main_guard: true });
    expect(err.code).toBe("prepare/main-guard-unsafe");
    expect(err.message).toBe("line 1 holds top-level code to guard and a statement that stays (import) on one line");
  });

  it("names the step when applied from a manifest", async () => {
    const tree = await tempDir("guard-tree");
    await writeFile(join(tree, "train.py"), await fixture("train.py"));
    const err = await applyPrepareSteps(
      tree,
      [
        {
          kind: "extract-function",
          file: "train.py",
          within: "main",
          start: { anchor: "# exponential" },
          end: { anchor: "summary = " },
          name: "ema",
          params: ["rows", "alpha"],
          returns: ["counts", "summary"],
          main_guard: true,
        },
      ],
      { file: "task.json" },
    ).then(
      () => undefined,
      (e: unknown) => e as LmrError,
    );
    expect(err?.pointer).toBe("/prepare/0/main_guard");
    expect(err?.message).toMatch(/^prepare step 0 \(extract-function\): main_guard is true but the module has no top-level code to guard/);
  });
});

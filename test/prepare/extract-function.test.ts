import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
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
    await writeFile(join(dir, "rows.jsonl"), ['{"label": "a", "score": 1}', '{"label": "b", "score": 2.5}', '{"label": "a", "score": 3}', '{"label": "c", "score": -1}', '{"label": "a", "score": 0.25}'].join("\n") + "\n");
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
    const src = ["import sys", "", "", "if __name__ == '__main__':", "    n = int(sys.argv[1])", "    total = 0", "    for i in range(n):", "        total += i * i", "    print(total)", ""].join("\n");
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
    expect(r.source).toBe('def g(x):\r\n\tmsg = """a\r\n  b"""\r\n\ty = len(msg) + x\r\n\treturn y\r\n\r\n\r\ndef f(x):\r\n\tif x:\r\n\t\ty = g(x)\r\n\t\treturn y\r\n\treturn 0\r\n');
    expect(await compileError(r.source)).toBeUndefined();
  });

  it("uses cls and @classmethod when extracting from a classmethod as a method", async () => {
    const src = "class A:\n    @classmethod\n    def make(cls, n):\n        parts = [cls.__name__] * n\n        name = '-'.join(parts)\n        return name\n";
    const r = await extractFunction(src, { within: "A.make", start: { line: 4 }, end: { line: 5 }, name: "join", params: ["n"], returns: ["name"], as_method: true });
    expect(r.source).toBe(
      "class A:\n    @classmethod\n    def make(cls, n):\n        name = cls.join(n)\n        return name\n\n    @classmethod\n    def join(cls, n):\n        parts = [cls.__name__] * n\n        name = '-'.join(parts)\n        return name\n",
    );
    expect(r.def_line).toBe(8);
  });
});

describe("extract-function errors", () => {
  it("rejects a block that crosses indentation levels", async () => {
    const err = await failure(await fixture("mcts.py"), { ...selectStep, start: { anchor: "best_score, best_child = -math.inf" }, end: { anchor: "path.append(node)", occurrence: 2 } });
    expect(err.code).toBe("prepare-block-crosses-indentation");
    expect(err.message).toBe("lines 31-45 are not whole statements at one indentation level: line 45 is outside the block that line 31 belongs to (it ends at line 37)");
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
    expect(err.code).toBe("prepare-anchor-not-found");
    expect(err.message).toBe('start anchor "self.rng = random.Random": no line contains it in MCTS.search (lines 24-50)');
    expect(err.pointer).toBe("/start/anchor");
    const err2 = await failure(mcts, { ...selectStep, end: { anchor: "path.append(node)", occurrence: 3 } });
    expect(err2.message).toBe('end anchor "path.append(node)" (occurrence 3): only 2 line(s) contain it in MCTS.search (lines 24-50)');
  });

  it("refuses a block containing return, or a break of an outer loop", async () => {
    const src = "def f(xs):\n    for x in xs:\n        if x > 2:\n            break\n        y = x\n    if not xs:\n        return None\n    return y\n";
    const ret = await failure(src, { within: "f", start: { line: 6 }, end: { line: 7 }, name: "g", params: ["xs"], returns: [] });
    expect(ret.code).toBe("prepare-block-escapes");
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
    const err2 = await failure(train, { within: "main", start: { anchor: "ema = {}" }, end: { anchor: "ema = {}" }, name: "g", params: [], returns: ["ema"], as_method: true });
    expect(err2.message).toBe("as_method is true but main is not a method of a class");
  });

  it("refuses a name that is taken where the function goes or is called", async () => {
    const train = await fixture("train.py");
    const spec = { within: "main", start: { anchor: "# exponential" }, end: { anchor: "summary = " }, params: ["rows", "alpha"], returns: ["counts", "summary"] };
    expect((await failure(train, { ...spec, name: "load" })).message).toBe("'load' is already bound at module level (line 6)");
    expect((await failure(train, { ...spec, name: "parser" })).message).toBe("'parser' is already a local name of main, so the call would not reach the new function (line 12)");
    expect((await failure(train, { ...spec, name: "class" })).message).toBe('name "class" is not a Python identifier');
  });
});

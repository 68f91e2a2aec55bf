import { describe, expect, it } from "vitest";
import { LmrError } from "../../core/errors.js";
import { PythonMasker } from "./masker.js";
import type { MaskSpec } from "../types.js";

const masker = new PythonMasker();
const lines = (...ls: string[]): string => ls.join("\n") + "\n";

async function maskOne(source: string, symbol: string, extra: Partial<MaskSpec> = {}): Promise<string> {
  return (await masker.mask(source, [{ symbol, mode: "body", ...extra }])).source;
}

async function maskError(source: string, specs: MaskSpec[]): Promise<LmrError> {
  try {
    await masker.mask(source, specs, "m.py");
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected an LmrError");
}

describe("mode body", () => {
  it("keeps signature and docstring, replaces the rest", async () => {
    const src = lines("import os", "", "def f(a, b=2):", '    """Add."""', "    c = a + b", "    return c", "", "x = 1");
    expect(await maskOne(src, "f")).toBe(
      lines("import os", "", "def f(a, b=2):", '    """Add."""', "    # TODO: implement f", "    raise NotImplementedError", "", "x = 1"),
    );
  });

  it("handles async defs, decorators and multi-line signatures", async () => {
    const src = lines(
      "@decorator(",
      "    option=True,",
      ")",
      "@other",
      "async def fetch(",
      "    url: str,",
      "    *,",
      "    timeout: float = 1.0,",
      ") -> bytes:",
      "    data = await get(url)",
      "    return data",
    );
    expect(await maskOne(src, "fetch")).toBe(
      lines(
        "@decorator(",
        "    option=True,",
        ")",
        "@other",
        "async def fetch(",
        "    url: str,",
        "    *,",
        "    timeout: float = 1.0,",
        ") -> bytes:",
        "    # TODO: implement fetch",
        "    raise NotImplementedError",
      ),
    );
  });

  it("moves a one-line body onto its own lines, one indent unit deeper", async () => {
    const src = lines("class A:", "  def g(self):", "    pass", "  def f(self, x): return x", "y = 2");
    expect(await maskOne(src, "A.f")).toBe(
      lines("class A:", "  def g(self):", "    pass", "  def f(self, x):", "    # TODO: implement A.f", "    raise NotImplementedError", "y = 2"),
    );
    expect(await maskOne(lines('def f(): "Doc."; return 1'), "f")).toBe(
      lines("def f():", '    "Doc."', "    # TODO: implement f", "    raise NotImplementedError"),
    );
    expect(await maskOne("def f(x): return x", "f")).toBe("def f(x):\n    # TODO: implement f\n    raise NotImplementedError");
  });

  it("appends the TODO to a docstring-only body", async () => {
    const src = lines("def f():", "    '''Only a docstring.'''", "", "def g():", "    pass");
    expect(await maskOne(src, "f")).toBe(
      lines("def f():", "    '''Only a docstring.'''", "    # TODO: implement f", "    raise NotImplementedError", "", "def g():", "    pass"),
    );
  });

  it("masks a nested function alone", async () => {
    const src = lines("def outer(n):", "    def inner(k):", "        return k * n", "    return inner(2)");
    expect(await maskOne(src, "outer.inner")).toBe(
      lines("def outer(n):", "    def inner(k):", "        # TODO: implement outer.inner", "        raise NotImplementedError", "    return inner(2)"),
    );
  });

  it("treats staticmethod and classmethod as methods", async () => {
    const src = lines("class A:", "    @staticmethod", "    def s(x):", "        return x", "    @classmethod", "    def c(cls):", "        return cls()");
    expect(await maskOne(src, "A.c")).toBe(
      lines("class A:", "    @staticmethod", "    def s(x):", "        return x", "    @classmethod", "    def c(cls):", "        # TODO: implement A.c", "        raise NotImplementedError"),
    );
  });

  it("masks leading comments of the body and keeps a dedented trailing comment", async () => {
    const src = lines("def f():  # keep", "    # how it works", "    return 1", "# about g", "def g():", "    pass");
    expect(await maskOne(src, "f")).toBe(
      lines("def f():  # keep", "    # TODO: implement f", "    raise NotImplementedError", "# about g", "def g():", "    pass"),
    );
  });

  it("keeps CRLF line endings", async () => {
    const src = "def f(x):\r\n    \"\"\"Doc.\"\"\"\r\n    return x\r\n\r\ndef g(): return 1\r\n";
    const out = await maskOne(await maskOne(src, "f"), "g");
    expect(out).toBe(
      'def f(x):\r\n    """Doc."""\r\n    # TODO: implement f\r\n    raise NotImplementedError\r\n\r\ndef g():\r\n    # TODO: implement g\r\n    raise NotImplementedError\r\n',
    );
    expect(out.replace(/\r\n/g, "")).not.toContain("\n");
  });

  it("keeps tab indentation", async () => {
    const src = "class A:\n\tdef f(self):\n\t\tx = 1\n\t\treturn x\n\tdef g(self): return 2\n";
    expect(await maskOne(src, "A.f")).toBe("class A:\n\tdef f(self):\n\t\t# TODO: implement A.f\n\t\traise NotImplementedError\n\tdef g(self): return 2\n");
    expect(await maskOne(src, "A.g")).toBe("class A:\n\tdef f(self):\n\t\tx = 1\n\t\treturn x\n\tdef g(self):\n\t\t# TODO: implement A.g\n\t\traise NotImplementedError\n");
  });

  it("reports UTF-8 byte ranges after non-ASCII text", async () => {
    const src = lines('NAME = "héllo wörld ✓ 😀"', "def ƒ(α):", "    β = α * 2", "    return β");
    const result = await masker.mask(src, [{ symbol: "ƒ", mode: "body" }]);
    expect(result.source).toBe(lines('NAME = "héllo wörld ✓ 😀"', "def ƒ(α):", "    # TODO: implement ƒ", "    raise NotImplementedError"));
    const t = result.targets[0]!;
    expect(t.reference).toEqual(["    β = α * 2\n    return β"]);
    const [start, end] = t.byte_ranges[0]!;
    const bytes = Buffer.from(src, "utf8");
    expect(bytes.subarray(start, end).toString("utf8")).toBe(t.reference[0]);
    expect(start).toBe(Buffer.byteLength(src.slice(0, src.indexOf("    β")), "utf8"));
    expect(start).not.toBe(src.indexOf("    β"));
    expect([t.start_line, t.end_line]).toEqual([2, 4]);
  });

  it("counts defs inside if/try/with as defined in the enclosing scope", async () => {
    const src = lines(
      "import sys",
      "if sys.platform == 'win32':",
      "    def path():",
      "        return 'C:'",
      "else:",
      "    def path():",
      "        return '/'",
      "try:",
      "    with open('x') as fh:",
      "        def reader():",
      "            return fh.read()",
      "except OSError:",
      "    pass",
    );
    expect(await maskOne(src, "reader")).toContain("        def reader():\n            # TODO: implement reader\n            raise NotImplementedError\n");
    const err = await maskError(src, [{ symbol: "path", mode: "body" }]);
    expect(err.code).toBe("mask/ambiguous-symbol");
    expect(err.message).toContain("line 3, line 6");
    expect(await maskOne(src, "path", { line: 6 })).toContain("else:\n    def path():\n        # TODO: implement path\n");
  });
});

describe("locating symbols", () => {
  const props = lines(
    "class Box:",
    "    @property",
    "    def size(self):",
    "        return self._size",
    "",
    "    @size.setter",
    "    def size(self, value):",
    "        self._size = value",
  );

  it("reports a getter/setter pair as ambiguous until a line picks one", async () => {
    const err = await maskError(props, [{ symbol: "Box.size", mode: "body" }]);
    expect(err.code).toBe("mask/ambiguous-symbol");
    expect(err.message).toContain("line 3, line 7");
    const byDef = await maskOne(props, "Box.size", { line: 7 });
    const byDecorator = await maskOne(props, "Box.size", { line: 6 });
    expect(byDef).toBe(byDecorator);
    expect(byDef).toContain("        return self._size\n");
    expect(byDef).toContain("    def size(self, value):\n        # TODO: implement Box.size\n        raise NotImplementedError\n");
    const wrong = await maskError(props, [{ symbol: "Box.size", mode: "body", line: 4 }]);
    expect(wrong.code).toBe("mask/symbol-not-found");
  });

  it("suggests the closest names for an unknown symbol", async () => {
    const src = lines("class Model:", "    def forward(self):", "        pass", "    def backward(self):", "        pass", "def forwards():", "    pass");
    const err = await maskError(src, [{ symbol: "Model.foward", mode: "body" }]);
    expect(err.code).toBe("mask/symbol-not-found");
    expect(err.kind).toBe("input");
    expect(err.file).toBe("m.py");
    expect(err.message).toContain("closest: Model.forward (line 2)");
    const bare = await maskError(src, [{ symbol: "forward", mode: "body" }]);
    expect(bare.message).toMatch(/closest: Model\.forward \(line 2\)/);
  });

  it("rejects an input that does not parse", async () => {
    const err = await maskError("def f(:\n    pass\n", [{ symbol: "f", mode: "body" }]);
    expect(err.code).toBe("mask/parse-error");
    expect(err.message).toContain("line 1");
  });
});

describe("mode region", () => {
  const src = lines(
    "def train(model, data):",
    '    """Train."""',
    "    opt = make_opt(model)",
    "    for batch in data:",
    "        loss = model(batch)",
    "        loss.backward()",
    "        opt.step()",
    "    return model",
  );

  it("masks whole statements given by line numbers", async () => {
    const out = await masker.mask(src, [{ symbol: "train", mode: "region", region: { start: { line: 5 }, end: { line: 6 } } }]);
    expect(out.source).toBe(
      lines(
        "def train(model, data):",
        '    """Train."""',
        "    opt = make_opt(model)",
        "    for batch in data:",
        "        # TODO: implement train",
        "        raise NotImplementedError",
        "        opt.step()",
        "    return model",
      ),
    );
    expect(out.targets[0]!.reference).toEqual(["        loss = model(batch)\n        loss.backward()"]);
  });

  it("masks lines found by anchors, the outer statement when it fits", async () => {
    const out = await maskOne(src, "train", { mode: "region", region: { start: { anchor: "for batch" }, end: { anchor: "opt.step" } } });
    expect(out).toBe(
      lines("def train(model, data):", '    """Train."""', "    opt = make_opt(model)", "    # TODO: implement train", "    raise NotImplementedError", "    return model"),
    );
    const second = await maskOne(src, "train", { mode: "region", region: { start: { anchor: "model", occurrence: 3 }, end: { line: 5 } } });
    expect(second).toContain("    for batch in data:\n        # TODO: implement train\n        raise NotImplementedError\n        loss.backward()\n");
  });

  it("rejects partial statements and lines outside the body", async () => {
    const multi = lines("def f():", "    x = compute(", "        1,", "    )", "    return x");
    const partial = await maskError(multi, [{ symbol: "f", mode: "region", region: { start: { line: 2 }, end: { line: 3 } } }]);
    expect(partial.code).toBe("mask/bad-region");
    expect(partial.message).toContain("whole statements");
    const outside = await maskError(multi, [{ symbol: "f", mode: "region", region: { start: { line: 1 }, end: { line: 2 } } }]);
    expect(outside.message).toContain("not inside the body");
    const anchor = await maskError(multi, [{ symbol: "f", mode: "region", region: { start: { anchor: "nowhere" }, end: { line: 5 } } }]);
    expect(anchor.code).toBe("mask/anchor-not-found");
  });

  it("refuses an unknown mode, a region outside mode region, and mode region without a region", async () => {
    const src = lines("def f():", "    return 1");
    const unknown = await maskError(src, [{ symbol: "f", mode: "lines" as MaskSpec["mode"] }]);
    expect([unknown.code, unknown.pointer]).toEqual(["mask/bad-mode", "f"]);
    const stray = await maskError(src, [{ symbol: "f", mode: "body", region: { start: { line: 2 }, end: { line: 2 } } }]);
    expect(stray.code).toBe("mask/bad-mode");
    const bare = await maskError(src, [{ symbol: "f", mode: "region" }]);
    expect([bare.code, bare.hint]).toEqual(["mask/bad-region", "give region {start, end}"]);
  });
});

describe("mode class", () => {
  it("masks every method, nested classes too, and keeps attributes and the docstring", async () => {
    const src = lines(
      "class Net(Base):",
      '    """A net."""',
      "    width = 4",
      "",
      "    def __init__(self):",
      "        self.w = 1",
      "",
      "    @property",
      "    def depth(self): return 2",
      "",
      "    class Config:",
      "        name = 'c'",
      "        def load(self):",
      "            return {}",
      "",
      "x = Net()",
    );
    const result = await masker.mask(src, [{ symbol: "Net", mode: "class" }]);
    expect(result.source).toBe(
      lines(
        "class Net(Base):",
        '    """A net."""',
        "    width = 4",
        "",
        "    def __init__(self):",
        "        # TODO: implement Net.__init__",
        "        raise NotImplementedError",
        "",
        "    @property",
        "    def depth(self):",
        "        # TODO: implement Net.depth",
        "        raise NotImplementedError",
        "",
        "    class Config:",
        "        name = 'c'",
        "        def load(self):",
        "            # TODO: implement Net.Config.load",
        "            raise NotImplementedError",
        "",
        "x = Net()",
      ),
    );
    expect(result.targets[0]!.reference).toEqual(["        self.w = 1", " return 2", "            return {}"]);
    expect(result.targets[0]!.byte_ranges).toHaveLength(3);
  });

  it("rejects the wrong mode for the kind of symbol", async () => {
    const src = lines("class A:", "    x = 1", "def f():", "    pass");
    expect((await maskError(src, [{ symbol: "A", mode: "class" }])).code).toBe("mask/nothing-to-mask");
    expect((await maskError(src, [{ symbol: "A", mode: "body" }])).code).toBe("mask/wrong-mode");
    expect((await maskError(src, [{ symbol: "f", mode: "class" }])).code).toBe("mask/wrong-mode");
  });
});

describe("several targets", () => {
  const src = lines("def a():", "    return 1", "", "def b():", "    def c():", "        return 3", "    return c()", "", "def d(): return 4");

  it("masks bottom-up and records each target", async () => {
    const result = await masker.mask(src, [
      { symbol: "a", mode: "body" },
      { symbol: "d", mode: "body" },
      { symbol: "b.c", mode: "body" },
    ]);
    expect(result.source).toBe(
      lines(
        "def a():",
        "    # TODO: implement a",
        "    raise NotImplementedError",
        "",
        "def b():",
        "    def c():",
        "        # TODO: implement b.c",
        "        raise NotImplementedError",
        "    return c()",
        "",
        "def d():",
        "    # TODO: implement d",
        "    raise NotImplementedError",
      ),
    );
    expect(result.targets.map((t) => [t.symbol, t.start_line, t.end_line, t.reference[0]])).toEqual([
      ["a", 1, 2, "    return 1"],
      ["d", 9, 9, " return 4"],
      ["b.c", 5, 6, "        return 3"],
    ]);
  });

  it("rejects overlapping targets", async () => {
    const nested = await maskError(src, [
      { symbol: "b", mode: "body" },
      { symbol: "b.c", mode: "body" },
    ]);
    expect(nested.code).toBe("mask/overlapping-targets");
    const twice = await maskError(src, [
      { symbol: "a", mode: "body" },
      { symbol: "a", mode: "body" },
    ]);
    expect(twice.code).toBe("mask/overlapping-targets");
  });
});

describe("listSymbols", () => {
  it("lists functions, methods and classes with signature and docstring", async () => {
    const src = lines(
      "class A:",
      '    """Doc of A."""',
      "    @staticmethod",
      "    def m(",
      "        x,",
      "    ) -> int:",
      "        return x",
      "async def f(): pass",
      "def g():",
      "    f'not a docstring'",
    );
    const symbols = await masker.listSymbols(src);
    expect(symbols.map((s) => [s.name, s.kind, s.line, s.end_line, s.decorator_line])).toEqual([
      ["A", "class", 1, 7, undefined],
      ["A.m", "method", 4, 7, 3],
      ["f", "function", 8, 8, undefined],
      ["g", "function", 9, 10, undefined],
    ]);
    expect(symbols[0]!.docstring).toBe('"""Doc of A."""');
    expect(symbols[1]!.signature).toBe("def m(\n        x,\n    ) -> int:");
    expect(symbols[2]!.signature).toBe("async def f():");
    expect(symbols[3]!.docstring).toBeUndefined();
  });
});

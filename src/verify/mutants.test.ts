import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { LmrError } from "../core/errors.js";
import { findSyntaxError, parsePython } from "../lang/python-parser.js";
import { generateMutants, type Mutant, type MutantOperator } from "./mutants.js";

const ALL = { max: 10_000, seed: 7 };

/** The one line that differs between `a` and `b` (sources with the same line count). */
function changedLines(a: string, b: string): string[] {
  const x = a.split("\n");
  const y = b.split("\n");
  return y.filter((line, i) => line !== x[i]);
}

async function mutantsOf(body: string, symbol = "f"): Promise<Mutant[]> {
  return generateMutants(`def f(a, b, c):\n${body}\n`, [{ symbol }], ALL);
}

async function only(body: string, operator: MutantOperator): Promise<string[]> {
  const source = `def f(a, b, c):\n${body}\n`;
  const ms = (await generateMutants(source, [{ symbol: "f" }], ALL)).filter((m) => m.operator === operator);
  return ms.map((m) => changedLines(source, m.source).join("\n").trim());
}

describe("generateMutants: operators", () => {
  it("arith-swap: + - * / ** //", async () => {
    expect(await only("    return a + b - c * a / b ** c // a", "arith-swap")).toEqual([
      "return a - b - c * a / b ** c // a",
      "return a + b + c * a / b ** c // a",
      "return a + b - c / a / b ** c // a",
      "return a + b - c * a * b ** c // a",
      "return a + b - c * a / b * c // a",
      "return a + b - c * a / b ** c / a",
    ]);
  });

  it("cmp-flip: < >= > <= == != is / is not, in / not in", async () => {
    const got = await only("    return (a < b, a >= b, a > b, a <= b, a == b, a != b, a is b, a is not b, a in b, a not in b)", "cmp-flip");
    expect(
      got.map((l) =>
        l
          .slice(8, -1)
          .split(", ")
          .find((t, i) => t !== ["a < b", "a >= b", "a > b", "a <= b", "a == b", "a != b", "a is b", "a is not b", "a in b", "a not in b"][i]),
      ),
    ).toEqual(["a >= b", "a < b", "a <= b", "a > b", "a != b", "a == b", "a is not b", "a is b", "a not in b", "a in b"]);
  });

  it("bool-swap: and/or, not x → x, True/False", async () => {
    expect(await only("    return a and b or not c, True, False", "bool-swap")).toEqual([
      "return a or b or not c, True, False",
      "return a and b and not c, True, False",
      "return a and b or c, True, False",
      "return a and b or not c, False, False",
      "return a and b or not c, True, True",
    ]);
  });

  it("const-change: int n+1 (0 → 1), float x*1.5+0.1, string s → s_", async () => {
    expect(await only("    return 0, 41, 0x10, 1_000, 2.0, 0.0, 1e-3, 'k', f\"v{a}\", 3j", "const-change")).toEqual([
      "return 1, 41, 0x10, 1_000, 2.0, 0.0, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 42, 0x10, 1_000, 2.0, 0.0, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 41, 17, 1_000, 2.0, 0.0, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1001, 2.0, 0.0, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1_000, 3.1, 0.0, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1_000, 2.0, 0.1, 1e-3, 'k', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1_000, 2.0, 0.0, 0.1015, 'k', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1_000, 2.0, 0.0, 1e-3, 'k_', f\"v{a}\", 3j",
      "return 0, 41, 0x10, 1_000, 2.0, 0.0, 1e-3, 'k', f\"v{a}_\", 3j",
    ]);
  });

  it("unary-minus: dropped, and added to the right operand of * / // % **", async () => {
    expect(await only("    return -a + b * c", "unary-minus")).toEqual(["return a + b * c", "return -a + b * -c"]);
  });

  it("drop-statement: only when the block keeps another statement", async () => {
    expect(await only("    x = a\n    a.append(b)\n    if c:\n        y = 2\n    return x", "drop-statement")).toEqual(["pass", "pass"]);
    const ms = await mutantsOf("    x = a\n    a.append(b)\n    if c:\n        y = 2\n    return x");
    const dropped = ms.filter((m) => m.operator === "drop-statement").map((m) => m.line);
    expect(dropped).toEqual([2, 3]);
  });

  it("swap-args: first two positional arguments, keywords and splats stay", async () => {
    expect(await only("    return g(a, b, *c, key=1), h(a, a), k(a)", "swap-args")).toEqual(["return g(b, a, *c, key=1), h(a, a), k(a)"]);
  });

  it("return-none: return x → return None, bare and None returns untouched", async () => {
    expect(await only("    if a:\n        return\n    if b:\n        return None\n    return a, b", "return-none")).toEqual(["return None"]);
  });

  it("index-shift: integer indices and slice bounds +1, including negative ones", async () => {
    expect(await only("    return a[0] + a[-1] + a[1:3] + a[b]", "index-shift")).toEqual([
      "return a[1] + a[-1] + a[1:3] + a[b]",
      "return a[0] + a[0] + a[1:3] + a[b]",
      "return a[0] + a[-1] + a[2:3] + a[b]",
      "return a[0] + a[-1] + a[1:4] + a[b]",
    ]);
    // Index literals are index-shift points, not const-change ones as well.
    expect(await only("    return a[0]", "const-change")).toEqual([]);
  });

  it("aug-assign: += ↔ -=, *= ↔ /=", async () => {
    expect(await only("    a += 1\n    b *= 2\n    return a", "aug-assign")).toEqual(["a -= 1", "b /= 2"]);
  });
});

describe("generateMutants: scope", () => {
  const source = [
    "# café ☕ before the target: JS indices must not shift bytes",
    "def helper(x):",
    "    return x + 1",
    "",
    "class Model:",
    "    def forward(self, x, y=2):",
    '        """Docstring with a + b and 3 == 3, not a mutation point."""',
    "        z = x * y - 1",
    "        'a bare string'",
    "        return z",
    "",
    "    @staticmethod",
    "    def outer(v):",
    "        def inner(w):",
    "            return w - 1",
    "        return inner(v) > 0",
    "",
    "def tail(x):",
    "    return x * 2",
    "",
  ].join("\n");

  it("mutates only the target body: docstrings, bare strings and other functions untouched", async () => {
    const ms = await generateMutants(source, [{ symbol: "Model.forward" }], ALL);
    expect(ms.length).toBeGreaterThan(3);
    const lines = source.split("\n");
    for (const m of ms) {
      const out = m.source.split("\n");
      expect(out).toHaveLength(lines.length);
      for (const [i, line] of lines.entries()) if (i !== 7 && i !== 9) expect(out[i]).toBe(line);
      expect(m.symbol).toBe("Model.forward");
      expect(m.line === 8 || m.line === 10).toBe(true);
    }
  });

  it("finds nested and decorated targets by qualified name", async () => {
    const inner = await generateMutants(source, [{ symbol: "Model.outer.inner" }], ALL);
    expect(inner.map((m) => m.line)).toEqual(inner.map(() => 15));
    const outer = await generateMutants(source, [{ symbol: "Model.outer" }, { symbol: "Model.outer.inner" }], ALL);
    expect(outer.filter((m) => m.line === 15).every((m) => m.symbol === "Model.outer.inner")).toBe(true);
    expect(outer.some((m) => m.symbol === "Model.outer" && m.line === 16)).toBe(true);
    const whole = await generateMutants(source, [{ symbol: "Model" }], ALL);
    expect(new Set(whole.map((m) => m.line))).toEqual(new Set([8, 10, 15, 16]));
  });

  it("explains a missing target and an ambiguous one", async () => {
    const err = await generateMutants(source, [{ symbol: "Model.forwrd" }], ALL).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LmrError);
    expect((err as LmrError).code).toBe("mask/symbol-not-found");
    const twice = "def f():\n    return 1\n\ndef f():\n    return 2\n";
    const amb = await generateMutants(twice, [{ symbol: "f" }], ALL).catch((e: unknown) => e);
    expect((amb as LmrError).code).toBe("mask/ambiguous-symbol");
    const second = await generateMutants(twice, [{ symbol: "f", line: 4 }], ALL);
    expect(second.map((m) => m.source.split("\n")[4])).toEqual(["    return 3", "    return None"]);
  });

  it("does not drop the binding a nested nonlocal needs (Python would not compile it)", async () => {
    const src =
      "def f(items):\n    count = 0\n    seen = []\n    def bump():\n        nonlocal count\n        count += 1\n    bump()\n    return count, seen\n";
    const dropped = (await generateMutants(src, [{ symbol: "f" }], ALL)).filter((m) => m.operator === "drop-statement");
    expect(dropped.map((m) => m.description)).toEqual(["line 3: 'seen = []' → 'pass'", "line 6: 'count += 1' → 'pass'", "line 7: 'bump()' → 'pass'"]);
  });

  it("keeps CRLF line endings and tabs byte-identical outside the edit", async () => {
    const crlf = "def f(a):\r\n\tx = a + 1\r\n\treturn x\r\n";
    const ms = await generateMutants(crlf, [{ symbol: "f" }], ALL);
    const arith = ms.find((m) => m.operator === "arith-swap")!;
    expect(arith.source).toBe("def f(a):\r\n\tx = a - 1\r\n\treturn x\r\n");
  });
});

/** An original, realistic function: masked softmax cross-entropy with label smoothing. */
const REALISTIC = `import math


def smoothed_nll(logits, targets, smoothing=0.1, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood with label smoothing over rows of logits."""
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    losses = []
    for row, target in zip(logits, targets):
        if target == ignore_index:
            continue
        peak = max(row)
        shifted = [v - peak for v in row]
        log_norm = math.log(sum(math.exp(v) for v in shifted))
        log_probs = [v - log_norm for v in shifted]
        nll = -log_probs[target]
        uniform = -sum(log_probs) / len(log_probs)
        losses.append((1.0 - smoothing) * nll + smoothing * uniform)
    if not losses:
        return 0.0
    total = 0.0
    for loss in losses:
        total += loss
    if reduction == "sum":
        return total
    return total / len(losses) if reduction == "mean" and len(losses) > 1 else losses[0] ** 1
`;

describe("generateMutants: realistic function", () => {
  it("every mutant parses, differs, and compiles with real Python", async () => {
    const ms = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], ALL);
    expect(ms.length).toBeGreaterThan(40);
    expect(new Set(ms.map((m) => m.operator)).size).toBe(10);
    expect(new Set(ms.map((m) => m.id)).size).toBe(ms.length);
    expect(new Set(ms.map((m) => m.source)).size).toBe(ms.length);
    for (const m of ms) {
      expect(m.source).not.toBe(REALISTIC);
      const tree = await parsePython(m.source);
      expect(findSyntaxError(tree.rootNode), m.id).toBeUndefined();
      tree.delete();
    }
    const dir = await mkdtemp(join(tmpdir(), "lmr-mutants-"));
    try {
      const files = await Promise.all(
        ms.map(async (m) => {
          const file = join(dir, `${m.id}.py`);
          await writeFile(file, m.source);
          return file;
        }),
      );
      const python = process.env.LMR_PYTHON ?? "python3";
      const script = "import sys\nfor f in sys.argv[1:]:\n    compile(open(f, encoding='utf-8').read(), f, 'exec')\nprint(len(sys.argv) - 1)";
      const { stdout } = await execa(python, ["-c", script, ...files]);
      expect(Number(stdout.trim())).toBe(ms.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("is deterministic, respects max and spreads a sample over operators", async () => {
    const all = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], ALL);
    const a = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], { max: 12, seed: 42 });
    const b = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], { max: 12, seed: 42 });
    const c = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], { max: 12, seed: 43 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(12);
    expect(a.map((m) => m.id)).not.toEqual(c.map((m) => m.id));
    expect(new Set(a.map((m) => m.operator)).size).toBe(10);
    // A sampled mutant keeps the id it has in the full list, and the sample stays in source order.
    const byId = new Map(all.map((m) => [m.id, m.source]));
    for (const m of a) expect(byId.get(m.id)).toBe(m.source);
    expect(a.map((m) => all.findIndex((x) => x.id === m.id))).toEqual([...a.map((m) => all.findIndex((x) => x.id === m.id))].sort((x, y) => x - y));
    expect(await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], { max: 0, seed: 1 })).toEqual([]);
    await expect(generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], { max: -1, seed: 1 })).rejects.toThrow(/whole number/);
  });

  it("leaves the raise message and the docstring alone", async () => {
    const ms = await generateMutants(REALISTIC, [{ symbol: "smoothed_nll" }], ALL);
    for (const m of ms) {
      expect(m.source).toContain('"""Negative log-likelihood with label smoothing over rows of logits."""');
      expect(m.source).toContain('raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")');
    }
  });

  it("mutates a region target only inside its masked span", async () => {
    const src = "def f(a, b):\n    x = a + b\n    y = a * b\n    return x - y\n";
    const start = src.indexOf("    y =");
    const end = src.indexOf("\n", start) + 1;
    const inside = await generateMutants(src, [{ symbol: "f", spans: [[start, end]] }], ALL);
    expect(inside.length).toBeGreaterThan(0);
    expect(inside.every((m) => m.line === 3)).toBe(true);
    const everywhere = await generateMutants(src, [{ symbol: "f" }], ALL);
    expect(new Set(everywhere.map((m) => m.line))).toEqual(new Set([2, 3, 4]));
  });
});

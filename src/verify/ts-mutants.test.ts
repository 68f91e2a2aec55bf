import { describe, expect, it } from "vitest";
import { generateMutants, type MutantOperator } from "./mutants.js";

const ALL = { max: 1000, seed: 1 };
const ops = async (src: string, symbol: string, file = "m.ts"): Promise<[MutantOperator, string][]> =>
  (await generateMutants(src, [{ symbol }], ALL, file)).map((m) => [m.operator, m.description.replace(/^line \d+: /, "")]);

describe("generateMutants on TypeScript/JavaScript targets (ts-morph)", () => {
  it("mutates operators, constants, statements, arguments and returns inside the target only", async () => {
    const src = [
      "export function clip(xs: number[], lo: number, hi: number): number[] {",
      "  const out: number[] = [];",
      "  for (let i = 0; i < xs.length; i++) {",
      "    if (!(xs[i]! >= lo && xs[i]! <= hi)) continue;",
      "    out.push(Math.min(xs[i]! * 2, hi));",
      "  }",
      "  return out;",
      "}",
      "export function untouched(a: number): number { return a + 1; }",
      "",
    ].join("\n");
    const got = await ops(src, "clip");
    const kinds = new Set(got.map(([op]) => op));
    for (const op of [
      "const-change",
      "cmp-flip",
      "bool-swap",
      "aug-assign",
      "drop-statement",
      "swap-args",
      "arith-swap",
      "return-none",
      "index-shift",
    ] as MutantOperator[])
      expect(kinds, op).toContain(op);
    expect(got).toContainEqual(["cmp-flip", "'<' → '>='"]);
    expect(got).toContainEqual(["bool-swap", "'&&' → '||'"]);
    expect(got).toContainEqual(["drop-statement", "'continue;' → ';'"]);
    expect(got).toContainEqual(["swap-args", "'xs[i]! * 2, hi' → 'hi, xs[i]! * 2'"]);
    expect(got.some(([, d]) => d.includes("a + 1"))).toBe(false);
    // types are not code: no mutant touches `number[]`
    expect(got.some(([, d]) => d.includes("number[]"))).toBe(false);
  });

  it("every mutant parses, differs from the source and is stable for a seed", async () => {
    const src = "const score = (a, b) => a.length > 0 ? (a.length * 2 + b) / 3 : -b;\nexport default score;\n";
    const all = await generateMutants(src, [{ symbol: "score" }], ALL, "score.js");
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const m of all) expect(m.source).not.toBe(src);
    expect(new Set(all.map((m) => m.source)).size).toBe(all.length);
    const a = await generateMutants(src, [{ symbol: "score" }], { max: 3, seed: 7 }, "score.js");
    const b = await generateMutants(src, [{ symbol: "score" }], { max: 3, seed: 7 }, "score.js");
    expect(a.map((m) => m.id)).toEqual(b.map((m) => m.id));
    expect(a).toHaveLength(3);
  });

  it("a class target is every method of it; a console call is never dropped", async () => {
    const src =
      "export class Acc {\n  total = 0;\n  add(x: number): void {\n    console.log(x);\n    this.total += x;\n  }\n  get mean(): number { return this.total / 2; }\n}\n";
    const got = await ops(src, "Acc");
    expect(got).toContainEqual(["aug-assign", "'+=' → '-='"]);
    expect(got).toContainEqual(["arith-swap", "'/' → '*'"]);
    expect(got.some(([, d]) => d.includes("console.log"))).toBe(false);
  });

  it("an unknown symbol is an input error naming the closest", async () => {
    const err = await generateMutants("export function alpha() { return 1; }\n", [{ symbol: "alpah" }], ALL, "a.ts").catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/symbol "alpah" is not defined; closest: alpha/);
  });
});

import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LmrError } from "../../core/errors.js";
import { TsMasker } from "./masker.js";
import { checkTsTypes } from "./typecheck.js";

const ts = new TsMasker("ts");
const js = new TsMasker("js");
const lines = (...ls: string[]): string => ls.join("\n") + "\n";

const SOURCE = lines(
  "/** Adds. */",
  "export function add(a: number, b: number): number {",
  "  const s = a + b;",
  "  return s;",
  "}",
  "",
  "export class Box<T> {",
  "  constructor(private v: T) {}",
  "  /** the value */",
  "  get value(): T {",
  "    return this.v;",
  "  }",
  "  map<U>(f: (x: T) => U): Box<U> {",
  "    return new Box(f(this.v));",
  "  }",
  "}",
);

async function maskError(masker: TsMasker, source: string, symbol: string, file = "m.ts"): Promise<LmrError> {
  try {
    await masker.mask(source, [{ symbol, mode: "body" }], file);
  } catch (err) {
    if (err instanceof LmrError) return err;
    throw err;
  }
  throw new Error("expected an LmrError");
}

describe("TsMasker", () => {
  it("lists functions, classes and methods by qualified name with their lines", async () => {
    const symbols = await ts.listSymbols(SOURCE, "m.ts");
    expect(symbols.map((s) => [s.name, s.line])).toEqual([
      ["add", 2],
      ["Box", 7],
      ["Box.constructor", 8],
      ["Box.value", 10],
      ["Box.map", 13],
    ]);
  });

  it("replaces only the body: header, JSDoc and everything else byte for byte", async () => {
    const r = await ts.mask(
      SOURCE,
      [
        { symbol: "add", mode: "body" },
        { symbol: "Box.map", mode: "body" },
      ],
      "m.ts",
    );
    expect(r.source).toBe(
      SOURCE.replace("  const s = a + b;\n  return s;\n", '  // TODO: implement add\n  throw new Error("not implemented: add");\n').replace(
        "    return new Box(f(this.v));\n",
        '    // TODO: implement Box.map\n    throw new Error("not implemented: Box.map");\n',
      ),
    );
    expect(r.targets.map((t) => [t.symbol, t.start_line])).toEqual([
      ["add", 2],
      ["Box.map", 13],
    ]);
  });

  it("finds a region's lines by anchor from the header line on, and names an anchor that is not there", async () => {
    const src = lines("/** Sums. */", "export function total(xs: number[]): number {", "  let t = 0;", "  for (const x of xs) t += x;", "  return t;", "}");
    const r = await ts.mask(src, [{ symbol: "total", mode: "region", region: { start: { anchor: "for (const" }, end: { anchor: "t +=" } } }], "m.ts");
    expect(r.source).not.toContain("t += x");
    expect(r.source).toContain("  let t = 0;\n");
    expect(r.source).toContain("  return t;\n");
    expect(r.source.split("\n").slice(0, 3)).toEqual(src.split("\n").slice(0, 3));
    const err = await ts
      .mask(src, [{ symbol: "total", mode: "region", region: { start: { anchor: "t", occurrence: 9 }, end: { line: 4 } } }], "m.ts")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LmrError);
    expect((err as LmrError).code).toBe("mask/anchor-not-found");
    expect((err as LmrError).hint).toContain("from the header line");
  });

  it("refuses a region outside mode region, and mode region without a region, as the Python masker does", async () => {
    const rejection = (p: Promise<unknown>): Promise<LmrError> =>
      p.then(
        () => {
          throw new Error("expected an LmrError");
        },
        (e: unknown) => e as LmrError,
      );
    const stray = await rejection(ts.mask(SOURCE, [{ symbol: "add", mode: "body", region: { start: { line: 3 }, end: { line: 3 } } }], "m.ts"));
    expect([stray.code, stray.pointer]).toEqual(["mask/bad-mode", "add"]);
    const bare = await rejection(ts.mask(SOURCE, [{ symbol: "add", mode: "region" }], "m.ts"));
    expect(bare.code).toBe("mask/bad-region");
  });

  it("masks every method with a body in mode class", async () => {
    const r = await ts.mask(SOURCE, [{ symbol: "Box", mode: "class" }], "m.ts");
    expect(r.source).toContain('throw new Error("not implemented: Box.value")');
    expect(r.source).toContain('throw new Error("not implemented: Box.map")');
    expect(r.source).not.toContain("return this.v;");
    expect(r.source).toContain('throw new Error("not implemented: Box.constructor")');
    expect(r.source).toContain("return s;"); // add is not in the class
  });

  it("masks JavaScript with the same rules", async () => {
    const src = lines("export function mergeStep(pairs, ranks) {", "  return pairs.filter((p) => ranks.has(p));", "}");
    const r = await js.mask(src, [{ symbol: "mergeStep", mode: "body" }], "bpe.mjs");
    expect(r.source).toBe(
      lines("export function mergeStep(pairs, ranks) {", "  // TODO: implement mergeStep", '  throw new Error("not implemented: mergeStep");', "}"),
    );
  });

  it("names the closest symbols for an unknown name", async () => {
    const err = await maskError(ts, SOURCE, "Box.mapp");
    expect(err.message).toMatch(/"Box\.mapp" is not defined; closest: Box\.map/);
  });

  it("refuses a source with a syntax error", async () => {
    const err = await maskError(ts, "export function f( {\n", "f");
    expect(err.kind).toBe("input");
  });

  it("a masked file adds no type error to its project; a broken edit would", async () => {
    const dir = await mkdtemp(join(tmpdir(), "lmr-ts-mask-"));
    await writeFile(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "es2022" }, include: ["*.ts"] }),
    );
    await writeFile(join(dir, "m.ts"), SOURCE);
    await writeFile(join(dir, "use.ts"), 'import { add, Box } from "./m";\nexport const n: number = add(1, 2) + new Box(3).map((x) => x + 1).value;\n');
    const masked = (
      await ts.mask(
        SOURCE,
        [
          { symbol: "add", mode: "body" },
          { symbol: "Box", mode: "class" },
        ],
        join(dir, "m.ts"),
      )
    ).source;
    const good = await checkTsTypes(join(dir, "m.ts"), masked);
    expect(good?.added).toEqual([]);
    const bad = await checkTsTypes(join(dir, "m.ts"), SOURCE.replace("): number {", "): string {"));
    expect(bad?.added.length).toBeGreaterThan(0);
  });
});

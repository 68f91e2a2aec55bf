import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TsMasker } from "./masker.js";
import { finishTypeCheck, formatTypeProblem, openTypeCheck } from "./typecheck.js";
import { createTsTypeOracle } from "./types.js";

const ts = new TsMasker("ts");
const js = new TsMasker("js");
const lines = (...ls: string[]): string => ls.join("\n") + "\n";

let root: string;
let cases = 0;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "lmr-ts-types-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Outcome {
  /** The masked file with the checker's stub. */
  masked: string;
  /** New type errors with the checker's stub, and with the plain one (`any`, or nothing). */
  added: string[];
  addedPlain: string[];
}

/** A project of our own files (strict), `symbol` of `main` masked with and without the type oracle, each result type-checked. */
async function maskIn(files: Record<string, string>, main: string, symbol: string, line?: number): Promise<Outcome> {
  const dir = join(root, `case-${++cases}`);
  await import("node:fs/promises").then((fs) => fs.mkdir(dir));
  const options = {
    strict: true,
    noEmit: true,
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    lib: ["es2022"],
    allowJs: true,
    checkJs: false,
  };
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: options, include: ["*.ts", "*.js"] }));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const file = join(dir, main);
  const source = files[main]!;
  const masker = main.endsWith(".js") ? js : ts;
  const spec = { symbol, mode: "body" as const, ...(line !== undefined ? { line } : {}) };
  const check = (await openTypeCheck(file))!;
  expect(check.before.map(formatTypeProblem), "our sources type-check before masking").toEqual([]);
  const masked = (await masker.mask(source, [spec], file, { types: createTsTypeOracle(check.morph, check.project, check.file) })).source;
  const added = finishTypeCheck(check, masked).added.map(formatTypeProblem);
  const plain = (await masker.mask(source, [spec], file)).source;
  const addedPlain = finishTypeCheck(check, plain).added.map(formatTypeProblem);
  return { masked, added, addedPlain };
}

/** The lines of the stub after its throw. */
function tail(masked: string, symbol: string): string[] {
  const all = masked.split("\n");
  const at = all.findIndex((l) => l.includes(`throw new Error("not implemented: ${symbol}")`));
  expect(at, "the stub throws").toBeGreaterThanOrEqual(0);
  const out: string[] = [];
  for (const l of all.slice(at + 1)) {
    if (/^\s*}/.test(l)) break;
    out.push(l.trim());
  }
  return out;
}

describe("type-preserving stubs", () => {
  it("keep a declaration's inferred object type (an any would leave a @ts-expect-error unused)", async () => {
    const src = lines(
      "export function make(n: number) {",
      "  return { n, label: String(n) };",
      "}",
      "// @ts-expect-error label is a string",
      "export const x: number = make(1).label;",
    );
    const r = await maskIn({ "m.ts": src }, "m.ts", "make");
    expect(tail(r.masked, "make")).toEqual(["return undefined as unknown as { n: number; label: string; };"]);
    expect(r.added).toEqual([]);
    expect(r.addedPlain.join("\n")).toMatch(/TS2578/);
  });

  it("keep what a generic call infers from a callback's expression body", async () => {
    const src = lines(
      "function configure<T>(o: { build: () => T }): T {",
      "  return o.build();",
      "}",
      "export const store = configure({ build: () => ({ has1: true as const }) });",
      "// @ts-expect-error has1 is true",
      "export const h: false = store.has1;",
    );
    const r = await maskIn({ "m.ts": src }, "m.ts", "build");
    expect(tail(r.masked, "build")).toEqual(["return undefined as unknown as { has1: true; };"]);
    expect(r.added).toEqual([]);
    expect(r.addedPlain.join("\n")).toMatch(/TS2578/);
  });

  it("keep an async function's promised type and a generator's three types", async () => {
    const src = lines(
      "export async function load() {",
      "  return { id: 1 };",
      "}",
      "export function* count() {",
      "  yield 1;",
      "  return 'done';",
      "}",
      "export async function use() {",
      "  // @ts-expect-error no name",
      "  (await load()).name;",
      "  // @ts-expect-error the value is number | string",
      "  const v: number = count().next().value;",
      "  return v;",
      "}",
    );
    const a = await maskIn({ "m.ts": src }, "m.ts", "load");
    expect(tail(a.masked, "load")).toEqual(["return undefined as unknown as { id: number; };"]);
    expect(a.added).toEqual([]);
    expect(a.addedPlain.join("\n")).toMatch(/TS2578/);
    const g = await maskIn({ "m.ts": src }, "m.ts", "count");
    expect(tail(g.masked, "count")).toEqual(["return yield* (undefined as unknown as Generator<number, string, unknown>);"]);
    expect(g.added).toEqual([]);
    expect(g.addedPlain.join("\n")).toMatch(/TS2578/);
  });

  it("keep an arrow's void (a body that only throws makes it never)", async () => {
    const src = lines(
      "declare function emit(m: string): void;",
      "export const log = (m: string) => {",
      "  emit(m);",
      "};",
      "// @ts-expect-error void is not a string",
      "export const y: string = log('a');",
    );
    const r = await maskIn({ "m.ts": src }, "m.ts", "log");
    expect(tail(r.masked, "log")).toEqual(["return;"]);
    expect(r.added).toEqual([]);
    expect(r.addedPlain.join("\n")).toMatch(/TS2578/);
  });

  it("keep the assignments to variables of the enclosing function (else: used before being assigned)", async () => {
    const src = lines(
      "export function last(values: number[], done: (v: number) => void): void {",
      "  let value: number;",
      "  const keep = (v: number) => {",
      "    value = v;",
      "  };",
      "  const finish = () => done(value);",
      "  values.forEach(keep);",
      "  finish();",
      "}",
    );
    const r = await maskIn({ "m.ts": src }, "m.ts", "last.keep");
    expect(tail(r.masked, "last.keep")).toEqual(["return;", "value = undefined as never;"]);
    expect(r.added).toEqual([]);
    expect(r.addedPlain.join("\n")).toMatch(/TS2454/);
  });

  it('write other modules\' types as import("./m").T, type parameters and this as they are', async () => {
    const types = lines("export interface Thing {", "  id: number;", "}", "export function makeThing(): Thing {", "  return { id: 1 };", "}");
    const src = lines(
      'import { makeThing } from "./types";',
      "export const wrap = () => makeThing();",
      "export function pair<T>(x: T) {",
      "  return [x, x] as const;",
      "}",
      "export class Chain {",
      "  chain() {",
      "    return this;",
      "  }",
      "}",
      "export class Sub extends Chain {",
      "  only = 1;",
      "}",
      "export const n: number = new Sub().chain().only + wrap().id + pair(1)[1];",
      "// @ts-expect-error a Sub has no such member",
      "new Sub().chain().missing;",
    );
    const w = await maskIn({ "types.ts": types, "m.ts": src }, "m.ts", "wrap");
    expect(tail(w.masked, "wrap")).toEqual(['return undefined as unknown as import("./types").Thing;']);
    expect(w.added).toEqual([]);
    const p = await maskIn({ "types.ts": types, "m.ts": src }, "m.ts", "pair");
    expect(tail(p.masked, "pair")).toEqual(["return undefined as unknown as readonly [T, T];"]);
    expect(p.added).toEqual([]);
    const c = await maskIn({ "types.ts": types, "m.ts": src }, "m.ts", "Chain.chain");
    expect(tail(c.masked, "Chain.chain")).toEqual(["return undefined as unknown as this;"]);
    expect(c.added).toEqual([]);
    expect(c.addedPlain.join("\n")).toMatch(/TS2578/);
  });

  it("fall back to any where the type cannot be written outside the body, or does not resolve there", async () => {
    const hidden = lines("interface Hidden {", "  x: number;", "}", "export function get(): Hidden {", "  return { x: 1 };", "}");
    const src = lines(
      'import { get } from "./hidden";',
      "export const g = () => get();",
      "export function box() {",
      "  interface Local {",
      "    v: number;",
      "  }",
      "  const l: Local = { v: 1 };",
      "  return l;",
      "}",
    );
    const b = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "box");
    expect(tail(b.masked, "box")).toEqual(["return undefined as any;"]);
    expect(b.added).toEqual([]);
    // the checker writes the unexported interface as `Hidden`, which names nothing in m.ts: the stub has an error, so any
    const g = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "g");
    expect(tail(g.masked, "g")).toEqual(["return undefined as any;"]);
    expect(g.added).toEqual([]);
  });

  it("write a class by its name, never as a type literal (one loses the private members that set it apart)", async () => {
    const hidden = lines(
      "class Secret {",
      "  private readonly tag = 's';",
      "  constructor(public v: number) {}",
      "}",
      "export function make() {",
      "  return new Secret(1);",
      "}",
      "export function take(s: ReturnType<typeof make>): number {",
      "  return s.v;",
      "}",
    );
    const src = lines('import { make, take } from "./hidden";', "export const wrap = () => make();", "export const n: number = take(wrap());");
    const r = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "wrap");
    // `Secret` is not exported: the name does not resolve in m.ts, so any; `{ readonly tag: any; v: number; }` would not pass to take
    expect(tail(r.masked, "wrap")).toEqual(["return undefined as any;"]);
    expect(r.added).toEqual([]);
  });

  it("write an empty mapped type in an intersection as one, not as {} (the checker drops a written {} there, and the type is another)", async () => {
    // redux toolkit's rejected meta, `{ rejectedWithValue: false } & { [K in keyof GetRejectedMeta<C>]?: undefined }`, with no rejectedMeta
    const hidden = lines(
      "type Meta<C> = { ok: false } & { [K in keyof C]?: undefined };",
      "export function rejected<C>(c: C): Meta<C> {",
      "  return { ok: false } as Meta<C>;",
      "}",
      "export interface Base {",
      "  ok: false;",
      "}",
      "type BaseMeta<C> = Base & { [K in keyof C]?: undefined };",
      "export function based<C>(c: C): BaseMeta<C> {",
      "  return { ok: false } as BaseMeta<C>;",
      "}",
    );
    const src = lines(
      'import { based, rejected } from "./hidden";',
      "type Eq<L, R> = (<T>() => T extends (L & T) | T ? true : false) extends <T>() => T extends (R & T) | T ? true : false ? true : false;",
      "export const r = () => rejected<unknown>(undefined);",
      "export const same: Eq<ReturnType<typeof r>, ReturnType<typeof rejected<unknown>>> = true;",
      "export const b = () => based<unknown>(undefined);",
      "export const sameBased: Eq<ReturnType<typeof b>, ReturnType<typeof based<unknown>>> = true;",
      "export function nonNull<T>(x: T) {",
      "  return x as T & {};",
      "}",
    );
    const m = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "r");
    expect(tail(m.masked, "r")).toEqual(["return undefined as unknown as { ok: false; } & { [K in never]: never; };"]);
    expect(m.added).toEqual([]);
    expect(m.addedPlain.join("\n")).toMatch(/TS2322/);
    // next to an interface by name
    const b = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "b");
    expect(tail(b.masked, "b")).toEqual(['return undefined as unknown as import("./hidden").Base & { [K in never]: never; };']);
    expect(b.added).toEqual([]);
    // `{}` that the checker keeps in an intersection (with a type parameter: NonNullable) is written as it is
    const n = await maskIn({ "hidden.ts": hidden, "m.ts": src }, "m.ts", "nonNull");
    expect(tail(n.masked, "nonNull")).toEqual(["return undefined as unknown as T & {};"]);
    expect(n.added).toEqual([]);
  });

  it("keep JavaScript stubs plain", async () => {
    const src = lines("export function make(n) {", "  return { n };", "}", "export const k = make(1).n;");
    const r = await maskIn({ "m.js": src }, "m.js", "make");
    expect(tail(r.masked, "make")).toEqual([]);
    expect(r.added).toEqual([]);
  });
});

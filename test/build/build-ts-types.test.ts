import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

/**
 * `lmr build` masks a TypeScript target as `lmr mask` does: with a tsconfig.json in the
 * workspace the stub ends with the type the body inferred (callers keep theirs), and the
 * workspace file is byte for byte what `lmr mask FILE --symbol NAME` prints for the same
 * file. A JavaScript target stays plain, and so does a .ts file with no tsconfig in the
 * workspace, even where one sits above the bundle.
 */
afterAll(removeTempDirs);

const TSCONFIG = JSON.stringify({
  compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler", lib: ["es2022"], allowJs: true },
  include: ["src/**/*"],
});
const SOURCES = {
  "src/other.ts": "export interface Box { v: number }\nexport function box(v: number): Box {\n  return { v };\n}\n",
  "src/make.ts": [
    'import { box } from "./other";',
    "export function make(n: number) {",
    "  return { n, label: String(n) };",
    "}",
    "export function wrap(v: number) {",
    "  return box(v);",
    "}",
    "export const twice = (n: number) => [make(n), make(n + 1)] as const;",
    "",
  ].join("\n"),
  "src/plain.js": "export function half(n) {\n  return n / 2;\n}\n",
};

async function task(root: string, withTsconfig: boolean): Promise<string> {
  // a local upstream needs the tasks to live in a project
  await writeFile(join(root, "package.json"), "{}\n");
  const upstream = join(root, "upstream");
  for (const [rel, text] of Object.entries({ ...SOURCES, ...(withTsconfig ? { "tsconfig.json": TSCONFIG } : {}) })) {
    await mkdir(join(upstream, rel, ".."), { recursive: true });
    await writeFile(join(upstream, rel), text);
  }
  const dir = join(root, "tasks", "ts-types");
  await mkdir(join(dir, "tests"), { recursive: true });
  await writeFile(join(dir, "instruction.md"), "Implement make, wrap and half.\n");
  await writeFile(join(dir, "tests", "make.test.ts"), 'import { test } from "node:test";\ntest("placeholder", () => {});\n');
  const manifest = {
    schema_version: 1,
    id: "ts-types",
    paper: { title: "A paper", url: "https://example.org/paper", year: 2024 },
    category: "Feature Learning & Representation",
    upstream: { path: "../../upstream", license: "MIT" },
    targets: [
      { file: "src/make.ts", symbol: "make", mode: "body" },
      { file: "src/make.ts", symbol: "wrap", mode: "body" },
      { file: "src/plain.js", symbol: "half", mode: "body" },
    ],
    instruction: "instruction.md",
    tests: { runner: "node-test", files: ["tests/make.test.ts"], timeout_per_test_s: 10, timeout_total_s: 60 },
    environment: { python: "3.11", requirements: [], gpu: false, network: false },
    provenance: { author: "lmr tests", created: "2026-12-04" },
  };
  await writeFile(join(dir, "task.json"), JSON.stringify(manifest, null, 2));
  return dir;
}

describe("lmr build: TypeScript stubs with the type checker", () => {
  it("writes the stub lmr mask gives for the same file: the inferred return types, resolvable from the file", async () => {
    const root = await makeTempDir("build-ts-types");
    const dir = await task(root, true);
    const out = join(root, "bundles");
    const built = await runCli(["build", dir, "--out", out]);
    expect(built.exitCode, built.stderr).toBe(0);
    const workspace = join(out, "ts-types", "workspace");
    const stub = await readFile(join(workspace, "src/make.ts"), "utf8");
    expect(stub).toContain(
      '  // TODO: implement make\n  throw new Error("not implemented: make");\n  return undefined as unknown as { n: number; label: string; };\n',
    );
    expect(stub).toMatch(/throw new Error\("not implemented: wrap"\);\n {2}return undefined as unknown as (import\("\.\/other"\)\.)?Box;\n/);
    const masked = await runCli(["mask", join(root, "upstream", "src/make.ts"), "--symbol", "make", "--symbol", "wrap", "--out", join(root, "make.masked.ts")]);
    expect(masked.exitCode, masked.stderr).toBe(0);
    expect(stub).toBe(await readFile(join(root, "make.masked.ts"), "utf8"));
    // JavaScript stays plain, as lmr mask leaves it
    const js = await readFile(join(workspace, "src/plain.js"), "utf8");
    expect(js).toBe('export function half(n) {\n  // TODO: implement half\n  throw new Error("not implemented: half");\n}\n');
    const maskedJs = await runCli(["mask", join(root, "upstream", "src/plain.js"), "--symbol", "half", "--out", join(root, "plain.masked.js")]);
    expect(maskedJs.exitCode, maskedJs.stderr).toBe(0);
    expect(await readFile(join(root, "plain.masked.js"), "utf8")).toBe(js);
  });

  it("without a tsconfig.json in the workspace returns any, even under a folder that has one", async () => {
    const root = await makeTempDir("build-ts-types-bare");
    // a project around the bundle (as lmr's own repository would be) must not be used
    await writeFile(join(root, "tsconfig.json"), TSCONFIG);
    const dir = await task(root, false);
    const out = join(root, "bundles");
    const built = await runCli(["build", dir, "--out", out]);
    expect(built.exitCode, built.stderr).toBe(0);
    const stub = await readFile(join(out, "ts-types", "workspace", "src/make.ts"), "utf8");
    expect(stub).toContain('  throw new Error("not implemented: make");\n  return undefined as any;\n');
  });
});

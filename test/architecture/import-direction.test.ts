import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { areaOf, backImports, importCircles, importSpecifiers, prefixMixes, readImportGraph } from "./import-graph.js";
import { LAYERS } from "./layers.js";

/*
 * Issue 26, item 1: src/'s folders follow the flow. No import from a lower stage to a higher
 * one (the order is LAYERS in layers.ts), no file-level import circle, and no folder holding
 * another area's files under a file-name prefix. Each failure names the files.
 */
const SRC = resolve("src");
const graph = readImportGraph(SRC);

describe("import direction of src/", () => {
  it("reads the whole graph (a broken reader would pass every check below)", () => {
    const topFolders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory() && readdirSync(join(SRC, e.name)).length > 0)
      .map((e) => e.name);
    const withEdges = new Set(graph.edges.flatMap((e) => [areaOf(e.from), areaOf(e.to)]));
    expect(graph.files.length).toBeGreaterThan(250);
    expect(graph.edges.length).toBeGreaterThan(1000);
    for (const f of topFolders) expect(withEdges, `no import read from or to src/${f}/`).toContain(f);
    // every relative specifier names a file of src/ (what tsc checks too): none is silently dropped
    expect(graph.unresolved).toEqual([]);
  });

  it("no import runs from a lower layer to the same or a higher one", () => {
    expect(backImports(graph, LAYERS)).toEqual([]);
  });

  it("no file-level import circle", () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it("no folder mixes areas by file-name prefix", () => {
    expect(prefixMixes(SRC, graph.files)).toEqual([]);
  });
});

describe("the checks themselves", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  async function tree(files: Record<string, string>): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), "lmr-arch-"));
    dirs.push(root);
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), text);
    }
    return root;
  }

  it("sees every import form: type-only, multi-line, re-export, side effect, dynamic, inline type", () => {
    const text = [
      `import { a } from "./a.js";`,
      `import type { B } from "../b.js";`,
      `import {\n  c,\n  type D,\n} from "./c.js";`,
      `export { e } from "./e.js";`,
      `export * from "./f.js";`,
      `export type * from "./g.js";`,
      `import "./h.js";`,
      `import * as i from "./i.js";`,
      `const j = await import("./j.js");`,
      `let k: import("./k.js").K;`,
      `import { readFile } from "node:fs";`,
    ].join("\n");
    expect(importSpecifiers(text)).toEqual(["./a.js", "../b.js", "./c.js", "./e.js", "./f.js", "./g.js", "./h.js", "./i.js", "./j.js", "./k.js", "node:fs"]);
  });

  it("fails on a back-import, naming both files and both layers", async () => {
    const root = await tree({
      "core/hash.ts": `import type { Flags } from "../cli/flags.js";\nexport const h = 1;\n`,
      "cli/flags.ts": `import { h } from "../core/hash.js";\nexport type Flags = { h: typeof h };\n`,
    });
    const problems = backImports(readImportGraph(root), LAYERS);
    expect(problems).toEqual([expect.stringMatching(/^src\/core\/hash\.ts -> src\/cli\/flags\.ts \(core, layer 0, imports cli, layer \d+: a higher one\)$/)]);
  });

  it("fails on an import between two folders of one layer, and on a folder in no layer", async () => {
    const root = await tree({
      "paper/a.ts": `import { b } from "../prepare/b.js";\nexport const a = b;\n`,
      "prepare/b.ts": `export const b = 1;\n`,
      "extras/c.ts": `import { b } from "../prepare/b.js";\nexport const c = b;\n`,
    });
    expect(backImports(readImportGraph(root), LAYERS)).toEqual([
      "src/extras/ is in no layer: place it in LAYERS (test/architecture/layers.ts)",
      expect.stringMatching(/^src\/paper\/a\.ts -> src\/prepare\/b\.ts \(paper, layer \d+, imports prepare, layer \d+: the same layer\)$/),
    ]);
  });

  it("fails on a circle, also one of type-only imports inside one folder", async () => {
    const root = await tree({
      "verify/mutants.ts": `import { t } from "./ts-mutants.js";\nexport interface Target { s: string }\nexport const m = t;\n`,
      "verify/ts-mutants.ts": `import type { Target } from "./mutants.js";\nexport const t = (x: Target) => x;\n`,
      "verify/steps.ts": `import { m } from "./mutants.js";\nexport const s = m;\n`,
    });
    expect(importCircles(readImportGraph(root))).toEqual([
      "src/verify/mutants.ts -> src/verify/ts-mutants.ts -> src/verify/mutants.ts (2 files in the circle)",
    ]);
  });

  it("fails on 3 files named after another area", async () => {
    const root = await tree({
      "new/x.ts": "export {};\n",
      "scaffold/new-a.ts": "export {};\n",
      "scaffold/new-b.ts": "export {};\n",
      "scaffold/new-c.ts": "export {};\n",
      "scaffold/tests-a.ts": "export {};\n",
      "scaffold/tests-b.ts": "export {};\n",
      "scaffold/tests-c.ts": "export {};\n",
    });
    expect(prefixMixes(root, readImportGraph(root).files)).toEqual([
      "src/scaffold/ has 3 files named new-*.ts (new-a.ts, new-b.ts, new-c.ts), and new is an area of its own: move them into a new/ folder",
      "src/scaffold/ tells 2 areas apart by file-name prefix (new-*.ts: 3, tests-*.ts: 3): give each its own folder",
    ]);
  });

  it("fails on two areas told apart by prefix in one folder, as mask/ had python-* and ts-*", async () => {
    const root = await tree({
      "mask/registry.ts": "export {};\n",
      "mask/python-body.ts": "export {};\n",
      "mask/python-masker.ts": "export {};\n",
      "mask/python-region.ts": "export {};\n",
      "mask/ts-body.ts": "export {};\n",
      "mask/ts-masker.ts": "export {};\n",
      "mask/ts-region.ts": "export {};\n",
      "report/render-html.ts": "export {};\n",
      "report/render-json.ts": "export {};\n",
      "report/render-svg.ts": "export {};\n",
    });
    expect(prefixMixes(root, readImportGraph(root).files)).toEqual([
      "src/mask/ tells 2 areas apart by file-name prefix (python-*.ts: 3, ts-*.ts: 3): give each its own folder",
    ]);
  });
});

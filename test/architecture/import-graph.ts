import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT_AREA } from "./layers.js";

/*
 * The import graph of src/, read from the source text: every relative module specifier of an
 * `import … from`, `import type … from`, `export … from`, side-effect `import "…"`, dynamic
 * `import("…")` and inline `import("…").Type`, resolved to a file of src/ (".js" names the
 * ".ts" file; a folder names its index.ts). Bare specifiers (packages, node:) are not edges.
 * Unit tests (*.test.ts) are left out: they are not shipped and may import across freely.
 */

interface Edge {
  /** Paths relative to src/, with "/" separators. */
  from: string;
  to: string;
}

export interface ImportGraph {
  files: string[];
  edges: Edge[];
  /** Relative specifiers that name no file of src/ (a typo tsc would catch, or text inside a template). */
  unresolved: { file: string; specifier: string }[];
}

const STATIC = /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?["']([^"'\n]+)["']/g;
const DYNAMIC = /\bimport\(\s*["']([^"'\n]+)["']\s*\)/g;

function listTs(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) listTs(p, out);
    else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

function resolveSpecifier(fromFile: string, spec: string): string | undefined {
  const base = resolve(dirname(fromFile), spec);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, join(base, "index.ts")];
  return candidates.find((c) => c.endsWith(".ts") && existsSync(c) && statSync(c).isFile());
}

/** The specifiers a file's text imports, in order (relative and bare). */
export function importSpecifiers(text: string): string[] {
  const found: [number, string][] = [];
  for (const m of text.matchAll(STATIC)) found.push([m.index, m[1]!]);
  for (const m of text.matchAll(DYNAMIC)) found.push([m.index, m[1]!]);
  return found.sort((a, b) => a[0] - b[0]).map(([, s]) => s);
}

export function readImportGraph(srcDir: string): ImportGraph {
  const abs = listTs(srcDir).sort();
  const rel = (p: string): string => relative(srcDir, p).split("\\").join("/");
  const edges: Edge[] = [];
  const unresolved: ImportGraph["unresolved"] = [];
  for (const file of abs) {
    const seen = new Set<string>();
    for (const spec of importSpecifiers(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const target = resolveSpecifier(file, spec);
      if (target === undefined || !target.startsWith(srcDir)) {
        unresolved.push({ file: rel(file), specifier: spec });
        continue;
      }
      const to = rel(target);
      if (!seen.has(to)) edges.push({ from: rel(file), to });
      seen.add(to);
    }
  }
  return { files: abs.map(rel), edges, unresolved };
}

/** The stage a file belongs to: its top folder under src/, or ROOT_AREA for src/*.ts. */
export function areaOf(file: string): string {
  const i = file.indexOf("/");
  return i < 0 ? ROOT_AREA : file.slice(0, i);
}

/** Imports from a folder to one of the same or a higher layer ("file -> file (area L -> area L')"). */
export function backImports(graph: ImportGraph, layers: readonly (readonly string[])[]): string[] {
  const layerOf = new Map<string, number>();
  layers.forEach((names, i) => names.forEach((n) => layerOf.set(n, i)));
  const problems: string[] = [];
  const unplaced = new Set(graph.files.map(areaOf).filter((a) => !layerOf.has(a)));
  for (const a of [...unplaced].sort())
    problems.push(`src/${a === ROOT_AREA ? "*.ts" : `${a}/`} is in no layer: place it in LAYERS (test/architecture/layers.ts)`);
  for (const { from, to } of graph.edges) {
    const a = areaOf(from);
    const b = areaOf(to);
    if (a === b || unplaced.has(a) || unplaced.has(b)) continue;
    const la = layerOf.get(a)!;
    const lb = layerOf.get(b)!;
    if (lb >= la) problems.push(`src/${from} -> src/${to} (${a}, layer ${la}, imports ${b}, layer ${lb}${la === lb ? ": the same layer" : ": a higher one"})`);
  }
  return problems;
}

/** Every file-level import circle (strongly connected component of 2+ files, or a file importing itself), as "a -> b -> … -> a". */
export function importCircles(graph: ImportGraph): string[] {
  const next = new Map<string, string[]>();
  for (const f of graph.files) next.set(f, []);
  for (const { from, to } of graph.edges) next.get(from)?.push(to);
  // Tarjan's algorithm, iterative so a deep graph cannot overflow the stack
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of graph.files) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const succ = next.get(top.node) ?? [];
      if (top.i < succ.length) {
        const w = succ[top.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.node);
        const selfLoop = comp.length === 1 && (next.get(comp[0]!) ?? []).includes(comp[0]!);
        if (comp.length > 1 || selfLoop) components.push(comp.sort());
      }
    }
  }
  return components.map((comp) => describeCircle(comp, next));
}

/** One loop through the component, starting at its first file: "src/a.ts -> src/b.ts -> src/a.ts". */
function describeCircle(comp: string[], next: Map<string, string[]>): string {
  const members = new Set(comp);
  const start = comp[0]!;
  // breadth-first from start back to start inside the component: the shortest loop
  const prev = new Map<string, string>();
  const queue = [start];
  let end: string | undefined;
  while (queue.length > 0 && end === undefined) {
    const n = queue.shift()!;
    for (const w of next.get(n) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        end = n;
        break;
      }
      if (!prev.has(w)) {
        prev.set(w, n);
        queue.push(w);
      }
    }
  }
  const path = [start];
  for (let n = end; n !== undefined && n !== start; n = prev.get(n)) path.splice(1, 0, n);
  return `${[...path, start].map((f) => `src/${f}`).join(" -> ")} (${comp.length} file${comp.length === 1 ? "" : "s"} in the circle)`;
}

/**
 * Folders that mix areas by file-name prefix, in two shapes: 3 or more files of one folder
 * named `xxx-*.ts` where xxx is the name of a folder of src/ (at any depth) other than that
 * folder itself (they belong in that area's folder, as scaffold/new-*.ts went to new/); and a
 * folder with two or more such groups of 3+ files (`python-*` and `ts-*` in mask/, `new-*` and
 * `record-*` in scaffold/, `export-*` and `lmr-bench-*` in interop/ before issue 26): areas
 * told apart by prefix instead of by folder.
 */
export function prefixMixes(srcDir: string, files: readonly string[]): string[] {
  const folderNames = new Set<string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      folderNames.add(e.name);
      walk(join(dir, e.name));
    }
  };
  walk(srcDir);
  const byFolder = new Map<string, string[]>();
  for (const f of files) {
    const dir = f.includes("/") ? f.slice(0, f.lastIndexOf("/")) : "";
    const list = byFolder.get(dir) ?? [];
    list.push(f.slice(f.lastIndexOf("/") + 1));
    byFolder.set(dir, list);
  }
  const problems: string[] = [];
  for (const [dir, names] of [...byFolder].sort()) {
    const own = dir.slice(dir.lastIndexOf("/") + 1);
    const groups = new Map<string, string[]>();
    for (const n of names) {
      const dash = n.indexOf("-");
      if (dash <= 0) continue;
      const prefix = n.slice(0, dash);
      groups.set(prefix, [...(groups.get(prefix) ?? []), n]);
    }
    const big = [...groups].filter(([, group]) => group.length >= 3).sort(([a], [b]) => (a < b ? -1 : 1));
    for (const [prefix, group] of big) {
      if (folderNames.has(prefix) && prefix !== own) {
        problems.push(
          `src/${dir ? `${dir}/` : ""} has ${group.length} files named ${prefix}-*.ts (${group.sort().join(", ")}), and ${prefix} is an area of its own: move them into a ${prefix}/ folder`,
        );
      }
    }
    if (big.length >= 2) {
      problems.push(
        `src/${dir ? `${dir}/` : ""} tells ${big.length} areas apart by file-name prefix (${big.map(([p, g]) => `${p}-*.ts: ${g.length}`).join(", ")}): give each its own folder`,
      );
    }
  }
  return problems;
}

import { LmrError } from "../core/errors.js";
import { findSyntaxError, parsePython, type Node } from "../lang/python-parser.js";
import { locateSymbol } from "../mask/locate-symbol.js";
import { collectMethods } from "../mask/python-body.js";
import { indexDefinitions, type PyIndex } from "../mask/python-index.js";
import { collectMutationPoints, type Edit, type MutantOperator, type MutationPoint } from "./mutant-points.js";
import { enumerateTsCandidates, tsParsesCleanly } from "./ts-mutants.js";
import { isTsJsFile } from "../lang/ts-source.js";

export type { MutantOperator } from "./mutant-points.js";

export interface MutantTarget {
  /** Qualified name: `f`, `Class.method`, `outer.inner`, or `Class` (every body in it). */
  symbol: string;
  /** 1-based line of the `def`/`class` (or its first decorator) when the name is defined more than once. */
  line?: number;
  /**
   * Only mutate inside these [start, end) string offsets of the source (a region target: the
   * masked lines, not the rest of the function, which the agent never writes).
   */
  spans?: [number, number][];
}

export interface MutantOptions {
  /** Most mutants to return; when there are more candidates a seeded sample is taken. */
  max: number;
  seed: number;
}

export interface Mutant {
  /** Stable for the same source and targets: `m<candidate number>-<operator>-L<line>`. */
  id: string;
  operator: MutantOperator;
  symbol: string;
  line: number;
  /** First and last line (1-based, of the unmutated source) that the mutation touches. */
  lines: [number, number];
  /** e.g. "line 42: '-' → '+'" */
  description: string;
  /** The whole mutated file. */
  source: string;
}

export interface MutantCandidate extends MutationPoint {
  index: number;
  symbol: string;
}

/**
 * Mutants of the target bodies in `source`. Pure: nothing but the parser is used.
 * Candidates are enumerated in source order; above `opts.max`, a seeded sample that
 * takes operators in turn. Every mutant parses without error nodes and differs from `source`.
 */
export async function generateMutants(source: string, targets: MutantTarget[], opts: MutantOptions, file?: string): Promise<Mutant[]> {
  if (!Number.isInteger(opts.max) || opts.max < 0) {
    throw new LmrError({ code: "verify/bad-mutant-max", kind: "usage", message: `mutant limit must be a whole number >= 0, got ${opts.max}`, hint: "pass e.g. max: 50" });
  }
  const ts = file !== undefined && isTsJsFile(file);
  const candidates = ts ? await enumerateTsCandidates(source, targets, file) : await enumerateCandidates(source, targets);
  const order = opts.max >= candidates.length ? candidates : sampleOrder(candidates, opts.seed);
  const accepted: { index: number; mutant: Mutant }[] = [];
  const seen = new Set<string>([source]);
  for (const c of order) {
    if (accepted.length >= opts.max) break;
    const mutated = applyEdits(source, c.edits);
    if (seen.has(mutated)) continue;
    seen.add(mutated);
    if (!(ts ? await tsParsesCleanly(mutated, file) : await parsesCleanly(mutated))) continue;
    const id = `m${c.index + 1}-${c.operator}-L${c.line}`;
    accepted.push({ index: c.index, mutant: { id, operator: c.operator, symbol: c.symbol, line: c.line, lines: editedLines(source, c.edits), description: c.description, source: mutated } });
  }
  return accepted.sort((a, b) => a.index - b.index).map((a) => a.mutant);
}

/** All mutation points of the targets, in source order, each once. */
async function enumerateCandidates(source: string, targets: MutantTarget[]): Promise<MutantCandidate[]> {
  const tree = await parsePython(source);
  try {
    const index = indexDefinitions(tree.rootNode);
    const bodies = targets.flatMap((t) => locateBodies(index, t).map((body) => ({ symbol: t.symbol, spans: t.spans, body })));
    // The most specific target owns a point when targets nest (`outer` and `outer.inner`).
    bodies.sort((a, b) => (a.body.endIndex - a.body.startIndex) - (b.body.endIndex - b.body.startIndex));
    const byKey = new Map<string, Omit<MutantCandidate, "index">>();
    for (const { symbol, spans, body } of bodies) {
      for (const p of collectMutationPoints(body)) {
        if (spans && !p.edits.every((e) => spans.some(([s, end]) => e.start >= s && e.end <= end))) continue;
        const key = `${p.operator}|${p.edits.map((e) => `${e.start}:${e.end}:${e.text}`).join("|")}`;
        if (!byKey.has(key)) byKey.set(key, { ...p, symbol });
      }
    }
    return [...byKey.values()]
      .sort((a, b) => a.edits[0]!.start - b.edits[0]!.start || a.edits[0]!.end - b.edits[0]!.end || (a.operator < b.operator ? -1 : a.operator > b.operator ? 1 : 0))
      .map((c, index) => ({ ...c, index }));
  } finally {
    tree.delete();
  }
}

/** The body of a function target; for a class, the body of every method in it (as mode "class" masks them). */
function locateBodies(index: PyIndex, target: MutantTarget): Node[] {
  const def = locateSymbol(index, target.symbol, target.line, undefined);
  const functions = def.kind === "class" ? collectMethods(index, def) : [def];
  return functions.map((d) => d.node.childForFieldName("body")).filter((b): b is Node => b !== null);
}

/**
 * A seeded permutation that spreads over operators: each operator's candidates are
 * shuffled, then operators take turns (in a shuffled order) giving one candidate each.
 */
function sampleOrder(candidates: MutantCandidate[], seed: number): MutantCandidate[] {
  const random = mulberry32(seed);
  const groups = new Map<MutantOperator, MutantCandidate[]>();
  for (const c of candidates) {
    const g = groups.get(c.operator);
    if (g) g.push(c);
    else groups.set(c.operator, [c]);
  }
  const operators = shuffle([...groups.keys()].sort(), random);
  const queues = operators.map((op) => shuffle(groups.get(op)!, random));
  const order: MutantCandidate[] = [];
  for (let round = 0; order.length < candidates.length; round++) {
    for (const q of queues) if (round < q.length) order.push(q[round]!);
  }
  return order;
}

/** mulberry32: a small, fast 32-bit PRNG; the same seed gives the same sequence everywhere. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** Apply non-overlapping edits (JS string indices), back to front so earlier indices stay valid. */
/** The 1-based lines of `source` that the edits replace. */
function editedLines(source: string, edits: Edit[]): [number, number] {
  const lineAt = (offset: number): number => source.slice(0, offset).split("\n").length;
  const first = Math.min(...edits.map((e) => lineAt(e.start)));
  const last = Math.max(...edits.map((e) => lineAt(Math.max(e.start, e.end - 1))));
  return [first, last];
}

function applyEdits(source: string, edits: Edit[]): string {
  let out = source;
  for (const e of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

async function parsesCleanly(source: string): Promise<boolean> {
  const tree = await parsePython(source);
  try {
    return findSyntaxError(tree.rootNode) === undefined;
  } finally {
    tree.delete();
  }
}

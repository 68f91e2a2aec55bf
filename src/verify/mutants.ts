import { groupBy } from "../core/collections.js";
import { LmrError } from "../core/errors.js";
import { mulberry32 } from "../core/random.js";
import { findSyntaxError, parsePython, type Node } from "../lang/python-parser.js";
import { collectMethods, locateSymbol } from "../mask/locate-symbol.js";
import { indexDefinitions, type PyIndex } from "../mask/python/symbols.js";
import { collectMutationPoints, numberCandidates, type Edit, type MutantCandidate, type MutantOperator, type MutantTarget } from "./mutant-points.js";
import { enumerateTsCandidates, tsParsesCleanly } from "./ts-mutants.js";
import { isTsJsFile } from "../lang/ts-source.js";

export type { MutantOperator, MutantTarget } from "./mutant-points.js";

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

/**
 * Mutants of the target bodies in `source`. Pure: nothing but the parser is used.
 * Candidates are enumerated in source order; above `opts.max`, a seeded sample that
 * takes operators in turn. Every mutant parses without error nodes and differs from `source`.
 */
export async function generateMutants(source: string, targets: MutantTarget[], opts: MutantOptions, file?: string): Promise<Mutant[]> {
  if (!Number.isInteger(opts.max) || opts.max < 0) {
    throw new LmrError({ code: "verify/bad-mutant-max", message: `mutant limit must be a whole number >= 0, got ${opts.max}`, hint: "pass e.g. max: 50" });
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
    accepted.push({
      index: c.index,
      mutant: { id, operator: c.operator, symbol: c.symbol, line: c.line, lines: editedLines(source, c.edits), description: c.description, source: mutated },
    });
  }
  return accepted.sort((a, b) => a.index - b.index).map((a) => a.mutant);
}

/** All mutation points of the targets, in source order, each once. */
async function enumerateCandidates(source: string, targets: MutantTarget[]): Promise<MutantCandidate[]> {
  const tree = await parsePython(source);
  try {
    const index = indexDefinitions(tree.rootNode);
    const bodies = targets.flatMap((t) =>
      locateBodies(index, t).map((body) => ({ symbol: t.symbol, spans: t.spans, size: body.endIndex - body.startIndex, body })),
    );
    return numberCandidates(bodies, collectMutationPoints);
  } finally {
    tree.delete();
  }
}

/** The body of a function target; for a class, the body of every method in it (as mode "class" masks them). */
function locateBodies(index: PyIndex, target: MutantTarget): Node[] {
  const def = locateSymbol(index, target.symbol, target.line, undefined);
  const functions = def.kind === "class" ? collectMethods(index.defs, def) : [def];
  return functions.map((d) => d.node.childForFieldName("body")).filter((b): b is Node => b !== null);
}

/**
 * A seeded permutation that spreads over operators: each operator's candidates are
 * shuffled, then operators take turns (in a shuffled order) giving one candidate each.
 */
function sampleOrder(candidates: MutantCandidate[], seed: number): MutantCandidate[] {
  const random = mulberry32(seed);
  const groups = groupBy(candidates, (c) => c.operator);
  const operators = shuffle([...groups.keys()].sort(), random);
  const queues = operators.map((op) => shuffle(groups.get(op)!, random));
  const order: MutantCandidate[] = [];
  for (let round = 0; order.length < candidates.length; round++) {
    for (const q of queues) if (round < q.length) order.push(q[round]!);
  }
  return order;
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

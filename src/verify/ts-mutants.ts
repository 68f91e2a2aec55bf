import { flavorOf, parseTsSource, readSyntaxDiagnostics } from "../lang/ts-source.js";
import { locateSymbol } from "../mask/locate-symbol.js";
import { indexTsDefinitions, type TsDef } from "../mask/ts/symbols.js";
import type { MutantCandidate, MutantTarget, MutationPoint } from "./mutant-points.js";
import { collectTsMutationPoints } from "./ts-mutant-points.js";

/**
 * Mutation points of TypeScript/JavaScript targets, found with ts-morph in the same shape as
 * the Python path's (mutants.ts enumerateCandidates): a class target is every method of it,
 * the most specific target owns a point, and the order is the source order.
 */
export async function enumerateTsCandidates(source: string, targets: MutantTarget[], file: string): Promise<MutantCandidate[]> {
  const parsed = await parseTsSource(source, flavorOf(file, "ts"));
  try {
    const index = indexTsDefinitions(parsed.file, parsed.morph);
    const bodies = targets.flatMap((t) => locateBodies(index.defs, locateSymbol(index, t.symbol, t.line, file)).map((def) => ({ symbol: t.symbol, spans: t.spans, def })));
    bodies.sort((a, b) => (a.def.end - a.def.start) - (b.def.end - b.def.start));
    const byKey = new Map<string, Omit<MutantCandidate, "index">>();
    for (const { symbol, spans, def } of bodies) {
      for (const p of collectTsMutationPoints(def.body!, parsed.morph) as MutationPoint[]) {
        if (spans && !p.edits.every((e) => spans.some(([s, end]) => e.start >= s && e.end <= end))) continue;
        const key = `${p.operator}|${p.edits.map((e) => `${e.start}:${e.end}:${e.text}`).join("|")}`;
        if (!byKey.has(key)) byKey.set(key, { ...p, symbol });
      }
    }
    return [...byKey.values()]
      .sort((a, b) => a.edits[0]!.start - b.edits[0]!.start || a.edits[0]!.end - b.edits[0]!.end || (a.operator < b.operator ? -1 : a.operator > b.operator ? 1 : 0))
      .map((c, index) => ({ ...c, index }));
  } finally {
    parsed.dispose();
  }
}

/** A function's own definition, or a class's methods (as mode "class" masks them). */
function locateBodies(defs: readonly TsDef[], def: TsDef): TsDef[] {
  if (def.kind !== "class") return def.body ? [def] : [];
  return defs.filter((d) => d.body !== undefined && d.kind !== "class" && isInside(d, def));
}

function isInside(d: TsDef, cls: TsDef): boolean {
  for (let p = d.parent; p; p = p.parent) if (p === cls) return true;
  return false;
}

export async function tsParsesCleanly(source: string, file: string): Promise<boolean> {
  const parsed = await parseTsSource(source, flavorOf(file, "ts"));
  try {
    return readSyntaxDiagnostics(parsed.file).length === 0;
  } finally {
    parsed.dispose();
  }
}

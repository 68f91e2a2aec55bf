import { flavorOf, parseTsSource, readSyntaxDiagnostics } from "../lang/ts-source.js";
import { locateSymbol } from "../mask/locate-symbol.js";
import { indexTsDefinitions, type TsDef } from "../mask/ts/symbols.js";
import { numberCandidates, type MutantCandidate, type MutantTarget, type MutationPoint } from "./mutant-points.js";
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
    const bodies = targets.flatMap((t) =>
      locateBodies(index.defs, locateSymbol(index, t.symbol, t.line, file)).map((def) => ({
        symbol: t.symbol,
        spans: t.spans,
        size: def.end - def.start,
        body: def.body!,
      })),
    );
    return numberCandidates(bodies, (body) => collectTsMutationPoints(body, parsed.morph) as MutationPoint[]);
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

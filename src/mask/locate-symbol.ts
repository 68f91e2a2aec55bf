import { LmrError } from "../core/errors.js";
/** What symbol lookup needs of a definition; the Python and the TS/JS indexes both have it. */
export interface Locatable {
  qualname: string;
  line: number;
  decoratorLine?: number;
}

export interface SymbolIndex<D extends Locatable> {
  defs: readonly D[];
  byName: Map<string, D[]>;
}

/**
 * Finds the one definition a spec names. `line` picks among several
 * definitions of the same name: it may be the line of the `def`/`class`
 * keyword or of the first decorator.
 */
export function locateSymbol<D extends Locatable>(index: SymbolIndex<D>, symbol: string, line: number | undefined, file: string | undefined): D {
  const candidates = index.byName.get(symbol) ?? [];
  if (candidates.length === 0) {
    const near = suggestSymbols(index, symbol);
    throw new LmrError({
      code: "mask/symbol-not-found",
      file,
      message: `symbol "${symbol}" is not defined${near.length > 0 ? `; closest: ${near.map(describeDef).join(", ")}` : " (the file defines no functions or classes)"}`,
      hint: "use a qualified name such as `fn`, `Class.method` or `outer.inner`; `lmr mask FILE --list` prints every symbol",
    });
  }
  if (line !== undefined) {
    const picked = candidates.filter((d) => d.line === line || d.decoratorLine === line);
    if (picked.length === 1) return picked[0]!;
    throw new LmrError({
      code: "mask/symbol-not-found",
      file,
      message: `symbol "${symbol}" has no definition at line ${line}; it is defined at ${candidates.map((d) => `line ${d.line}`).join(", ")}`,
      hint: "give the line of the definition's header (`def`, `class`, `function`, the name) or of its first decorator",
    });
  }
  if (candidates.length > 1) {
    throw new LmrError({
      code: "mask/ambiguous-symbol",
      file,
      message: `symbol "${symbol}" is defined ${candidates.length} times: ${candidates.map((d) => `line ${d.line}`).join(", ")}`,
      hint: "add the line of the wanted definition (`line` in the manifest, `--line` on the command line)",
    });
  }
  return candidates[0]!;
}

function describeDef(d: Locatable): string {
  return `${d.qualname} (line ${d.line})`;
}

/** Up to `limit` defined names closest to `symbol`: same last part first, then by edit distance. */
function suggestSymbols<D extends Locatable>(index: SymbolIndex<D>, symbol: string, limit = 5): D[] {
  const wantedLast = lastPart(symbol).toLowerCase();
  const scored = index.defs.map((d) => {
    const last = lastPart(d.qualname).toLowerCase();
    const suffix = last === wantedLast || d.qualname.toLowerCase().endsWith(`.${symbol.toLowerCase()}`) ? 0 : 1;
    const distance = Math.min(measureDistance(symbol.toLowerCase(), d.qualname.toLowerCase()), measureDistance(wantedLast, last) + 1);
    return { d, suffix, distance };
  });
  scored.sort((a, b) => a.suffix - b.suffix || a.distance - b.distance || a.d.line - b.d.line);
  const seen = new Set<string>();
  const out: D[] = [];
  for (const s of scored) {
    if (seen.has(s.d.qualname)) continue;
    seen.add(s.d.qualname);
    out.push(s.d);
    if (out.length === limit) break;
  }
  return out;
}

function lastPart(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot < 0 ? name : name.slice(dot + 1);
}

/** Levenshtein distance. */
function measureDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * Every method of a class, nested classes' methods included (mode "class" masks them; a
 * function inside a method goes with its method). The Python and the TS/JS indexes both.
 */
export function collectMethods<D extends { parent?: D | undefined; kind: string }>(defs: readonly D[], cls: D): D[] {
  const out: D[] = [];
  const visit = (scope: D): void => {
    for (const d of defs) {
      if (d.parent !== scope) continue;
      if (d.kind === "method") out.push(d);
      else if (d.kind === "class") visit(d);
    }
  };
  visit(cls);
  return out;
}

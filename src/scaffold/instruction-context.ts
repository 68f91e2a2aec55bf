import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import type { MaskMode, Target } from "../manifest/types.js";
import { maskerFor } from "../mask/registry.js";
import type { SymbolInfo } from "../mask/types.js";
import { findInPaper } from "../paper/find.js";
import type { Finding } from "../paper/types.js";

/** What an instruction says about one target, read from the (prepared) upstream source. */
export interface TargetFacts {
  file: string;
  symbol: string;
  mode: MaskMode;
  kind: SymbolInfo["kind"];
  line: number;
  signature: string;
  /** First paragraph of the docstring, on one line; undefined when there is none. */
  summary?: string;
  params: { name: string; hasDefault: boolean }[];
  /** For a class: its own methods. */
  methods: { name: string; signature: string }[];
}

/** Facts about each target, from the files of `treeDir`; a target that is not there is an error at its pointer. */
export async function describeTargets(treeDir: string, targets: readonly Target[], file?: string): Promise<TargetFacts[]> {
  const out: TargetFacts[] = [];
  for (const [i, t] of targets.entries()) {
    const source = await readFile(join(treeDir, t.file), "utf8").catch(() => undefined);
    if (source === undefined) {
      throw new LmrError({
        code: "task/target-file-missing",
        file,
        pointer: `/targets/${i}/file`,
        message: `'${t.file}' is not a file of the upstream tree`,
        hint: "check the path (relative to the upstream tree, after prepare steps)",
      });
    }
    const symbols = await maskerFor(t.file).listSymbols(source);
    const found = symbols.filter((s) => s.name === t.symbol && (t.line === undefined || s.line === t.line || s.decorator_line === t.line));
    const info = found[0];
    if (!info) {
      throw new LmrError({
        code: "task/target-not-found",
        file,
        pointer: `/targets/${i}/symbol`,
        message: `'${t.symbol}' is not defined in ${t.file}`,
        hint: "run `lmr mask FILE --list` to see the symbols",
      });
    }
    out.push(factsOf(t, info, symbols));
  }
  return out;
}

export function factsOf(t: Pick<Target, "file" | "symbol" | "mode">, info: SymbolInfo, symbols: readonly SymbolInfo[]): TargetFacts {
  const summary = info.docstring !== undefined ? summarizeDocstring(info.docstring) : undefined;
  const methods =
    info.kind === "class"
      ? symbols.filter((s) => s.kind === "method" && s.name.startsWith(`${info.name}.`) && !s.name.slice(info.name.length + 1).includes("."))
      : [];
  return {
    file: t.file,
    symbol: t.symbol,
    mode: t.mode,
    kind: info.kind,
    line: info.line,
    signature: info.signature,
    ...(summary ? { summary } : {}),
    params: info.kind === "class" ? [] : parseParams(info.signature),
    methods: methods.map((m) => ({ name: m.name.slice(info.name.length + 1), signature: m.signature })),
  };
}

/** The first paragraph of a docstring literal (quotes, prefix and indentation removed), on one line. */
export function summarizeDocstring(literal: string): string {
  const body = literal
    .trim()
    .replace(/^[rRuUbBfF]{0,2}("""|'''|"|')/, "")
    .replace(/("""|'''|"|')$/, "");
  const paragraphs = body.split(/\n[ \t]*\n/);
  return (paragraphs.find((p) => p.trim() !== "") ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .join(" ");
}

/** Parameters of a `def` header, without `self`/`cls` and the bare `*` and `/` markers. */
export function parseParams(signature: string): { name: string; hasDefault: boolean }[] {
  const open = signature.indexOf("(");
  if (open < 0) return [];
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (const c of signature.slice(open + 1)) {
    if (quote) {
      if (c === quote) quote = undefined;
      current += c;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) {
      if (depth === 0) break;
      depth--;
    } else if (c === "," && depth === 0) {
      parts.push(current);
      current = "";
      continue;
    }
    current += c;
  }
  parts.push(current);
  return parts
    .map((p) => p.trim())
    .filter((p) => p !== "" && p !== "*" && p !== "/")
    .map((p) => ({ name: /^\*{0,2}([A-Za-z_]\w*)/.exec(p)?.[1] ?? p, hasDefault: hasTopLevelEquals(p) }))
    .filter((p, i) => !(i === 0 && (p.name === "self" || p.name === "cls")));
}

function hasTopLevelEquals(param: string): boolean {
  let depth = 0;
  for (const c of param) {
    if ("([{".includes(c)) depth++;
    else if (")]}".includes(c)) depth--;
    else if (c === "=" && depth === 0) return true;
  }
  return false;
}

/** "preference_loss" → "preference loss"; "BagOfWords.forward" → "bag of words forward". */
export function symbolWords(symbol: string): string {
  return symbol
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[._]+/g, " ")
    .toLowerCase()
    .trim();
}

const GENERIC = new Set([
  "self",
  "init",
  "call",
  "forward",
  "compute",
  "get",
  "set",
  "run",
  "main",
  "step",
  "update",
  "make",
  "build",
  "apply",
  "return",
  "returns",
  "with",
  "from",
  "that",
  "this",
  "the",
  "for",
  "and",
  "each",
  "list",
  "float",
  "floats",
  "value",
  "values",
  "args",
  "none",
  "true",
  "false",
  "given",
  "used",
  "uses",
  "using",
  "into",
  "over",
  "when",
  "where",
  "which",
  "their",
  "them",
  "they",
  "than",
  "then",
  "also",
  "only",
  "between",
]);

/** Search terms for the paper: the author's keywords first, then the target's name and words of its docstring. */
export function pickSearchTerms(facts: readonly TargetFacts[], keywords: readonly string[] = []): string[] {
  const terms: string[] = [...keywords.map((k) => k.trim()).filter((k) => k !== "")];
  for (const f of facts) {
    const words = symbolWords(f.symbol).split(" ");
    if (words.length > 1) terms.push(words.filter((w) => !GENERIC.has(w)).join(" "));
    terms.push(...words.filter((w) => w.length >= 4 && !GENERIC.has(w)));
    const doc = (f.summary ?? "").toLowerCase().match(/[a-z][a-z-]{5,}/g) ?? [];
    terms.push(...doc.filter((w) => !GENERIC.has(w)).slice(0, 6));
  }
  const seen = new Set<string>();
  return terms.filter((t) => t !== "" && !seen.has(t.toLowerCase()) && seen.add(t.toLowerCase()));
}

/**
 * The passages worth pointing the agent to: findings of the given terms,
 * ranked (the author's keywords and whole names first, then passages near an
 * equation or under a heading), one per page and line, at most `max`, in
 * reading order. Citations are spread over the terms: each keyword (and whole
 * name) first gets its own best passage, on a page not cited yet where it has
 * one; then the terms take turns, so one term found on many lines of page 1
 * cannot take every place.
 */
export function selectPassages(pages: Record<string, string>, terms: readonly string[], keywords: readonly string[] = [], max = 6): Finding[] {
  const strong = new Set([...keywords, ...terms.filter((t) => t.includes(" "))].map((t) => t.toLowerCase()));
  const order = new Map(terms.map((t, i) => [t, i] as const));
  const scored = findInPaper(pages, [...terms]).map((f) => ({
    f,
    score: (strong.has(f.term.toLowerCase()) ? 4 : 0) + (f.equations ? 2 : 0) + (f.heading ? 1 : 0) - (order.get(f.term) ?? 0) * 0.01,
  }));
  scored.sort((a, b) => b.score - a.score || a.f.page - b.f.page || a.f.line - b.f.line);
  // each term's findings, best first; terms in the order of their best finding
  const byTerm = new Map<string, Finding[]>();
  for (const { f } of scored) byTerm.set(f.term, [...(byTerm.get(f.term) ?? []), f]);
  const kept: Finding[] = [];
  const places = new Set<string>();
  const cited = new Set<number>();
  const take = (term: string): boolean => {
    const free = (byTerm.get(term) ?? []).filter((f) => !places.has(`${f.page}:${f.line}`));
    const f = free.find((x) => !cited.has(x.page)) ?? free[0];
    if (!f) return false;
    places.add(`${f.page}:${f.line}`);
    cited.add(f.page);
    kept.push(f);
    return true;
  };
  const ranked = [...byTerm.keys()];
  for (const term of ranked.filter((t) => strong.has(t.toLowerCase()))) {
    if (kept.length === max) break;
    take(term);
  }
  for (let progressed = true; progressed && kept.length < max;) {
    progressed = false;
    for (const term of ranked) {
      if (kept.length === max) break;
      if (take(term)) progressed = true;
    }
  }
  return kept.sort((a, b) => a.page - b.page || a.line - b.line);
}

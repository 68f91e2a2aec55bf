import { isHeading } from "./headings.js";
import type { Finding, PaperPages } from "./types.js";

/** How far (in lines, same page) an equation label may be from a match to be reported with it. */
const EQUATION_WINDOW = 5;
const SNIPPET_MAX = 160;

/** "(3)", "(2a)", "(4.1)" ending a line: how papers label a displayed equation. */
const EQUATION_LABEL = /\((\d{1,3}(?:\.\d{1,2})?[a-z]?)\)\s*$/;
/** "Eq. (3)", "Equation 4", "Eqs. 2": references to an equation in running text. */
const EQUATION_REFERENCE = /\b(?:Eqn?s?|Equations?)\.?\s*\(?(\d{1,3}(?:\.\d{1,2})?[a-z]?)\)?/gi;

interface PageIndex {
  page: number;
  lines: string[];
  /** Offset in the page text where each line starts. */
  starts: number[];
  /** For each line, the nearest heading at or before it on this page (or inherited from earlier pages). */
  headings: (string | undefined)[];
  /** Equation numbers mentioned on each line. */
  equations: string[][];
}

/**
 * Every occurrence of each term in the paper, by page and line. Matching is
 * case-insensitive; the words of a multi-word term may be separated by any
 * whitespace, line breaks included, and a word hyphenated across a line break
 * ("pref-\nerence") still matches.
 */
export function findInPaper(pages: PaperPages["pages"], terms: string[]): Finding[] {
  const indexes = indexPages(pages);
  const found: (Finding & { order: number; column: number })[] = [];
  terms.forEach((term, order) => {
    const pattern = termPattern(term);
    if (!pattern) return;
    for (const idx of indexes) {
      const text = idx.lines.join("\n");
      for (const m of text.matchAll(pattern)) {
        const start = m.index;
        const end = start + m[0].length;
        const first = lineAt(idx.starts, start);
        const last = lineAt(idx.starts, Math.max(start, end - 1));
        const finding: Finding & { order: number; column: number } = {
          term,
          page: idx.page,
          line: first + 1,
          snippet: makeSnippet(idx, first, last, start - idx.starts[first]!, end - idx.starts[first]!),
          order,
          column: start - idx.starts[first]!,
        };
        const heading = idx.headings[first];
        if (heading !== undefined) finding.heading = heading;
        const equations = nearbyEquations(idx, first, last);
        if (equations.length > 0) finding.equations = equations;
        found.push(finding);
      }
    }
  });
  found.sort((a, b) => a.page - b.page || a.line - b.line || a.order - b.order || a.column - b.column);
  return found.map(({ order: _order, column: _column, ...f }) => f);
}

/** One line per finding: `p.2 l.5 [§ 2 Method] (eq. 3): snippet`. */
export function formatFinding(f: Finding): string {
  const heading = f.heading !== undefined ? ` [§ ${f.heading}]` : "";
  const eq = f.equations !== undefined ? ` (eq. ${f.equations.join(", ")})` : "";
  return `p.${f.page} l.${f.line}${heading}${eq}: ${f.snippet}`;
}

/** The search regex for a term, or undefined for a blank term. */
export function termPattern(term: string): RegExp | undefined {
  const words = term
    .trim()
    .split(/\s+/)
    .filter((w) => w !== "");
  if (words.length === 0) return undefined;
  const softBreak = "(?:-[ \\t]*\\n[ \\t]*)?";
  const word = (w: string): string =>
    [...w]
      .map((c, i) => {
        // a hyphen written in the term may end a line in the paper
        const escaped = c === "-" ? "-\\s*" : c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
        // a line-end hyphen may split a word between two letters
        return i > 0 && /\p{L}/u.test(c) && /\p{L}/u.test(w[i - 1] ?? "") ? softBreak + escaped : escaped;
      })
      .join("");
  return new RegExp(words.map(word).join("\\s+"), "giu");
}

function indexPages(pages: PaperPages["pages"]): PageIndex[] {
  const keys = Object.keys(pages).sort((a, b) => Number(a) - Number(b));
  let current: string | undefined;
  return keys.map((key) => {
    const lines = (pages[key] ?? "").replace(/\r\n?/g, "\n").split("\n");
    const starts: number[] = [];
    let offset = 0;
    for (const l of lines) {
      starts.push(offset);
      offset += l.length + 1;
    }
    const headings = lines.map((l) => {
      if (isHeading(l)) current = l.trim().replace(/\s+/g, " ");
      return current;
    });
    const equations = lines.map(equationsOnLine);
    return { page: Number(key), lines, starts, headings, equations };
  });
}

function equationsOnLine(line: string): string[] {
  const out: string[] = [];
  const label = EQUATION_LABEL.exec(line);
  if (label) out.push(label[1]!);
  for (const m of line.matchAll(EQUATION_REFERENCE)) out.push(m[1]!);
  return out;
}

function nearbyEquations(idx: PageIndex, first: number, last: number): string[] {
  const seen = new Set<string>();
  const from = Math.max(0, first - EQUATION_WINDOW);
  const to = Math.min(idx.lines.length - 1, last + EQUATION_WINDOW);
  // closest lines first: the match's own lines, then outwards
  const order = [...Array(to - from + 1).keys()].map((k) => k + from).sort((a, b) => distance(a, first, last) - distance(b, first, last) || a - b);
  for (const i of order) for (const eq of idx.equations[i] ?? []) seen.add(eq);
  return [...seen];
}

function distance(i: number, first: number, last: number): number {
  return i < first ? first - i : i > last ? i - last : 0;
}

function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The matched lines joined, whitespace collapsed, cut to a window around the match. */
function makeSnippet(idx: PageIndex, first: number, last: number, startCol: number, endCol: number): string {
  const joined = idx.lines.slice(first, last + 1).join("\n");
  // collapse the parts around and inside the match separately to keep the match's position
  const before = collapse(joined.slice(0, startCol));
  const match = collapse(joined.slice(startCol, endCol));
  const after = collapse(joined.slice(endCol));
  const text = (before + match + after).trim();
  if (text.length <= SNIPPET_MAX) return text;
  const lead = before.trimStart();
  const room = Math.max(0, SNIPPET_MAX - match.length);
  const left = Math.min(lead.length, Math.floor(room / 2));
  const right = Math.min(after.length, room - left);
  const head = lead.length > left ? `…${lead.slice(lead.length - left)}` : lead;
  const tail = after.length > right ? `${after.slice(0, right)}…` : after;
  return (head + match + tail).trim();
}

function collapse(s: string): string {
  return s.replace(/\s+/g, " ");
}

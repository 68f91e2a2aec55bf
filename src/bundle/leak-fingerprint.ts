/**
 * Fingerprints of reference bodies and the search for them in other text:
 * runs of distinctive lines (verbatim copies) and token 8-gram shingles
 * (copies with other whitespace or line breaks). Pure: strings in, matches out.
 */

interface BodyFingerprint {
  /** Name shown in reports, e.g. `pkg/model.py: Model.forward`. */
  target: string;
  /** Distinctive lines, normalised, in body order. */
  lines: string[];
  shingles: Set<number>;
}

export interface Fingerprints {
  bodies: BodyFingerprint[];
  /** Normalised distinctive line → every (body, position) it occurs at. */
  lineIndex: Map<string, { body: number; pos: number }[]>;
  /** Shingle hash → the bodies that contain it. */
  shingleIndex: Map<number, number[]>;
  /** A 2^20-bit filter of the shingle hashes: most windows of a file are ruled out without a map lookup. */
  shingleBits: Uint32Array;
}

const FILTER_SHIFT = 12; // top 20 bits of the hash pick the filter bit

function hasBit(bits: Uint32Array, h: number): boolean {
  const i = h >>> FILTER_SHIFT;
  return ((bits[i >>> 5]! >>> (i & 31)) & 1) === 1;
}

export interface TextMatch {
  body: number;
  how: "lines" | "shingles";
  /** 1-based lines in the scanned text where the copy starts and ends. */
  line: number;
  endLine: number;
  /** lines: distinctive lines in the run; shingles: shared shingles. */
  matched: number;
  /** lines: distinctive lines of the body; shingles: shingles of the body. */
  total: number;
}

const SHINGLE_SIZE = 8;
const SHINGLE_SHARE = 0.6;
/** Below this many shingles a body is too short for overlap to mean a copy. */
const MIN_SHINGLES = 8;
const MIN_LINE_CHARS = 12;

/** Trim and collapse whitespace; drop a trailing comment when no string could contain the `#`. */
export function normaliseLine(line: string): string {
  let s = line.trim();
  const hash = s.indexOf("#");
  if (hash > 0 && !/["']/.test(s.slice(0, hash))) s = s.slice(0, hash).trimEnd();
  return s.replace(/\s+/g, " ");
}

/** Blank and comment-only lines: they may sit inside a copied run without breaking it. */
function isFiller(norm: string): boolean {
  return norm === "" || norm.startsWith("#");
}

/** Lines too common to say anything about where code came from. */
export function isTrivialLine(norm: string): boolean {
  return (
    norm.length < MIN_LINE_CHARS ||
    /^(pass|return|else:|try:|finally:|except:|continue|break|return None)$/.test(norm) ||
    /^return [A-Za-z_]\w*$/.test(norm) ||
    /^[()[\]{},:;]+$/.test(norm) ||
    // a keyword argument passed through under its own name (`include_mlps=include_mlps,`): every caller writes it
    /^([A-Za-z_]\w*)=\1,?\)?[,:]?$/.test(norm) ||
    /^raise NotImplementedError\b/.test(norm)
  );
}

/** Body text without a leading docstring (the masked file keeps the docstring, so it proves nothing). */
function stripDocstring(body: string): string {
  const lines = body.split(/\r?\n/);
  const first = lines.findIndex((l) => l.trim() !== "");
  if (first < 0) return body;
  const m = /^\s*[rRuUbB]{0,2}("""|''')/.exec(lines[first]!);
  if (!m) return body;
  const quote = m[1]!;
  const rest = lines[first]!.slice(m[0].length);
  let last = first;
  if (!rest.includes(quote)) {
    last = lines.findIndex((l, i) => i > first && l.includes(quote));
    if (last < 0) return body;
  }
  return lines.slice(last + 1).join("\n");
}

export function distinctiveLines(body: string): string[] {
  return stripDocstring(body)
    .split(/\r?\n/)
    .map(normaliseLine)
    .filter((n) => !isFiller(n) && !isTrivialLine(n));
}

const TOKEN =
  /[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*|\d[\w.]*|#[^\n]*|"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\*\*=?|\/\/=?|<<=?|>>=?|->|[-+*/%&|^<>=!:@]=|\S/g;

/** Rolling polynomial hash of the last SHINGLE_SIZE token hashes (mod 2^32). */
const BASE = 0x01000193;
const BASE_POW = Array.from({ length: SHINGLE_SIZE - 1 }).reduce<number>((p) => Math.imul(p, BASE), 1);

function hashToken(token: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  return h;
}

/**
 * Calls `visit(shingleHash, startIndexOfFirstToken)` for every 8-token window. Comments and
 * commas are not tokens (formatters add trailing commas); quotes are normalised.
 */
function forEachShingle(text: string, visit: (hash: number, at: number) => void): void {
  const window: number[] = new Array<number>(SHINGLE_SIZE).fill(0);
  const starts: number[] = new Array<number>(SHINGLE_SIZE).fill(0);
  let count = 0;
  let h = 0;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m !== null; m = TOKEN.exec(text)) {
    let tok = m[0];
    const c = tok.charCodeAt(0);
    if (c === 35 /* # */ || c === 44 /* , */ || c === 92 /* \ */) continue;
    if (c === 39 /* ' */) tok = `"${tok.slice(1, -1)}"`;
    const t = hashToken(tok);
    const slot = count % SHINGLE_SIZE;
    if (count >= SHINGLE_SIZE) h = (h - Math.imul(window[slot]!, BASE_POW)) | 0;
    h = (Math.imul(h, BASE) + t) | 0;
    window[slot] = t;
    starts[slot] = m.index;
    count++;
    if (count >= SHINGLE_SIZE) visit(h >>> 0, starts[count % SHINGLE_SIZE]!);
  }
}

export function buildFingerprints(bodies: { target: string; text: string }[]): Fingerprints {
  const fp: Fingerprints = { bodies: [], lineIndex: new Map(), shingleIndex: new Map(), shingleBits: new Uint32Array(1 << 15) };
  for (const [b, { target, text }] of bodies.entries()) {
    const lines = distinctiveLines(text);
    const shingles = new Set<number>();
    forEachShingle(stripDocstring(text), (h) => shingles.add(h));
    if (shingles.size < MIN_SHINGLES) shingles.clear();
    fp.bodies.push({ target, lines, shingles });
    lines.forEach((line, pos) => {
      const at = fp.lineIndex.get(line);
      if (at) at.push({ body: b, pos });
      else fp.lineIndex.set(line, [{ body: b, pos }]);
    });
    for (const h of shingles) {
      const i = h >>> FILTER_SHIFT;
      fp.shingleBits[i >>> 5]! |= 1 << (i & 31);
      const at = fp.shingleIndex.get(h);
      if (!at) fp.shingleIndex.set(h, [b]);
      else if (at[at.length - 1] !== b) at.push(b);
    }
  }
  return fp;
}

/** Copies of any fingerprinted body in `text`: at most one match per body (its longest line run, else its token overlap). */
export function findCopies(text: string, fp: Fingerprints, minLines: number): TextMatch[] {
  const byBody = new Map<number, TextMatch>();
  const lines = text.split("\n");
  // key = body * 2^20 + position in the body's distinctive lines → the run ending there.
  let active = new Map<number, { start: number; len: number }>();
  for (let i = 0; i < lines.length; i++) {
    const norm = normaliseLine(lines[i]!);
    if (isFiller(norm) || isTrivialLine(norm)) continue;
    const hits = fp.lineIndex.get(norm);
    if (!hits) {
      if (active.size > 0) active = new Map();
      continue;
    }
    const next = new Map<number, { start: number; len: number }>();
    for (const { body, pos } of hits) {
      const prev = active.get(body * 1_048_576 + pos - 1);
      const run = prev ? { start: prev.start, len: prev.len + 1 } : { start: i, len: 1 };
      next.set(body * 1_048_576 + pos, run);
      if (run.len < minLines) continue;
      // The longest run per body is the copy; shorter ones elsewhere are often shared idioms.
      const seen = byBody.get(body);
      if (!seen || run.len > seen.matched) {
        byBody.set(body, { body, how: "lines", line: run.start + 1, endLine: i + 1, matched: run.len, total: fp.bodies[body]!.lines.length });
      }
    }
    active = next;
  }
  if (fp.shingleIndex.size > 0) addShingleMatches(text, fp, byBody);
  return [...byBody.values()].sort((a, b) => a.line - b.line || a.body - b.body);
}

/** Shared windows at most this far apart belong to one copy (one edited token hides SHINGLE_SIZE windows). */
const CLUSTER_GAP = 2 * SHINGLE_SIZE + 1;

function addShingleMatches(text: string, fp: Fingerprints, byBody: Map<number, TextMatch>): void {
  // Per body: distinct shared shingles, and the cluster of shared windows with the most hits,
  // which is where the copy is (a stray idiom elsewhere would otherwise move the reported line).
  interface Cluster {
    start: number;
    end: number;
    lastWindow: number;
    hits: number;
  }
  const shared = new Map<number, { hashes: Set<number>; current: Cluster; best: Cluster }>();
  let window = 0;
  forEachShingle(text, (h, at) => {
    window++;
    if (!hasBit(fp.shingleBits, h)) return;
    const bodies = fp.shingleIndex.get(h);
    if (!bodies) return;
    for (const b of bodies) {
      const s = shared.get(b);
      if (!s) {
        const current = { start: at, end: at, lastWindow: window, hits: 1 };
        shared.set(b, { hashes: new Set([h]), current, best: current });
        continue;
      }
      s.hashes.add(h);
      if (window - s.current.lastWindow <= CLUSTER_GAP) {
        s.current.end = at;
        s.current.lastWindow = window;
        s.current.hits++;
      } else {
        s.current = { start: at, end: at, lastWindow: window, hits: 1 };
      }
      if (s.current.hits > s.best.hits) s.best = s.current;
    }
  });
  for (const [b, s] of shared) {
    const total = fp.bodies[b]!.shingles.size;
    if (byBody.has(b) || s.hashes.size < SHINGLE_SHARE * total) continue;
    byBody.set(b, { body: b, how: "shingles", line: lineAt(text, s.best.start), endLine: lineAt(text, s.best.end), matched: s.hashes.size, total });
  }
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < index; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

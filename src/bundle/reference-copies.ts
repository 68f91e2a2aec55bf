import { lstat, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { listFiles } from "../core/hash.js";
import type { ReferenceCopy } from "./types.js";

/** One reference text to look for: the exact span the masker replaced. */
export interface ReferenceText {
  /** `file::symbol`, reported with each copy found. */
  target: string;
  text: string;
}

/** How many distinctive reference lines in a row make a copy. */
export const MIN_RUN = 3;
/** Files larger than this are data, not code a reader would copy from. */
const MAX_SCAN_BYTES = 4 * 1024 * 1024;

/** Trim and collapse runs of whitespace, so re-indented copies still match. */
export function normaliseLine(line: string): string {
  return line.trim().replace(/\s+/g, " ");
}

const TRIVIAL = [
  /^[()[\]{},:;.\s]*$/, // brackets and punctuation only
  /^#/, // comments: the code lines around them decide
  /^(pass|break|continue|return|yield|raise|else:|try:|finally:|except:|"""|''')$/,
  /^return [\w.]+$/, // `return x`
  /^raise NotImplementedError(\(.*\))?$/,
];

/** A line that says nothing about the reference: blank, bracket-only, `pass`, `return x`... */
export function isTrivialLine(norm: string): boolean {
  return norm.length < 4 || TRIVIAL.some((re) => re.test(norm));
}

interface NumberedLine {
  text: string;
  line: number;
}

function distinctiveLines(text: string): NumberedLine[] {
  const out: NumberedLine[] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const norm = normaliseLine(raw);
    if (!isTrivialLine(norm)) out.push({ text: norm, line: i + 1 });
  });
  return out;
}

interface Pattern {
  target: string;
  size: number;
  grams: Set<string>;
}

/**
 * The k-grams (k = MIN_RUN, or fewer for a short reference with at least two
 * distinctive lines) of consecutive distinctive lines of each reference.
 * References with fewer than two distinctive lines cannot be told apart from
 * ordinary code and are not looked for.
 */
function buildPatterns(references: ReferenceText[]): Pattern[] {
  const patterns: Pattern[] = [];
  for (const ref of references) {
    const lines = distinctiveLines(ref.text).map((l) => l.text);
    if (lines.length < 2) continue;
    const size = Math.min(MIN_RUN, lines.length);
    const grams = new Set<string>();
    for (let i = 0; i + size <= lines.length; i++) grams.add(lines.slice(i, i + size).join("\n"));
    patterns.push({ target: ref.target, size, grams });
  }
  return patterns;
}

/** Runs of matching windows in one text, merged so that one copy is one finding. */
function matchText(text: string, patterns: Pattern[]): Omit<ReferenceCopy, "file">[] {
  const lines = distinctiveLines(text);
  const found: Omit<ReferenceCopy, "file">[] = [];
  for (const p of patterns) {
    let run: { first: number; last: number } | undefined;
    const flush = (): void => {
      if (!run) return;
      found.push({ target: p.target, start_line: lines[run.first]!.line, end_line: lines[run.last]!.line, lines: run.last - run.first + 1 });
      run = undefined;
    };
    for (let i = 0; i + p.size <= lines.length; i++) {
      const window = lines.slice(i, i + p.size).map((l) => l.text).join("\n");
      if (p.grams.has(window)) {
        const last = i + p.size - 1;
        if (run && i <= run.last + 1) run.last = last;
        else {
          flush();
          run = { first: i, last };
        }
      }
    }
    flush();
  }
  return found;
}

/** Code and markdown cell sources of a notebook, or undefined when the text is not one. */
function notebookCells(text: string): string[] | undefined {
  try {
    const nb = JSON.parse(text) as { cells?: { source?: string | string[] }[] };
    if (!Array.isArray(nb.cells)) return undefined;
    return nb.cells.map((c) => (Array.isArray(c.source) ? c.source.join("") : typeof c.source === "string" ? c.source : ""));
  } catch {
    return undefined;
  }
}

async function readTextFile(path: string): Promise<string | undefined> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    if (size > MAX_SCAN_BYTES) return undefined;
    const head = Buffer.alloc(Math.min(size, 8192));
    await handle.read(head, 0, head.length, 0);
    if (head.includes(0)) return undefined; // binary
  } finally {
    await handle.close();
  }
  return readFile(path, "utf8");
}

/**
 * Every place in `workspaceDir` (all files, the masked targets included) that
 * holds MIN_RUN or more consecutive distinctive lines of a reference body, after
 * whitespace normalisation. Notebooks are scanned cell by cell; binary files
 * and files over 4 MiB are skipped. Symlinks are not followed.
 */
export async function findReferenceCopies(workspaceDir: string, references: ReferenceText[]): Promise<ReferenceCopy[]> {
  const patterns = buildPatterns(references);
  if (patterns.length === 0) return [];
  const copies: ReferenceCopy[] = [];
  for (const file of await listFiles(workspaceDir)) {
    const abs = join(workspaceDir, file);
    if (!(await lstat(abs)).isFile()) continue; // a symlink may point anywhere
    const text = await readTextFile(abs).catch(() => undefined);
    if (text === undefined) continue;
    const cells = file.endsWith(".ipynb") ? notebookCells(text) : undefined;
    if (cells) {
      cells.forEach((source, cell) => {
        for (const m of matchText(source, patterns)) copies.push({ file, ...m, cell });
      });
    } else {
      for (const m of matchText(text, patterns)) copies.push({ file, ...m });
    }
  }
  return copies;
}

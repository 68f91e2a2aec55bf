import { Edit, type Parser } from "web-tree-sitter";
import { LmrError } from "../../core/errors.js";
import { findSyntaxError, type Tree } from "../../lang/python-parser.js";
import { pointAfter, type TextEdit } from "../apply-edits.js";
import { findLineStart } from "../text-layout.js";

/**
 * How the masked source is re-parsed:
 * - "changed": only the definitions that hold an edit, each parsed on its own
 *   at its own indentation (behind an `if 1:` line when indented). A statement
 *   inside a block starts on a fresh line with no open bracket, and every line
 *   of it is indented deeper than its first line, so it parses the same alone
 *   as in its file; the input parsed without errors and everything outside the
 *   definitions is byte-identical, so the result has an error iff a changed
 *   definition has one. Cost: the size of the definitions, not of the file.
 * - "full": the whole result, incrementally from the input's tree.
 * - "none": no re-parse (benchmarks).
 */
export type VerifyMode = "changed" | "full" | "none";

export function verifyMasked(parser: Parser, tree: Tree, masked: string, edits: readonly TextEdit[], mode: VerifyMode, file?: string): void {
  if (mode === "none" || edits.length === 0) return;
  const line = mode === "full" ? findErrorFull(parser, tree, masked, edits) : findErrorChanged(parser, masked, edits);
  if (line === undefined) return;
  throw new LmrError({
    code: "mask/parse-error",
    kind: "check",
    file,
    pointer: `line ${line}`,
    message: `the masked source does not parse (error at line ${line} of the result)`,
    hint: "this is a masker bug or an unusual layout; report the file and symbol",
  });
}

/** 1-based line of the first error in the result, or undefined. */
function findErrorFull(parser: Parser, tree: Tree, masked: string, edits: readonly TextEdit[]): number | undefined {
  const old = tree.copy();
  let fresh: Tree | null = null;
  try {
    for (const e of [...edits].sort((a, b) => b.start - a.start)) {
      old.edit(
        new Edit({
          startIndex: e.start,
          oldEndIndex: e.end,
          newEndIndex: e.start + e.text.length,
          startPosition: e.startPoint,
          oldEndPosition: e.endPoint,
          newEndPosition: pointAfter(e.startPoint, e.text),
        }),
      );
    }
    fresh = parser.parse(masked, old);
    if (!fresh) return 1;
    const bad = findSyntaxError(fresh.rootNode);
    return bad ? bad.startPosition.row + 1 : undefined;
  } finally {
    old.delete();
    fresh?.delete();
  }
}

function findErrorChanged(parser: Parser, masked: string, edits: readonly TextEdit[]): number | undefined {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let shift = 0;
  let rowShift = 0;
  let i = 0;
  for (const c of findOutermost(edits)) {
    // Edits are inside their containers, and the outermost containers are disjoint: what precedes c shifted it.
    for (; i < sorted.length && sorted[i]!.start < c.start; i++) ({ shift, rowShift } = addShift(sorted[i]!, shift, rowShift));
    const start = c.start + shift;
    const startRow = c.row + rowShift;
    for (; i < sorted.length && sorted[i]!.start <= c.end; i++) ({ shift, rowShift } = addShift(sorted[i]!, shift, rowShift));
    const line = findErrorInPiece(parser, masked, start, c.end + shift);
    if (line !== undefined) return startRow + line;
  }
  return undefined;
}

function addShift(e: TextEdit, shift: number, rowShift: number): { shift: number; rowShift: number } {
  return { shift: shift + e.text.length - (e.end - e.start), rowShift: rowShift + pointAfter(e.startPoint, e.text).row - e.endPoint.row };
}

type Container = NonNullable<TextEdit["container"]>;

/** The containers not inside another one (definitions nest or are disjoint), in source order. */
function findOutermost(edits: readonly TextEdit[]): Container[] {
  const all = edits.map((e) => {
    if (!e.container) throw new Error("edit without its definition range");
    return e.container;
  });
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Container[] = [];
  for (const c of all) {
    const last = out[out.length - 1];
    if (!last || c.start >= last.end) out.push(c);
  }
  return out;
}

/** 1-based line, relative to the piece, of the first error in masked[start, end), parsed at its indentation. */
function findErrorInPiece(parser: Parser, masked: string, start: number, end: number): number | undefined {
  const lineStart = findLineStart(masked, start);
  const indented = lineStart < start;
  const piece = parser.parse(`${indented ? "if 1:\n" : ""}${masked.slice(lineStart, end)}`);
  if (!piece) return 1;
  try {
    const bad = findSyntaxError(piece.rootNode);
    return bad ? Math.max(1, bad.startPosition.row + (indented ? 0 : 1)) : undefined;
  } finally {
    piece.delete();
  }
}

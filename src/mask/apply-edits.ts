import { LmrError } from "../core/errors.js";

/** A row/column pair as tree-sitter counts them (0-based; columns in string units). */
export interface Point {
  row: number;
  column: number;
}

/** Replace source[start, end) (string indices) with `text`. `owner` is the spec the edit came from. */
export interface TextEdit {
  start: number;
  end: number;
  startPoint: Point;
  endPoint: Point;
  text: string;
  owner: number;
  /** The definition the edit belongs to (original indices, decorators included): what "changed" verification re-parses. */
  container?: { start: number; end: number; row: number };
}

/**
 * Rejects edits of different targets that touch the same text (two targets
 * nested in each other, or the same target twice). `label(owner)` names a target.
 */
export function checkOverlaps(edits: readonly TextEdit[], label: (owner: number) => string, file?: string): void {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const next = sorted[i]!;
    if (prev.owner === next.owner) continue;
    if (next.start < prev.end || next.start === prev.start) {
      throw new LmrError({
        code: "mask/overlapping-targets",
        file,
        message: `targets ${label(prev.owner)} and ${label(next.owner)} overlap (line ${prev.startPoint.row + 1})`,
        hint: "mask the outer target only, or pick targets that do not contain each other",
      });
    }
  }
}

/** Applies edits bottom-up (descending offsets) so every edit's offsets stay valid. Edits must not overlap. */
export function applyEdits(source: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start || b.end - a.end);
  let out = source;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/** Where `text` ends when inserted at `start`. */
export function pointAfter(start: Point, text: string): Point {
  const lastBreak = text.lastIndexOf("\n");
  if (lastBreak < 0) return { row: start.row, column: start.column + text.length };
  let rows = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) rows++;
  return { row: start.row + rows, column: text.length - lastBreak - 1 };
}

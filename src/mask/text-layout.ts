/**
 * Small text helpers the maskers share: line breaks, indentation, and
 * string-index → UTF-8 byte conversion. All positions are JS string indices
 * unless a name says bytes.
 */

/** Index of the first character of the line that holds `index`. */
export function findLineStart(source: string, index: number): number {
  return source.lastIndexOf("\n", index - 1) + 1;
}

/** The leading whitespace (spaces, tabs, form feeds) of the line that holds `index`. */
export function readLineIndent(source: string, index: number): string {
  const start = findLineStart(source, index);
  let end = start;
  while (end < source.length) {
    const c = source.charCodeAt(end);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0c) break;
    end++;
  }
  return source.slice(start, end);
}

/** True when only whitespace precedes `index` on its line. */
export function startsItsLine(source: string, index: number): boolean {
  const start = findLineStart(source, index);
  return readLineIndent(source, start).length === index - start;
}

/**
 * The line break to use near `index`: the one that ends that line, else the
 * file's first one, else "\n". Files with mixed endings keep the local style.
 */
export function detectEol(source: string, index: number): string {
  const local = source.indexOf("\n", index);
  const at = local >= 0 ? local : source.indexOf("\n");
  if (at < 0) return "\n";
  return at > 0 && source.charCodeAt(at - 1) === 0x0d ? "\r\n" : "\n";
}

/** Converts string indices of one source to UTF-8 byte offsets, with a fast path for ASCII text. */
export class ByteOffsets {
  private readonly lineIndex: number[] = [];
  private readonly lineByte: number[] = [];

  constructor(private readonly source: string) {
    // ASCII text (byte length = string length) needs no table; Buffer.byteLength is native and fast.
    if (Buffer.byteLength(source, "utf8") === source.length) return;
    // Non-ASCII text: a table of line starts turns each lookup into a binary search plus one short slice.
    let byte = 0;
    let index = 0;
    while (index <= source.length) {
      this.lineIndex.push(index);
      this.lineByte.push(byte);
      const next = source.indexOf("\n", index);
      if (next < 0) break;
      byte += Buffer.byteLength(source.slice(index, next + 1), "utf8");
      index = next + 1;
    }
  }

  at(index: number): number {
    if (this.lineIndex.length === 0) return index;
    let lo = 0;
    let hi = this.lineIndex.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineIndex[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    const from = this.lineIndex[lo]!;
    return this.lineByte[lo]! + Buffer.byteLength(this.source.slice(from, index), "utf8");
  }
}

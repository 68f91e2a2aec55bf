/** A Python logical line: one or more physical lines joined by open brackets, strings or backslashes. */
export interface LogicalLine {
  /** 0-based indices of its first and last physical line. */
  first: number;
  last: number;
}

/**
 * Group physical lines (without terminators) into logical lines, the unit
 * IPython's input transformers work on: a `%magic` or `!cmd` only counts at the
 * start of a logical line, never inside a bracket or a multi-line string.
 */
export function splitLogicalLines(lines: string[]): LogicalLine[] {
  const out: LogicalLine[] = [];
  let depth = 0;
  let quote: string | undefined; // open string delimiter: ', ", ''' or """
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (start < 0) start = i;
    let continued = false;
    for (let j = 0; j < line.length; j++) {
      const ch = line[j]!;
      if (quote) {
        if (ch === "\\") j++;
        else if (line.startsWith(quote, j)) {
          j += quote.length - 1;
          quote = undefined;
        }
        continue;
      }
      if (ch === "#") break;
      if (ch === '"' || ch === "'") {
        quote = line.startsWith(ch.repeat(3), j) ? ch.repeat(3) : ch;
        j += quote.length - 1;
      } else if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch)) depth = Math.max(0, depth - 1);
      else if (ch === "\\" && j === line.length - 1) continued = true;
    }
    // An unterminated one-quote string ends with its line (a syntax error Python reports later).
    if (quote && quote.length === 1 && !line.endsWith("\\")) quote = undefined;
    if (depth === 0 && !quote && !continued) {
      out.push({ first: start, last: i });
      start = -1;
    }
  }
  if (start >= 0) out.push({ first: start, last: lines.length - 1 });
  return out;
}

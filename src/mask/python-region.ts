import { LmrError } from "../core/errors.js";
import type { LineRef } from "../manifest/types.js";
import type { Node } from "../lang/python-parser.js";
import type { TextEdit } from "./apply-edits.js";
import { RAISE_LINE, formatTodo } from "./python-body.js";
import { listBodyItems, trimDedentedComments, type PyDef } from "./python-index.js";
import { detectEol, findLineStart, readLineIndent, startsItsLine } from "./text-layout.js";

/**
 * The edit for mode "region": whole statements from line `start` to line
 * `end` (inclusive, anywhere inside the target's body, nested blocks too)
 * become a TODO comment and `raise NotImplementedError`; the rest stays.
 */
export function planRegionEdit(
  source: string,
  def: PyDef,
  region: { start: LineRef; end: LineRef },
  owner: number,
  file: string | undefined,
): TextEdit {
  const startLine = resolveLineRef(source, def, region.start, "start", file);
  const endLine = resolveLineRef(source, def, region.end, "end", file);
  const fail = (message: string, hint: string): never => {
    throw new LmrError({ code: "mask/bad-region", kind: "input", file, pointer: def.qualname, message, hint });
  };
  if (endLine < startLine) fail(`region end (line ${endLine}) is before its start (line ${startLine})`, "swap start and end");
  const items = listBodyItems(def.node);
  const first = items[0];
  const lastItem = items[items.length - 1];
  if (!first || !lastItem) return fail(`${def.qualname} has no body`, "pick another target");
  const bodyFirst = first.startPosition.row + 1;
  const bodyLast = lastItem.endPosition.row + 1;
  if (startLine < bodyFirst || endLine > bodyLast) {
    fail(`region lines ${startLine}-${endLine} are not inside the body of ${def.qualname} (lines ${bodyFirst}-${bodyLast})`, "give lines of the function's body");
  }
  const run = findStatementRun(items, startLine - 1, endLine - 1);
  if (!run) {
    return fail(
      `region lines ${startLine}-${endLine} of ${def.qualname} do not cover whole statements`,
      "start the region on the first line of a statement and end it on the last line of a statement in the same block",
    );
  }
  if (!startsItsLine(source, run.first.startIndex)) {
    fail(`region line ${startLine} shares its line with code before it`, "mask the enclosing statement, or use mode body");
  }
  const statement = run.items.find((n) => n.type !== "comment") ?? run.first;
  const indent = readLineIndent(source, statement.startIndex);
  const eol = detectEol(source, run.first.startIndex);
  const start = findLineStart(source, run.first.startIndex);
  return {
    start,
    startPoint: { row: run.first.startPosition.row, column: 0 },
    end: run.last.endIndex,
    endPoint: run.last.endPosition,
    text: `${indent}${formatTodo(def.qualname)}${eol}${indent}${RAISE_LINE}`,
    owner,
  };
}

interface StatementRun {
  first: Node;
  last: Node;
  items: Node[];
}

/** Consecutive siblings in one block that start exactly on row `s` and end exactly on row `e`; the outermost block wins. */
function findStatementRun(items: Node[], s: number, e: number): StatementRun | undefined {
  const i = items.findIndex((n) => n.startPosition.row === s);
  let j = -1;
  for (let k = items.length - 1; k >= 0; k--) {
    if (items[k]!.endPosition.row === e) {
      j = k;
      break;
    }
  }
  if (i >= 0 && j >= i) {
    const before = items[i - 1];
    const after = items[j + 1];
    if ((!before || before.endPosition.row < s) && (!after || after.startPosition.row > e)) {
      return { first: items[i]!, last: items[j]!, items: items.slice(i, j + 1) };
    }
  }
  const holder = items.find((n) => n.startPosition.row <= s && n.endPosition.row >= e);
  if (!holder || holder.type === "comment") return undefined;
  for (const inner of listNestedBlocks(holder)) {
    const run = findStatementRun(inner, s, e);
    if (run) return run;
  }
  return undefined;
}

/** The statement lists directly inside a compound statement or definition (not through expressions). */
function listNestedBlocks(statement: Node): Node[][] {
  if (statement.type === "decorated_definition") {
    const def = statement.childForFieldName("definition");
    return def ? listNestedBlocks(def) : [];
  }
  if (statement.type === "function_definition" || statement.type === "class_definition") return [listBodyItems(statement)];
  const out: Node[][] = [];
  for (const child of statement.namedChildren) {
    if (child.type === "block") out.push(trimDedentedComments(child.namedChildren));
    else if (child.type.endsWith("_clause")) out.push(...listNestedBlocks(child));
  }
  return out;
}

/** A LineRef as a 1-based line: `{line}` as is, `{anchor, occurrence}` = the n-th line at/after the `def` that contains the text. */
function resolveLineRef(source: string, def: PyDef, ref: LineRef, which: "start" | "end", file: string | undefined): number {
  if ("line" in ref) {
    if (!Number.isInteger(ref.line) || ref.line < 1) {
      throw new LmrError({ code: "mask/bad-region", kind: "input", file, pointer: `region.${which}.line`, message: `region ${which} line must be a positive integer, got ${String(ref.line)}` });
    }
    return ref.line;
  }
  const wanted = ref.occurrence ?? 1;
  if (ref.anchor === "" || !Number.isInteger(wanted) || wanted < 1) {
    throw new LmrError({ code: "mask/bad-region", kind: "input", file, pointer: `region.${which}`, message: `region ${which} needs a non-empty anchor and a positive occurrence` });
  }
  let lineStart = findLineStart(source, def.node.startIndex);
  let line = def.line;
  let seen = 0;
  while (lineStart < def.outer.endIndex) {
    const next = source.indexOf("\n", lineStart);
    const lineEnd = next < 0 ? source.length : next;
    if (source.slice(lineStart, lineEnd).includes(ref.anchor) && ++seen === wanted) return line;
    if (next < 0) break;
    lineStart = next + 1;
    line++;
  }
  throw new LmrError({
    code: "mask/anchor-not-found",
    kind: "input",
    file,
    pointer: `region.${which}.anchor`,
    message: `anchor ${JSON.stringify(ref.anchor)} occurs ${seen} time(s) in ${def.qualname}, wanted occurrence ${wanted}`,
    hint: "anchors are searched from the `def` line to the end of the definition",
  });
}

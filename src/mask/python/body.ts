import type { Node } from "../../lang/python-parser.js";
import type { Point, TextEdit } from "../apply-edits.js";
import { describeBody, findHeaderColon, type PyDef, type PyIndex } from "./symbols.js";
import { detectEol, findLineStart, readLineIndent } from "../text-layout.js";

export const RAISE_LINE = "raise NotImplementedError";

export function formatTodo(symbol: string): string {
  return `# TODO: implement ${symbol}`;
}

/**
 * The edit for mode "body": keep decorators, header and docstring; replace
 * the rest with a TODO comment and `raise NotImplementedError` at the body's
 * indentation.
 *
 * - multi-line body, no docstring: whole lines from the first body line
 *   (leading comments included) to the end of the last statement;
 * - multi-line body with docstring: from the docstring's end;
 * - body on the header line (`def f(x): return x`): from the colon; the
 *   new body goes on fresh lines indented one unit deeper than the `def`
 *   (a docstring there moves along, since a one-line suite cannot be
 *   followed by an indented block).
 */
export function planBodyEdit(source: string, def: PyDef, indentUnit: string, owner: number): TextEdit {
  const node = def.node;
  const shape = describeBody(node);
  if (!shape) throw new Error(`definition ${def.qualname} has an empty body`);
  const { colon, first, firstStatement, docstring, last } = shape;
  const eol = detectEol(source, colon.endIndex);
  const todo = formatTodo(def.qualname);

  if (firstStatement.startPosition.row === colon.endPosition.row) {
    const indent = readLineIndent(source, node.startIndex) + indentUnit;
    const doc = docstring ? `${eol}${indent}${docstring.text}` : "";
    return makeEdit(colon.endIndex, colon.endPosition, last, `${doc}${eol}${indent}${todo}${eol}${indent}${RAISE_LINE}`, owner);
  }
  const indent = readLineIndent(source, firstStatement.startIndex);
  if (docstring) {
    return makeEdit(docstring.endIndex, docstring.endPosition, last, `${eol}${indent}${todo}${eol}${indent}${RAISE_LINE}`, owner);
  }
  const start = findLineStart(source, first.startIndex);
  return makeEdit(start, { row: first.startPosition.row, column: 0 }, last, `${indent}${todo}${eol}${indent}${RAISE_LINE}`, owner);
}

function makeEdit(start: number, startPoint: Point, last: Node, text: string, owner: number): TextEdit {
  return { start, startPoint, end: last.endIndex, endPoint: last.endPosition, text, owner };
}

/**
 * The file's indentation unit: the step between the first definition with a
 * multi-line body and that body. Used only for bodies that sit on the header line.
 */
export function detectIndentUnit(source: string, index: PyIndex): string {
  for (const d of index.defs) {
    const body = d.node.childForFieldName("body");
    if (!body || body.startPosition.row === findHeaderColon(d.node).endPosition.row) continue;
    const outer = readLineIndent(source, d.node.startIndex);
    const inner = readLineIndent(source, body.startIndex);
    if (inner.length > outer.length && inner.startsWith(outer)) return inner.slice(outer.length);
  }
  return "    ";
}

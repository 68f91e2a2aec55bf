import type { Node, Statement } from "ts-morph";
import { LmrError } from "../../core/errors.js";
import type { TsMorph } from "../../lang/ts-source.js";
import type { LineRef } from "../../manifest/types.js";
import type { TextEdit } from "../apply-edits.js";
import { formatTsThrow, formatTsTodo, makeEdit } from "./body.js";
import { nestedStatementLists, type TsDef } from "./symbols.js";
import { resolveRegionLine } from "../region-lines.js";
import { detectEol, findLineStart, readLineIndent, startsItsLine } from "../text-layout.js";

/**
 * The edit for mode "region": whole statements from line `start` to line
 * `end` (inclusive, in the target's body or a block nested in it) become a
 * TODO comment and the `throw`; the rest stays. In .ts/.tsx files the names
 * the region declared are declared again as `let NAME: any;` before the
 * throw, so code after the region (unreachable now) still type-checks.
 */
export function planTsRegionEdit(
  source: string,
  def: TsDef,
  region: { start: LineRef; end: LineRef },
  typed: boolean,
  morph: TsMorph,
  owner: number,
  file: string | undefined,
): TextEdit {
  const fail = (message: string, hint: string): never => {
    throw new LmrError({ code: "mask/bad-region", file, pointer: def.qualname, message, hint });
  };
  const body = def.body;
  if (!body || !morph.Node.isBlock(body)) return fail(`${def.qualname} has no block body`, "use mode body for an arrow function with an expression body");
  const scope = { start: def.headerStart, end: def.end, line: def.line, qualname: def.qualname, firstLine: "the header line" };
  const startLine = resolveRegionLine(source, scope, region.start, "start", file);
  const endLine = resolveRegionLine(source, scope, region.end, "end", file);
  if (endLine < startLine) fail(`region end (line ${endLine}) is before its start (line ${startLine})`, "swap start and end");
  const items = body.getStatements();
  if (items.length === 0) return fail(`${def.qualname} has an empty body`, "pick another target");
  const lineOf = (pos: number): number => body.getSourceFile().compilerNode.getLineAndCharacterOfPosition(pos).line + 1;
  const bodyFirst = lineOf(items[0]!.getStart());
  const bodyLast = lineOf(items[items.length - 1]!.getEnd());
  if (startLine < bodyFirst || endLine > bodyLast) {
    fail(
      `region lines ${startLine}-${endLine} are not inside the body of ${def.qualname} (lines ${bodyFirst}-${bodyLast})`,
      "give lines of the function's body",
    );
  }
  const run = findRun(items, startLine, endLine, lineOf, morph);
  if (!run) {
    return fail(
      `region lines ${startLine}-${endLine} of ${def.qualname} do not cover whole statements`,
      "start the region on the first line of a statement and end it on the last line of a statement in the same block",
    );
  }
  const first = run[0]!;
  const last = run[run.length - 1]!;
  if (!startsItsLine(source, first.getStart()))
    fail(`region line ${startLine} shares its line with code before it`, "mask the enclosing statement, or use mode body");
  const indent = readLineIndent(source, first.getStart());
  const eol = detectEol(source, first.getStart());
  const names = typed ? declaredNames(run, morph) : [];
  const lines = [formatTsTodo(def.qualname), ...(names.length > 0 ? [`let ${names.map((n) => `${n}: any`).join(", ")};`] : []), formatTsThrow(def.qualname)];
  return makeEdit(source, findLineStart(source, first.getStart()), last.getEnd(), lines.map((l) => indent + l).join(eol), owner);
}

/** Consecutive statements of one list that start on line `s` and end on line `e`; the outermost list wins. */
function findRun(items: Statement[], s: number, e: number, lineOf: (pos: number) => number, morph: TsMorph): Statement[] | undefined {
  const i = items.findIndex((n) => lineOf(n.getStart()) === s);
  let j = -1;
  for (let k = items.length - 1; k >= 0; k--) {
    if (lineOf(items[k]!.getEnd()) === e) {
      j = k;
      break;
    }
  }
  if (i >= 0 && j >= i) {
    const before = items[i - 1];
    const after = items[j + 1];
    if ((!before || lineOf(before.getEnd()) < s) && (!after || lineOf(after.getStart()) > e)) return items.slice(i, j + 1);
  }
  const holder = items.find((n) => lineOf(n.getStart()) <= s && lineOf(n.getEnd()) >= e);
  if (!holder) return undefined;
  for (const inner of nestedStatementLists(holder, morph)) {
    const run = findRun(inner, s, e, lineOf, morph);
    if (run) return run;
  }
  return undefined;
}

/** Names the statements declare at their own level (variables, functions, classes), destructuring included. */
function declaredNames(run: Statement[], morph: TsMorph): string[] {
  const N = morph.Node;
  const out: string[] = [];
  const fromBinding = (name: Node): void => {
    if (N.isIdentifier(name)) out.push(name.getText());
    else
      for (const b of name.getDescendantsOfKind(morph.ts.SyntaxKind.BindingElement)) if (N.isIdentifier(b.getNameNode())) out.push(b.getNameNode().getText());
  };
  for (const s of run) {
    if (N.isVariableStatement(s)) for (const d of s.getDeclarations()) fromBinding(d.getNameNode());
    else if ((N.isFunctionDeclaration(s) || N.isClassDeclaration(s)) && s.getName()) out.push(s.getName()!);
  }
  return [...new Set(out)];
}

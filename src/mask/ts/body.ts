import type { Node } from "ts-morph";
import type { TsMorph } from "../../lang/ts-source.js";
import type { TextEdit } from "../apply-edits.js";
import type { TsDef, TsIndex } from "./symbols.js";
import type { TsStubFacts } from "./types.js";
import { detectEol, readLineIndent, startsItsLine } from "../text-layout.js";

export function formatTsTodo(symbol: string): string {
  return `// TODO: implement ${symbol}`;
}

export function formatTsThrow(symbol: string): string {
  return `throw new Error(${JSON.stringify(`not implemented: ${symbol}`)});`;
}

/**
 * Lines after the `throw` that keep what TypeScript infers for a function with
 * no declared return type, when no type checker is at hand (ts-types.ts does
 * better with one): a body that only throws makes a declaration
 * `void` and an arrow `never`, and callers that used the value (`f().x`)
 * would get new type errors. `return undefined as any;` (unreachable, but
 * counted by inference) makes it `any`; in a generator `yield* …` does the
 * same for the yielded type. Only in .ts/.tsx files, only when the original
 * body returned or yielded a value.
 */
export function keepInferredTypes(def: TsDef, morph: TsMorph): string[] {
  const N = morph.Node;
  const fn = def.node;
  if (N.isConstructorDeclaration(fn) || N.isSetAccessorDeclaration(fn)) return [];
  if (N.isReturnTyped(fn) && fn.getReturnTypeNode()) return [];
  const body = def.body;
  if (!body) return [];
  if (!N.isBlock(body)) return ["return undefined as any;"];
  const { returns, yields } = scanReturns(body, morph);
  const generator = (N.isFunctionDeclaration(fn) || N.isFunctionExpression(fn) || N.isMethodDeclaration(fn)) && fn.isGenerator();
  const out: string[] = [];
  if (generator && yields) out.push("yield* (undefined as any);");
  if (returns) out.push("return undefined as any;");
  return out;
}

/** Whether a body returns a value or yields, not counting nested functions and classes. */
function scanReturns(body: Node, morph: TsMorph): { returns: boolean; yields: boolean } {
  const N = morph.Node;
  let returns = false;
  let yields = false;
  body.forEachDescendant((n, walk) => {
    if (N.isFunctionLikeDeclaration(n) || N.isClassExpression(n) || N.isClassDeclaration(n)) {
      walk.skip();
      return;
    }
    if (N.isReturnStatement(n) && n.getExpression()) returns = true;
    if (N.isYieldExpression(n)) yields = true;
  });
  return { returns, yields };
}

/** The file's indentation step: from the first block whose statements sit deeper than its `{` line. Default two spaces. */
export function detectTsIndentUnit(source: string, index: TsIndex, morph: TsMorph): string {
  for (const d of index.defs) {
    const body = d.body;
    if (!body || !morph.Node.isBlock(body)) continue;
    const first = body.getStatements()[0];
    if (!first || !startsItsLine(source, first.getStart())) continue;
    const outer = readLineIndent(source, body.getStart());
    const inner = readLineIndent(source, first.getStart());
    if (inner.length > outer.length && inner.startsWith(outer)) return inner.slice(outer.length);
  }
  return "  ";
}

export interface BodyContext {
  indentUnit: string;
  /** .ts/.tsx: keep callers' inferred types (see keepInferredTypes). */
  typed: boolean;
  morph: TsMorph;
  /** What the type checker says the stub of a definition needs (ts-types.ts); without it, or where it has no answer, keepInferredTypes. */
  stubFacts?: (def: TsDef) => TsStubFacts | undefined;
}

/** The lines after the throw: none in JavaScript. */
function stubTail(def: TsDef, ctx: BodyContext): string[] {
  if (!ctx.typed) return [];
  const facts = ctx.stubFacts?.(def);
  return facts ? [...facts.keep, ...facts.assign] : keepInferredTypes(def, ctx.morph);
}

/**
 * The edit for mode "body": everything between the body's braces becomes a
 * TODO comment and `throw new Error("not implemented: NAME")`; decorators,
 * modifiers, type parameters, the signature and the JSDoc stay. An arrow's
 * expression body becomes a block. In the constructor of a derived class a
 * leading `super(…)` call stays (a constructor without it does not compile).
 */
export function planTsBodyEdit(source: string, def: TsDef, ctx: BodyContext, owner: number): TextEdit {
  const N = ctx.morph.Node;
  const body = def.body;
  if (!body) throw new Error(`definition ${def.qualname} has no body`);
  const eol = detectEol(source, body.getStart());
  const lines = [formatTsTodo(def.qualname), formatTsThrow(def.qualname), ...stubTail(def, ctx)];

  if (!N.isBlock(body)) {
    const closing = readLineIndent(source, def.node.getStart());
    const inner = closing + ctx.indentUnit;
    const text = `{${eol}${lines.map((l) => inner + l).join(eol)}${eol}${closing}}`;
    return makeEdit(source, body.getStart(), body.getEnd(), text, owner);
  }
  const open = body.getStart();
  const close = body.getEnd() - 1;
  const statements = body.getStatements();
  const kept = def.derivedConstructor && statements[0] && isSuperCall(statements[0], ctx.morph) ? statements[0] : undefined;
  const closing = startsItsLine(source, close) ? readLineIndent(source, close) : readLineIndent(source, open);
  const firstInside = kept ? statements[1] : statements[0];
  const inner =
    firstInside && startsItsLine(source, firstInside.getStart()) && readLineIndent(source, firstInside.getStart()).length > closing.length
      ? readLineIndent(source, firstInside.getStart())
      : closing + ctx.indentUnit;
  const start = kept ? kept.getEnd() : open + 1;
  return makeEdit(source, start, close, `${eol}${lines.map((l) => inner + l).join(eol)}${eol}${closing}`, owner);
}

function isSuperCall(stmt: Node, morph: TsMorph): boolean {
  const N = morph.Node;
  if (!N.isExpressionStatement(stmt)) return false;
  const e = stmt.getExpression();
  return N.isCallExpression(e) && e.getExpression().getKind() === morph.ts.SyntaxKind.SuperKeyword;
}

export function makeEdit(source: string, start: number, end: number, text: string, owner: number): TextEdit {
  return { start, end, startPoint: pointOf(source, start), endPoint: pointOf(source, end), text, owner };
}

function pointOf(source: string, index: number): { row: number; column: number } {
  let row = 0;
  for (let i = source.indexOf("\n"); i >= 0 && i < index; i = source.indexOf("\n", i + 1)) row++;
  return { row, column: index - (source.lastIndexOf("\n", index - 1) + 1) };
}

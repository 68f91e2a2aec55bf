import type { ts as TsNamespace } from "ts-morph";

type Ts = typeof TsNamespace;

/** A function or method with a body, as the TypeScript compiler API sees it. */
export interface ApiDef {
  /** Start of the function-like node (decorators and modifiers included, trivia not). */
  start: number;
  /** 1-based line of `start`. */
  line: number;
  body: TsNamespace.Node;
}

/**
 * Every function and method of a file, found with the plain compiler API and
 * none of the masker's code: the sweep's independent count (as Python's
 * sweep counts with `ast`) and the benchmark's baseline. A definition is a
 * function-like node with a body that has a name: a function declaration, a
 * method, constructor or accessor (of a class or an object literal), or an
 * arrow function / function expression bound to a variable, a property, an
 * `export default` or an assignment to a dotted name. Anonymous callbacks are not
 * definitions (nothing can name them), though what they contain is.
 */
export function listApiDefinitions(ts: Ts, file: TsNamespace.SourceFile): ApiDef[] {
  const out: ApiDef[] = [];
  const visit = (node: TsNamespace.Node): void => {
    const body = (node as { body?: TsNamespace.Node }).body;
    if (body && isNamedFunction(ts, node)) {
      const start = node.getStart(file);
      out.push({ start, line: file.getLineAndCharacterOfPosition(start).line + 1, body });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

function isNamedFunction(ts: Ts, node: TsNamespace.Node): boolean {
  if (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  )
    return true;
  if (!ts.isArrowFunction(node) && !ts.isFunctionExpression(node)) return false;
  let holder = node.parent;
  while (
    ts.isParenthesizedExpression(holder) ||
    ts.isAsExpression(holder) ||
    ts.isSatisfiesExpression(holder) ||
    ts.isTypeAssertionExpression(holder) ||
    ts.isNonNullExpression(holder)
  )
    holder = holder.parent;
  if (ts.isVariableDeclaration(holder)) return ts.isIdentifier(holder.name);
  if (ts.isPropertyDeclaration(holder) || ts.isPropertyAssignment(holder) || ts.isExportAssignment(holder)) return true;
  if (ts.isBinaryExpression(holder) && holder.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
    let stmt: TsNamespace.Node = holder.parent;
    while (ts.isParenthesizedExpression(stmt)) stmt = stmt.parent;
    return ts.isExpressionStatement(stmt) && isDottedName(ts, holder.left);
  }
  return false;
}

function isDottedName(ts: Ts, n: TsNamespace.Node): boolean {
  return ts.isIdentifier(n) || (ts.isPropertyAccessExpression(n) && isDottedName(ts, n.expression));
}

/**
 * The benchmark's baseline masker: the same edit as the ts-morph masker's
 * (body → TODO comment and throw), made with the compiler API alone, for the
 * definition that starts at `start`; the result is parsed again and must have
 * no syntax diagnostic. Returns undefined when no definition starts there.
 */
export function maskWithCompilerApi(ts: Ts, source: string, fileName: string, start: number, name: string): string | undefined {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const def = listApiDefinitions(ts, file).find((d) => d.start === start);
  if (!def) return undefined;
  const lines = [`// TODO: implement ${name}`, `throw new Error(${JSON.stringify(`not implemented: ${name}`)});`];
  const lineIndent = (pos: number): string => /^[ \t]*/.exec(source.slice(source.lastIndexOf("\n", pos - 1) + 1))![0];
  let masked: string;
  if (ts.isBlock(def.body)) {
    const open = def.body.getStart(file);
    const close = def.body.getEnd() - 1;
    const closing = lineIndent(close);
    masked = `${source.slice(0, open + 1)}\n${lines.map((l) => `${closing}  ${l}`).join("\n")}\n${closing}${source.slice(close)}`;
  } else {
    const closing = lineIndent(def.start);
    masked = `${source.slice(0, def.body.getStart(file))}{\n${lines.map((l) => `${closing}  ${l}`).join("\n")}\n${closing}}${source.slice(def.body.getEnd())}`;
  }
  const check = ts.createSourceFile(fileName, masked, ts.ScriptTarget.Latest, false);
  const diagnostics = (check as unknown as { parseDiagnostics?: unknown[] }).parseDiagnostics ?? [];
  return diagnostics.length === 0 ? masked : undefined;
}

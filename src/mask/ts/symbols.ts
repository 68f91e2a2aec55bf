import type { ClassLikeDeclarationBase, Node, SourceFile, Statement } from "ts-morph";
import type { TsMorph } from "../../lang/ts-source.js";

/**
 * The definitions of a TypeScript/JavaScript file that can be masked, by
 * qualified name, walked with ts-morph:
 *
 * - `f`: a function declaration (`export default function` without a name is
 *   `default`), or an arrow function / function expression bound to a
 *   variable (`const f = () => …`);
 * - `C`: a class (declaration, or a class expression bound to a variable);
 *   `C.m`: its methods, `C.constructor`, getters and setters (`C.x` twice:
 *   give the line), static members, and properties holding a function;
 * - `obj.m`: methods and function-valued properties of an object literal
 *   bound to a variable, `export default {…}` (`default.m`) or an assignment
 *   (`module.exports.f = function …` is `module.exports.f`);
 * - `N.f`: inside a namespace; `outer.inner`: inside a function or method.
 *
 * Overload signatures, abstract methods and `declare`d functions have no body
 * and are not listed: an overloaded function is its implementation.
 */
export interface TsDef {
  qualname: string;
  kind: "function" | "method" | "class";
  /** 1-based line where the header starts (after decorators; `export`/`async`/`static` included). */
  line: number;
  /** 1-based line of the first decorator, when decorated. */
  decoratorLine?: number;
  /** The function-like node (or the class). */
  node: Node;
  /** String indices of the whole definition: decorators and modifiers included, leading JSDoc not. */
  start: number;
  end: number;
  /** Where the header starts: the first token after the decorators. */
  headerStart: number;
  /** The body: a Block, or an arrow function's expression. Absent for classes. */
  body?: Node;
  parent?: TsDef;
  /** The JSDoc comment right before the definition, as written. */
  jsdoc?: string;
  /** A constructor of a class that extends another: its body must call super(). */
  derivedConstructor?: boolean;
}

export interface TsIndex {
  defs: TsDef[];
  byName: Map<string, TsDef[]>;
}

/** What binds a value to its name (a statement, a property, a member): its range and header. */
interface Binding {
  start: number;
  end: number;
  headerStart: number;
  owner: Node;
}

export function indexTsDefinitions(file: SourceFile, morph: TsMorph): TsIndex {
  const { Node: N, ts } = morph;
  const K = ts.SyntaxKind;
  const defs: TsDef[] = [];
  const text = file.getFullText();
  const lineOf = (pos: number): number => file.compilerNode.getLineAndCharacterOfPosition(pos).line + 1;

  const bindingOf = (node: Node): Binding => {
    const decorators = N.isDecoratable(node) ? node.getDecorators() : [];
    const headerStart = decorators.length === 0 ? node.getStart() : skipTrivia(text, decorators[decorators.length - 1]!.getEnd());
    return { start: node.getStart(), end: node.getEnd(), headerStart, owner: node };
  };

  const add = (d: Omit<TsDef, "line" | "decoratorLine" | "jsdoc">, owner: Node): TsDef => {
    const def: TsDef = { ...d, line: lineOf(d.headerStart) };
    const decorators = N.isDecoratable(owner) ? owner.getDecorators() : [];
    if (decorators.length > 0) def.decoratorLine = lineOf(decorators[0]!.getStart());
    const docs = N.isJSDocable(owner) ? owner.getJsDocs() : [];
    if (docs.length > 0) def.jsdoc = docs[docs.length - 1]!.getText();
    defs.push(def);
    return def;
  };

  const addFunction = (qualname: string, fn: Node, bind: Binding, parent: TsDef | undefined, member: boolean): void => {
    const body = N.isBodyable(fn) || N.isBodied(fn) ? fn.getBody() : undefined;
    if (!body) {
      walk(fn, `${qualname}.`, parent); // an overload signature: nothing inside to mask
      return;
    }
    const def = add(
      {
        qualname,
        kind: member ? "method" : "function",
        node: fn,
        start: bind.start,
        end: bind.end,
        headerStart: bind.headerStart,
        body,
        ...(parent ? { parent } : {}),
      },
      bind.owner,
    );
    if (N.isConstructorDeclaration(fn) && parent && isClassLike(parent.node) && parent.node.getExtends()) def.derivedConstructor = true;
    walk(fn, `${qualname}.`, def);
  };

  const isClassLike = (n: Node): n is Node & ClassLikeDeclarationBase => N.isClassDeclaration(n) || N.isClassExpression(n);

  const addClass = (qualname: string, cls: Node & ClassLikeDeclarationBase, bind: Binding, parent: TsDef | undefined): void => {
    const def = add(
      { qualname, kind: "class", node: cls, start: bind.start, end: bind.end, headerStart: bind.headerStart, ...(parent ? { parent } : {}) },
      bind.owner,
    );
    for (const member of cls.getMembers()) {
      const own = bindingOf(member);
      if (N.isConstructorDeclaration(member)) addFunction(`${qualname}.constructor`, member, own, def, true);
      else if (N.isMethodDeclaration(member) || N.isGetAccessorDeclaration(member) || N.isSetAccessorDeclaration(member))
        addFunction(`${qualname}.${nameOf(member.getNameNode())}`, member, own, def, true);
      else if (N.isPropertyDeclaration(member)) {
        const init = member.getInitializer();
        if (init) bindValue(`${qualname}.${nameOf(member.getNameNode())}`, init, own, def, true);
      } else walk(member, `${qualname}.`, def); // static blocks, index signatures
    }
  };

  /** A value bound to a name: a function, a class, or an object literal whose members are walked; anything else is searched. */
  const bindValue = (qualname: string, value: Node, bind: Binding, parent: TsDef | undefined, member: boolean): void => {
    const v = unwrap(value);
    if (N.isArrowFunction(v) || N.isFunctionExpression(v)) addFunction(qualname, v, bind, parent, member);
    else if (N.isClassExpression(v)) addClass(qualname, v, bind, parent);
    else if (N.isObjectLiteralExpression(v)) visitObject(v, `${qualname}.`, parent);
    else visit(value, qualname.includes(".") ? qualname.slice(0, qualname.lastIndexOf(".") + 1) : "", parent);
  };

  const visitObject = (obj: Node, prefix: string, parent: TsDef | undefined): void => {
    if (!N.isObjectLiteralExpression(obj)) return;
    for (const prop of obj.getProperties()) {
      const own = bindingOf(prop);
      if (N.isMethodDeclaration(prop) || N.isGetAccessorDeclaration(prop) || N.isSetAccessorDeclaration(prop))
        addFunction(`${prefix}${nameOf(prop.getNameNode())}`, prop, own, parent, true);
      else if (N.isPropertyAssignment(prop)) {
        const init = prop.getInitializer();
        if (init) bindValue(`${prefix}${nameOf(prop.getNameNode())}`, init, own, parent, true);
      } else walk(prop, prefix, parent);
    }
  };

  /**
   * Every definition under `node`, named from `prefix`. Anonymous functions,
   * objects and other expressions add no name: a function declared inside a
   * callback of `outer` is `outer.inner`, a method of an object literal that
   * `outer` returns is `outer.m`.
   */
  const walk = (node: Node, prefix: string, parent: TsDef | undefined): void => {
    node.forEachChild((child) => visit(child, prefix, parent));
  };

  const visit = (n: Node, prefix: string, parent: TsDef | undefined): void => {
    if (N.isFunctionDeclaration(n)) addFunction(`${prefix}${n.getName() ?? "default"}`, n, bindingOf(n), parent, false);
    else if (N.isClassDeclaration(n)) addClass(`${prefix}${n.getName() ?? "default"}`, n, bindingOf(n), parent);
    else if (N.isClassExpression(n)) addClass(`${prefix}${n.getName() ?? "class"}`, n, bindingOf(n), parent);
    else if (N.isVariableStatement(n)) {
      const declarations = n.getDeclarations();
      for (const d of declarations) {
        const init = d.getInitializer();
        if (!init) continue;
        if (!N.isIdentifier(d.getNameNode())) {
          visit(init, prefix, parent);
          continue;
        }
        // one declarator: the statement (with `export const`) is the definition; several: each declarator
        const bind = declarations.length === 1 ? bindingOf(n) : { start: d.getStart(), end: d.getEnd(), headerStart: d.getStart(), owner: n };
        bindValue(`${prefix}${d.getName()}`, init, bind, parent, false);
      }
    } else if (N.isVariableDeclaration(n) && N.isIdentifier(n.getNameNode()) && n.getInitializer()) {
      // in a `for (const f = …;;)` head: no statement of its own
      bindValue(`${prefix}${n.getName()}`, n.getInitializer()!, { start: n.getStart(), end: n.getEnd(), headerStart: n.getStart(), owner: n }, parent, false);
    } else if (N.isExportAssignment(n)) {
      bindValue(`${prefix}default`, n.getExpression(), bindingOf(n), parent, false);
    } else if (N.isModuleDeclaration(n)) {
      if (N.isStringLiteral(n.getNameNode()))
        walk(n, prefix, parent); // `declare module "x"`
      else for (const s of n.getStatements()) visit(s, `${prefix}${n.getName().replace(/\s+/g, "")}.`, parent);
    } else if (N.isExpressionStatement(n) && isAssignment(n.getExpression())) {
      const expr = unwrap(n.getExpression());
      if (N.isBinaryExpression(expr)) bindValue(`${prefix}${expr.getLeft().getText().replace(/\s+/g, "")}`, expr.getRight(), bindingOf(n), parent, false);
    } else if (N.isObjectLiteralExpression(n)) {
      visitObject(n, prefix, parent);
    } else {
      walk(n, prefix, parent);
    }
  };

  const isAssignment = (e: Node): boolean => {
    const expr = unwrap(e);
    return N.isBinaryExpression(expr) && expr.getOperatorToken().getKind() === K.EqualsToken && isDottedName(expr.getLeft());
  };

  const isDottedName = (n: Node): boolean => N.isIdentifier(n) || (N.isPropertyAccessExpression(n) && isDottedName(n.getExpression()));

  /** Parentheses, `as`, `satisfies`, `<T>x` and `x!` around a value. */
  const unwrap = (node: Node): Node => {
    let n = node;
    while (N.isParenthesizedExpression(n) || N.isAsExpression(n) || N.isSatisfiesExpression(n) || N.isTypeAssertion(n) || N.isNonNullExpression(n))
      n = n.getExpression();
    return n;
  };

  /** A member's name as written: `x`, `#x`, `"a b"` → `a b`, `[Symbol.iterator]`. */
  const nameOf = (name: Node): string =>
    N.isStringLiteral(name) || N.isNoSubstitutionTemplateLiteral(name) ? name.getLiteralText() : name.getText().replace(/\s+/g, "");

  walk(file, "", undefined);
  const byName = new Map<string, TsDef[]>();
  for (const d of defs) {
    const list = byName.get(d.qualname);
    if (list) list.push(d);
    else byName.set(d.qualname, [d]);
  }
  return { defs, byName };
}

/** The statement lists directly inside a compound statement (not through expressions or functions). */
export function nestedStatementLists(stmt: Node, morph: TsMorph): Statement[][] {
  const N = morph.Node;
  const out: Statement[][] = [];
  const take = (n: Node | undefined): void => {
    if (!n) return;
    if (N.isBlock(n)) out.push(n.getStatements());
    else out.push(...nestedStatementLists(n, morph));
  };
  if (N.isBlock(stmt)) out.push(stmt.getStatements());
  else if (N.isIfStatement(stmt)) {
    take(stmt.getThenStatement());
    take(stmt.getElseStatement());
  } else if (N.isIterationStatement(stmt) || N.isLabeledStatement(stmt)) take(stmt.getStatement());
  else if (N.isTryStatement(stmt)) {
    take(stmt.getTryBlock());
    take(stmt.getCatchClause()?.getBlock());
    take(stmt.getFinallyBlock());
  } else if (N.isSwitchStatement(stmt)) {
    for (const clause of stmt.getClauses()) out.push(clause.getStatements());
  }
  return out;
}

/** The first index at or after `pos` that is not whitespace or a comment. */
function skipTrivia(text: string, pos: number): number {
  let i = pos;
  for (;;) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (text.startsWith("//", i)) {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? text.length : nl + 1;
    } else if (text.startsWith("/*", i)) {
      const close = text.indexOf("*/", i + 2);
      i = close < 0 ? text.length : close + 2;
    } else return i;
  }
}

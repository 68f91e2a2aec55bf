import type { Project, SourceFile, ts as TsNamespace } from "ts-morph";
import { LmrError } from "../../core/errors.js";
import type { TsMorph } from "../../lang/ts-source.js";

type Ts = typeof TsNamespace;

/**
 * What the type checker knows about a file that a stub needs, so that masking
 * a body changes no type outside it. A body with no declared return type
 * decides its function's type: a stub that only throws would make it `void`
 * or `never`, and `return undefined as any` would make it `any`; either
 * changes what callers infer (an `enhancers` callback's store type, a
 * `prepare`'s payload, an overload picked downstream). So the stub returns
 * `undefined as unknown as T`, where T is the return type the checker
 * inferred for the original body, printed so that it resolves in the file
 * (names in scope there, `import("pkg").Name` for the rest). A body that
 * assigned variables of enclosing functions gets `x = undefined as never;`
 * lines too: TypeScript assumes a variable assigned in a closure may be set
 * anywhere, and without that assignment a read elsewhere becomes "used
 * before being assigned".
 *
 * The oracle works on a ts-morph project that holds the file (with the
 * imports it needs): it asks the checker about the original text, and after
 * masking checks the masked text for errors inside the stubs (a printed type
 * that does not resolve there). The masker falls back to `any` for those.
 */
export interface TsTypeOracle {
  /** What the stub of the function whose node starts at `start` (a UTF-16 index of `source`) needs after its throw; undefined when the oracle cannot tell. */
  stubFacts(source: string, start: number): TsStubFacts | undefined;
  /** Of the stubs (UTF-16 ranges of `masked`), the indices of those with a type error inside. */
  brokenStubs(masked: string, stubs: readonly { start: number; end: number }[]): number[];
  /** Facts of many functions at once (one checker for all), before masking them one by one. */
  prepare(source: string, starts: readonly number[]): void;
  /**
   * Whether the function (its node's start in each text) has a return type
   * that prints, fully qualified, the same in the masked text as in the
   * original; undefined where either has none. A stub that wrote out a type
   * naming what the file cannot import (an alias or class the package does
   * not export) prints otherwise. For diagnosis: it loads both texts.
   */
  sameReturnType(source: string, start: number, masked: string, maskedStart: number): boolean | undefined;
}

export interface TsStubFacts {
  /** The statement that keeps the inferred return type (none where the plain stub infers the same). */
  keep: string[];
  /** `x = undefined as never;` for each outer variable the body assigned. */
  assign: string[];
}

/** An oracle over `file` (absolute path) of `project`; the file's text in the project is replaced as needed (original to ask, masked to verify). */
export function createTsTypeOracle(morph: TsMorph, project: Project, file: string): TsTypeOracle {
  return new CheckerOracle(morph, project, file);
}

class CheckerOracle implements TsTypeOracle {
  private factsOf = new Map<number, TsStubFacts | undefined>();
  private factsSource: string | undefined;

  constructor(
    private readonly morph: TsMorph,
    private readonly project: Project,
    private readonly file: string,
  ) {}

  prepare(source: string, starts: readonly number[]): void {
    for (const s of starts) this.stubFacts(source, s);
  }

  stubFacts(source: string, start: number): TsStubFacts | undefined {
    if (this.factsSource !== source) {
      this.factsOf.clear();
      this.factsSource = source;
    }
    if (this.factsOf.has(start)) return this.factsOf.get(start);
    const { sf, program, checker } = this.load(source);
    const fn = findFunctionAt(this.morph.ts, sf, start);
    const facts = fn ? describe(this.morph.ts, program, checker, sf, fn, this.project) : undefined;
    this.factsOf.set(start, facts);
    return facts;
  }

  brokenStubs(masked: string, stubs: readonly { start: number; end: number }[]): number[] {
    const { sf, program } = this.load(masked);
    // the whole file's diagnostics: what a type check of the result asks next, from the same program
    const errors = program.getSemanticDiagnostics(sf).filter((d) => d.category === this.morph.ts.DiagnosticCategory.Error && d.start !== undefined);
    return stubs.flatMap((s, i) => (errors.some((d) => d.start! >= s.start && d.start! < s.end) ? [i] : []));
  }

  sameReturnType(source: string, start: number, masked: string, maskedStart: number): boolean | undefined {
    const print = (text: string, at: number): string | undefined => {
      const { sf, checker } = this.load(text);
      const fn = findFunctionAt(this.morph.ts, sf, at);
      const sig = fn && checker.getSignatureFromDeclaration(fn);
      const F = this.morph.ts.TypeFormatFlags;
      return sig && checker.typeToString(checker.getReturnTypeOfSignature(sig), undefined, F.NoTruncation | F.UseFullyQualifiedType);
    };
    const before = print(source, start);
    const after = print(masked, maskedStart);
    return before === undefined || after === undefined ? undefined : before === after;
  }

  private load(text: string): { sf: TsNamespace.SourceFile; program: TsNamespace.Program; checker: TsNamespace.TypeChecker } {
    const file: SourceFile = this.project.getSourceFile(this.file) ?? this.project.addSourceFileAtPath(this.file);
    if (file.getFullText() !== text) file.replaceWithText(text);
    const program = this.project.getProgram().compilerObject;
    const sf = program.getSourceFile(file.getFilePath());
    if (!sf)
      throw new LmrError({
        code: "mask/oracle-no-file",
        file: this.file,
        message: "the type checker's program does not hold the file",
        hint: "create the oracle over a project that includes it",
      });
    return { sf, program, checker: program.getTypeChecker() };
  }
}

/** The function-like node with a body that starts (trivia excluded) at `pos`. */
function findFunctionAt(ts: Ts, sf: TsNamespace.SourceFile, pos: number): TsNamespace.FunctionLikeDeclaration | undefined {
  let found: TsNamespace.FunctionLikeDeclaration | undefined;
  const visit = (node: TsNamespace.Node): void => {
    if (found || pos < node.pos || pos >= node.end) return;
    if (ts.isFunctionLike(node) && (node as TsNamespace.FunctionLikeDeclaration).body && node.getStart(sf) === pos) {
      found = node as TsNamespace.FunctionLikeDeclaration;
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function describe(
  ts: Ts,
  program: TsNamespace.Program,
  checker: TsNamespace.TypeChecker,
  sf: TsNamespace.SourceFile,
  fn: TsNamespace.FunctionLikeDeclaration,
  project: Project,
): TsStubFacts {
  return {
    keep: keepReturnType(ts, program, checker, sf, fn, project),
    assign: assignedOuterVariables(ts, checker, sf, fn).map((n) => `${n} = undefined as never;`),
  };
}

/**
 * The statement that makes the stub infer the return type the body inferred;
 * none where the plain stub already does; `any` where the type cannot be
 * written outside the body (it names a type the body declares).
 */
function keepReturnType(
  ts: Ts,
  program: TsNamespace.Program,
  checker: TsNamespace.TypeChecker,
  sf: TsNamespace.SourceFile,
  fn: TsNamespace.FunctionLikeDeclaration,
  project: Project,
): string[] {
  if (ts.isConstructorDeclaration(fn) || ts.isSetAccessorDeclaration(fn) || fn.type) return [];
  const sig = checker.getSignatureFromDeclaration(fn);
  if (!sig) return [];
  const returned = checker.getReturnTypeOfSignature(sig);
  const print = (t: TsNamespace.Type): string | undefined => printType(ts, program, checker, sf, fn, t, project);
  if (fn.asteriskToken) {
    // Generator<Y, R, N>: `yield*` of one gives the function the same three
    const text = print(returned);
    return [`return yield* (undefined as ${text === undefined ? "any" : `unknown as ${text}`});`];
  }
  const async = (ts.getCombinedModifierFlags(fn as TsNamespace.Declaration) & ts.ModifierFlags.Async) !== 0;
  const value = async ? promised(checker, returned) : returned;
  if (!value) return [];
  const F = ts.TypeFlags;
  // a body that only throws: `never` for arrows, function expressions and object literal methods, `void` for the rest
  const neverByDefault = ts.isArrowFunction(fn) || ts.isFunctionExpression(fn) || (ts.isMethodDeclaration(fn) && ts.isObjectLiteralExpression(fn.parent));
  if (value.flags & F.Never) return [];
  if (value.flags & F.Void) return neverByDefault ? ["return;"] : [];
  if (value.flags & F.Any) return ["return undefined as any;"];
  const text = print(value);
  return [text === undefined ? "return undefined as any;" : `return undefined as unknown as ${text};`];
}

/** T of an inferred `Promise<T>`. */
function promised(checker: TsNamespace.TypeChecker, type: TsNamespace.Type): TsNamespace.Type | undefined {
  const args = checker.getTypeArguments(type as TsNamespace.TypeReference);
  if (type.getSymbol()?.getName() === "Promise" && args.length === 1) return args[0];
  return checker.getAwaitedType(type);
}

/**
 * The type as source text that resolves in the function's scope: names in
 * scope as written, other modules' exports as `import("specifier").Name` with
 * the specifier an import in this file would use (never an absolute path).
 * Undefined where the checker cannot write it (an anonymous class, a cycle)
 * or where it names something declared inside the function (gone with the
 * body, or another thing of that name once it is).
 */
function printType(
  ts: Ts,
  program: TsNamespace.Program,
  checker: TsNamespace.TypeChecker,
  sf: TsNamespace.SourceFile,
  fn: TsNamespace.FunctionLikeDeclaration,
  type: TsNamespace.Type,
  project: Project,
): string | undefined {
  const NB = ts.NodeBuilderFlags;
  const flags = NB.NoTruncation | NB.UseStructuralFallback | NB.GenerateNamesForShadowedTypeParams | NB.AllowEmptyTuple;
  const build = (f: number): TsNamespace.TypeNode | undefined => {
    const n = (checker.typeToTypeNode as TypeToTypeNodeWithTracker)(type, fn, f, 0, moduleTracker(ts, program, project));
    return n && !namesInside(ts, n, fn) ? n : undefined;
  };
  // `typeof f` for a function's type where f is in scope, written out where f is one the body declares;
  // a class by its name (written out, a class with private members is another type), a class expression written out
  const node = build(flags | NB.UseTypeOfFunction) ?? build(flags) ?? build(flags | NB.WriteClassExpressionAsTypeLiteral);
  if (!node) return undefined;
  return ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed }).printNode(ts.EmitHint.Unspecified, keepEmptyMembers(ts, node), sf);
}

/**
 * The node builder writes any object type with no members as `{}`, and in an
 * intersection the checker drops a written `{}` (an empty type literal) once
 * another member is an object type: `{ a: false } & {}` is `{ a: false }`.
 * Where the builder wrote `{}` next to such a member, the type it stood for
 * was not a `{}` literal (the checker would have dropped that one as well)
 * but an empty object type of another kind, which it keeps: a mapped type
 * over no keys, as redux toolkit's rejected meta
 * `{ rejectedWithValue: false } & { [K in keyof GetRejectedMeta<C>]?: undefined }`
 * with no `rejectedMeta`. Written `{}`, the stub's type is another one, and
 * `expectTypeOf(…).toEqualTypeOf<…>()` tells the two apart. Those are
 * written `{ [K in never]: never; }`: empty, and kept as the original was.
 * A `{}` whose siblings may not be objects (`T & {}`) stays as written.
 */
function keepEmptyMembers(ts: Ts, root: TsNamespace.TypeNode): TsNamespace.TypeNode {
  const f = ts.factory;
  const isEmptyLiteral = (n: TsNamespace.Node): boolean => ts.isTypeLiteralNode(n) && n.members.length === 0;
  const never = (): TsNamespace.TypeNode => f.createKeywordTypeNode(ts.SyntaxKind.NeverKeyword);
  const emptyMapped = (): TsNamespace.TypeNode =>
    ts.setEmitFlags(
      f.createMappedTypeNode(undefined, f.createTypeParameterDeclaration(undefined, "K", never()), undefined, undefined, never(), undefined),
      ts.EmitFlags.SingleLine,
    );
  const rewrite = (context: TsNamespace.TransformationContext) => {
    const visit = (n: TsNamespace.Node): TsNamespace.Node => {
      const node = ts.visitEachChild(n, visit, context);
      if (!ts.isIntersectionTypeNode(node) || !node.types.some(isEmptyLiteral) || !node.types.some((t) => certainlyObject(ts, t))) return node;
      return f.updateIntersectionTypeNode(node, f.createNodeArray(node.types.map((t) => (isEmptyLiteral(t) ? emptyMapped() : t))));
    };
    return (n: TsNamespace.TypeNode): TsNamespace.TypeNode => visit(n) as TsNamespace.TypeNode;
  };
  const result = ts.transform(root, [rewrite]);
  const out = result.transformed[0]!;
  result.dispose();
  return out;
}

/** Whether a type node the node builder wrote stands for an object type: a type literal with members, a mapped, function, array or tuple type, a class or interface by name. */
function certainlyObject(ts: Ts, node: TsNamespace.TypeNode): boolean {
  if (ts.isTypeLiteralNode(node)) return node.members.length > 0;
  if (ts.isMappedTypeNode(node) || ts.isFunctionTypeNode(node) || ts.isConstructorTypeNode(node) || ts.isArrayTypeNode(node) || ts.isTupleTypeNode(node))
    return true;
  if (ts.isTypeOperatorNode(node) && node.operator === ts.SyntaxKind.ReadonlyKeyword) return certainlyObject(ts, node.type);
  const name = ts.isTypeReferenceNode(node) ? node.typeName : ts.isImportTypeNode(node) ? node.qualifier : undefined;
  const last = name && (ts.isQualifiedName(name) ? name.right : name);
  const symbol = last && (last as { symbol?: TsNamespace.Symbol }).symbol;
  return symbol !== undefined && (symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) !== 0 && !(symbol.flags & ts.SymbolFlags.TypeAlias);
}

/**
 * Whether a printed type refers, by name, to a symbol declared in the
 * function: the node builder sets `symbol` on the identifiers of the names it
 * writes (type references, `typeof x`); parameter and property names are not
 * references, and type parameters are in scope where they are written.
 */
function namesInside(ts: Ts, node: TsNamespace.Node, fn: TsNamespace.FunctionLikeDeclaration): boolean {
  const inside = (d: TsNamespace.Declaration): boolean => d.getSourceFile() === fn.getSourceFile() && d.pos >= fn.pos && d.end <= fn.end && d.parent !== fn; // its own type parameters and parameters stay
  const refersInside = (name: TsNamespace.Node): boolean => {
    const symbol = (name as { symbol?: TsNamespace.Symbol }).symbol;
    // type parameters: the function's own, or bound by a signature the printed type declares (a stray one does not resolve: brokenStubs)
    if (ts.isIdentifier(name)) return symbol !== undefined && !(symbol.flags & ts.SymbolFlags.TypeParameter) && symbol.declarations?.some(inside) === true;
    return ts.isQualifiedName(name) && (refersInside(name.left) || refersInside(name.right));
  };
  let found = false;
  const visit = (n: TsNamespace.Node): void => {
    if (ts.isTypeReferenceNode(n) && refersInside(n.typeName)) found = true;
    else if (ts.isTypeQueryNode(n) && refersInside(n.exprName)) found = true;
    if (!found) ts.forEachChild(n, visit);
  };
  visit(node);
  return found;
}

/**
 * The checker's own typeToTypeNode takes a symbol tracker after the public
 * arguments (internal in TypeScript 5.x): with a module resolver host in it,
 * a type from another module is written with the specifier declaration emit
 * would use (`import("@scope/pkg").T`), not the file's absolute path.
 */
type TypeToTypeNodeWithTracker = (
  type: TsNamespace.Type,
  enclosing: TsNamespace.Node,
  flags: number,
  internalFlags: number,
  tracker: object,
) => TsNamespace.TypeNode | undefined;

function moduleTracker(ts: Ts, program: TsNamespace.Program, project: Project): object {
  const internal = ts as unknown as { getModuleSpecifierResolverHost?: (program: TsNamespace.Program, host: object) => object };
  const fs = project.getModuleResolutionHost();
  const host = {
    getCurrentDirectory: () => program.getCurrentDirectory(),
    readFile: (f: string) => fs.readFile(f),
    useCaseSensitiveFileNames: () => project.getFileSystem().isCaseSensitive(),
  };
  return {
    trackSymbol: () => false,
    ...(internal.getModuleSpecifierResolverHost ? { moduleResolverHost: internal.getModuleSpecifierResolverHost(program, host) } : {}),
  };
}

/**
 * Variables declared outside the function (in this file) that its body
 * assigns: `x = …`, `x += …`, `x++`, destructuring and `for (x of …)`
 * targets, nested functions included. In source order, once each.
 */
function assignedOuterVariables(ts: Ts, checker: TsNamespace.TypeChecker, sf: TsNamespace.SourceFile, fn: TsNamespace.FunctionLikeDeclaration): string[] {
  const names = new Set<string>();
  const consider = (id: TsNamespace.Identifier): void => {
    const symbol = ts.isShorthandPropertyAssignment(id.parent) ? checker.getShorthandAssignmentValueSymbol(id.parent) : checker.getSymbolAtLocation(id);
    const decl = symbol?.valueDeclaration;
    if (!decl || decl.getSourceFile() !== sf || (decl.pos >= fn.pos && decl.end <= fn.end)) return;
    const constant = (ts.getCombinedNodeFlags(decl) & ts.NodeFlags.Constant) !== 0; // an assignment to a const was an error already
    if ((ts.isVariableDeclaration(decl) || ts.isParameter(decl) || ts.isBindingElement(decl)) && !constant) names.add(id.text);
  };
  const visit = (node: TsNamespace.Node): void => {
    if (ts.isIdentifier(node) && isAssignmentTarget(ts, node)) consider(node);
    ts.forEachChild(node, visit);
  };
  if (fn.body) visit(fn.body);
  return [...names];
}

/** Whether an identifier is written by the expression it sits in (the checker's own test is internal). */
function isAssignmentTarget(ts: Ts, id: TsNamespace.Identifier): boolean {
  let node: TsNamespace.Node = id;
  for (;;) {
    const parent: TsNamespace.Node = node.parent;
    if (
      ts.isParenthesizedExpression(parent) ||
      ts.isNonNullExpression(parent) ||
      ts.isAsExpression(parent) ||
      ts.isSatisfiesExpression(parent) ||
      ts.isTypeAssertionExpression(parent)
    ) {
      node = parent;
      continue;
    }
    if (ts.isBinaryExpression(parent)) return parent.left === node && isAssignmentOperator(ts, parent.operatorToken.kind);
    if (ts.isPrefixUnaryExpression(parent) || ts.isPostfixUnaryExpression(parent))
      return parent.operator === ts.SyntaxKind.PlusPlusToken || parent.operator === ts.SyntaxKind.MinusMinusToken;
    if (ts.isForInStatement(parent) || ts.isForOfStatement(parent)) return parent.initializer === node;
    // inside a destructuring pattern: `[a, b] = …`, `({ a, b: c } = …)`, `[...rest] = …`
    if (ts.isShorthandPropertyAssignment(parent)) return parent.name === node && isDestructuringTarget(ts, parent.parent);
    if (ts.isPropertyAssignment(parent)) return parent.initializer === node && isDestructuringTarget(ts, parent.parent);
    if (ts.isSpreadElement(parent) || ts.isSpreadAssignment(parent)) return isDestructuringTarget(ts, parent.parent);
    if (ts.isArrayLiteralExpression(parent)) return isDestructuringTarget(ts, parent);
    return false;
  }
}

/** An array or object literal that is the left side of an assignment (or nested in one), or a `for…of` target. */
function isDestructuringTarget(ts: Ts, literal: TsNamespace.Node): boolean {
  let node = literal;
  for (;;) {
    const parent = node.parent;
    if (ts.isParenthesizedExpression(parent)) node = parent;
    else if (ts.isBinaryExpression(parent)) return parent.left === node && parent.operatorToken.kind === ts.SyntaxKind.EqualsToken;
    else if (ts.isForInStatement(parent) || ts.isForOfStatement(parent)) return parent.initializer === node;
    else if (ts.isArrayLiteralExpression(parent) || ts.isSpreadElement(parent) || ts.isSpreadAssignment(parent)) node = parent;
    else if ((ts.isPropertyAssignment(parent) && parent.initializer === node) || ts.isShorthandPropertyAssignment(parent)) node = parent.parent;
    else return false;
  }
}

function isAssignmentOperator(ts: Ts, kind: TsNamespace.SyntaxKind): boolean {
  return kind >= ts.SyntaxKind.FirstAssignment && kind <= ts.SyntaxKind.LastAssignment;
}

import type { Node } from "ts-morph";
import type { TsMorph } from "../lang/ts-source.js";
import type { Edit, MutationPoint, MutantOperator } from "./mutant-points.js";

/**
 * The TypeScript/JavaScript counterpart of collectMutationPoints (mutant-points.ts), over a
 * ts-morph body (a block, or an arrow function's expression), with the same operator names
 * and records: operators, constants, dropped statements, swapped arguments, returns.
 */
const ARITH: Record<string, string> = { "+": "-", "-": "+", "*": "/", "/": "*", "%": "*", "**": "*" };
const COMPARE: Record<string, string> = { "<": ">=", ">=": "<", ">": "<=", "<=": ">", "===": "!==", "!==": "===", "==": "!=", "!=": "==" };
const BOOL: Record<string, string> = { "&&": "||", "||": "&&", "??": "||" };
const AUGMENTED: Record<string, string> = { "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "%=": "*=", "**=": "*=" };
const SIGN_SENSITIVE = new Set(["*", "/", "%", "**"]);
/** Calls whose removal changes only what is printed or logged: equivalent mutants. */
const DIAGNOSTIC_CALL = /^(console\.\w+|process\.(stdout|stderr)\.write|(logger|log|this\.logger)\.\w+)$/;

export function collectTsMutationPoints(body: Node, morph: TsMorph): MutationPoint[] {
  const { Node: N, ts } = morph;
  const K = ts.SyntaxKind;
  const file = body.getSourceFile();
  const points: MutationPoint[] = [];
  const lineAt = (pos: number): number => file.compilerNode.getLineAndCharacterOfPosition(pos).line + 1;
  const clip = (s: string): string => (s.length > 40 ? `${s.slice(0, 37)}...` : s).replace(/\s+/g, " ");
  const add = (operator: MutantOperator, at: Node, edits: Edit[], from: string, to: string): void => {
    points.push({ operator, line: lineAt(at.getStart()), edits, description: `line ${lineAt(at.getStart())}: '${clip(from)}' → '${clip(to)}'` });
  };
  const replace = (operator: MutantOperator, at: Node, text: string): void =>
    add(operator, at, [{ start: at.getStart(), end: at.getEnd(), text }], at.getText(), text);
  const isDiagnostic = (n: Node): boolean => {
    const call = N.isExpressionStatement(n) ? n.getExpression() : n;
    return N.isCallExpression(call) && DIAGNOSTIC_CALL.test(call.getExpression().getText());
  };

  const visit = (n: Node): void => {
    // types, nested function and class declarations' names, and comments are not code that runs here
    if (N.isTypeNode(n) || N.isTypeAliasDeclaration(n) || N.isInterfaceDeclaration(n)) return;
    if (isDiagnostic(n)) return;
    pointsAt(n);
    if (N.isStringLiteral(n) || N.isNoSubstitutionTemplateLiteral(n) || N.isTemplateExpression(n)) return;
    n.forEachChild(visit);
  };

  const pointsAt = (n: Node): void => {
    if (N.isBinaryExpression(n)) {
      const op = n.getOperatorToken();
      const text = op.getText();
      if (ARITH[text]) replace("arith-swap", op, ARITH[text]);
      else if (COMPARE[text]) replace("cmp-flip", op, COMPARE[text]);
      else if (BOOL[text]) replace("bool-swap", op, BOOL[text]);
      else if (AUGMENTED[text]) replace("aug-assign", op, AUGMENTED[text]);
      const right = n.getRight();
      if (
        SIGN_SENSITIVE.has(text) &&
        (N.isIdentifier(right) ||
          N.isPropertyAccessExpression(right) ||
          N.isElementAccessExpression(right) ||
          N.isCallExpression(right) ||
          N.isParenthesizedExpression(right))
      ) {
        add("unary-minus", right, [{ start: right.getStart(), end: right.getStart(), text: "-" }], right.getText(), `-${right.getText()}`);
      }
      return;
    }
    if (N.isPrefixUnaryExpression(n) && n.getOperatorToken() === K.MinusToken && !N.isNumericLiteral(n.getOperand())) {
      add("unary-minus", n, [{ start: n.getStart(), end: n.getOperand().getStart(), text: "" }], n.getText(), n.getOperand().getText());
      return;
    }
    if (N.isPrefixUnaryExpression(n) && n.getOperatorToken() === K.ExclamationToken) {
      add("bool-swap", n, [{ start: n.getStart(), end: n.getOperand().getStart(), text: "" }], n.getText(), n.getOperand().getText());
      return;
    }
    if (
      (N.isPrefixUnaryExpression(n) || N.isPostfixUnaryExpression(n)) &&
      (n.getOperatorToken() === K.PlusPlusToken || n.getOperatorToken() === K.MinusMinusToken)
    ) {
      const inc = n.getOperatorToken() === K.PlusPlusToken;
      const opStart = N.isPrefixUnaryExpression(n) ? n.getStart() : n.getOperand().getEnd();
      add("aug-assign", n, [{ start: opStart, end: opStart + 2, text: inc ? "--" : "++" }], n.getText(), inc ? "--" : "++");
      return;
    }
    if (N.isNumericLiteral(n)) {
      const v = Number(n.getLiteralValue());
      const inIndex =
        N.isElementAccessExpression(n.getParent()) && (n.getParent() as Node & { getArgumentExpression(): Node | undefined }).getArgumentExpression() === n;
      const next = v === 0 ? "1" : v === 1 ? "0" : Number.isInteger(v) ? String(v + 1) : String(v * 2);
      replace(inIndex ? "index-shift" : "const-change", n, next);
      return;
    }
    if (n.getKind() === K.TrueKeyword || n.getKind() === K.FalseKeyword) {
      replace("const-change", n, n.getKind() === K.TrueKeyword ? "false" : "true");
      return;
    }
    if (N.isElementAccessExpression(n)) {
      const arg = n.getArgumentExpression();
      if (arg && N.isIdentifier(arg))
        add("index-shift", arg, [{ start: arg.getEnd(), end: arg.getEnd(), text: " + 1" }], arg.getText(), `${arg.getText()} + 1`);
      return;
    }
    if (N.isExpressionStatement(n) || N.isContinueStatement(n) || N.isBreakStatement(n) || N.isThrowStatement(n)) {
      // dropped, as `pass` does in Python: `;` is an empty statement wherever a statement may stand
      const parent = n.getParent();
      if (parent && (N.isBlock(parent) || N.isCaseClause(parent) || N.isDefaultClause(parent) || N.isIfStatement(parent) || N.isIterationStatement(parent)))
        replace("drop-statement", n, ";");
    }
    if (N.isCallExpression(n)) {
      const args = n.getArguments();
      if (args.length >= 2 && !args.slice(0, 2).some((a) => N.isSpreadElement(a)) && args[0]!.getText() !== args[1]!.getText()) {
        const [a, b] = [args[0]!, args[1]!];
        add(
          "swap-args",
          a,
          [
            { start: a.getStart(), end: a.getEnd(), text: b.getText() },
            { start: b.getStart(), end: b.getEnd(), text: a.getText() },
          ],
          `${a.getText()}, ${b.getText()}`,
          `${b.getText()}, ${a.getText()}`,
        );
      }
      return;
    }
    if (N.isReturnStatement(n)) {
      const value = n.getExpression();
      if (value && value.getKind() !== K.UndefinedKeyword && !(N.isIdentifier(value) && value.getText() === "undefined"))
        replace("return-none", value, "undefined");
    }
  };

  if (N.isBlock(body)) body.getStatements().forEach(visit);
  else visit(body);
  return points
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.edits[0]!.start - b.p.edits[0]!.start || a.i - b.i)
    .map(({ p }) => p);
}

import type { Node } from "../lang/python-parser.js";

/** The mutation operators, one name per family of edits. */
export type MutantOperator =
  "arith-swap" | "cmp-flip" | "bool-swap" | "const-change" | "unary-minus" | "drop-statement" | "swap-args" | "return-none" | "index-shift" | "aug-assign";

/** Replace [start, end) (JS string indices) with `text`. */
export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** One candidate mutation: edits that are applied together. */
export interface MutationPoint {
  operator: MutantOperator;
  /** 1-based line of the mutated code. */
  line: number;
  edits: Edit[];
  description: string;
}

/** A mutation point of one target, numbered in the source order of all the targets' points. */
export interface MutantCandidate extends MutationPoint {
  index: number;
  symbol: string;
}

/** One target's body to mutate: its qualified name, its region spans if any, and its size in characters. */
interface TargetBody<B> {
  symbol: string;
  spans?: [number, number][] | undefined;
  size: number;
  body: B;
}

/**
 * The mutation points of several target bodies as numbered candidates (the Python and the
 * TypeScript paths share this): the most specific target owns a point when targets nest
 * (`outer` and `outer.inner`), a region target keeps only edits inside its spans, each point
 * comes once, and the order is the source order.
 */
export function numberCandidates<B>(bodies: TargetBody<B>[], collect: (body: B) => MutationPoint[]): MutantCandidate[] {
  const bySize = [...bodies].sort((a, b) => a.size - b.size);
  const byKey = new Map<string, Omit<MutantCandidate, "index">>();
  for (const { symbol, spans, body } of bySize) {
    for (const p of collect(body)) {
      if (spans && !p.edits.every((e) => spans.some(([s, end]) => e.start >= s && e.end <= end))) continue;
      const key = `${p.operator}|${p.edits.map((e) => `${e.start}:${e.end}:${e.text}`).join("|")}`;
      if (!byKey.has(key)) byKey.set(key, { ...p, symbol });
    }
  }
  return [...byKey.values()]
    .sort(
      (a, b) => a.edits[0]!.start - b.edits[0]!.start || a.edits[0]!.end - b.edits[0]!.end || (a.operator < b.operator ? -1 : a.operator > b.operator ? 1 : 0),
    )
    .map((c, index) => ({ ...c, index }));
}

const ARITH: Record<string, string> = { "+": "-", "-": "+", "*": "/", "/": "*", "**": "*", "//": "/" };
const COMPARE: Record<string, string> = {
  "<": ">=",
  ">=": "<",
  ">": "<=",
  "<=": ">",
  "==": "!=",
  "!=": "==",
  is: "is not",
  "is not": "is",
  in: "not in",
  "not in": "in",
};
const AUGMENTED: Record<string, string> = { "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*=", "//=": "/=", "**=": "*=" };
/** Operators where a negated right operand changes the result's sign (with + and - it would repeat arith-swap). */
const SIGN_SENSITIVE = new Set(["*", "/", "//", "%", "**"]);
const PRIMARY = new Set(["identifier", "integer", "float", "attribute", "call", "subscript", "parenthesized_expression"]);
const NOT_POSITIONAL = new Set(["keyword_argument", "list_splat", "dictionary_splat", "comment"]);
/** Calls whose removal or reordering changes only what is printed or logged: equivalent mutants. */
const DIAGNOSTIC_CALL =
  /^(print|warn|(logging|logger|log|warnings|_?LOG(GER)?)\..+|self\.(log|logger)(\..+)?|.*\.(debug|info|warning|warn|exception|critical))$/;

/** Every mutation point inside `body` (a function or class body block), in source order. */
export function collectMutationPoints(body: Node): MutationPoint[] {
  const points: MutationPoint[] = [];
  const indexLiterals = new Set<number>();
  const nonlocals = collectNonlocalNames(body);
  const visit = (node: Node): void => {
    if (isBareString(node) || node.type === "type" || node.type === "comment") return;
    if (node.type === "call" && isDiagnosticCall(node)) return;
    pointsAt(node, points, indexLiterals, nonlocals);
    if (node.type === "string") return; // f-string innards are not mutated
    for (const child of node.namedChildren) visit(child);
  };
  for (const child of body.namedChildren) visit(child);
  return points
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.edits[0]!.start - b.p.edits[0]!.start || a.i - b.i)
    .map(({ p }) => p);
}

function pointsAt(node: Node, out: MutationPoint[], indexLiterals: Set<number>, nonlocals: Set<string>): void {
  const add = (operator: MutantOperator, at: Node, edits: Edit[], from: string, to: string): void => {
    out.push({ operator, line: at.startPosition.row + 1, edits, description: `line ${at.startPosition.row + 1}: '${clip(from)}' → '${clip(to)}'` });
  };
  const replace = (operator: MutantOperator, at: Node, text: string): void =>
    add(operator, at, [{ start: at.startIndex, end: at.endIndex, text }], at.text, text);

  switch (node.type) {
    case "binary_operator": {
      const op = node.childForFieldName("operator");
      const right = node.childForFieldName("right");
      if (op && ARITH[op.type]) replace("arith-swap", op, ARITH[op.type]!);
      if (op && right && SIGN_SENSITIVE.has(op.type) && PRIMARY.has(right.type)) {
        add("unary-minus", right, [{ start: right.startIndex, end: right.startIndex, text: "-" }], right.text, `-${right.text}`);
      }
      break;
    }
    case "comparison_operator":
      for (const child of node.children) {
        if (!child.isNamed && COMPARE[child.type]) replace("cmp-flip", child, COMPARE[child.type]!);
      }
      break;
    case "boolean_operator": {
      const op = node.childForFieldName("operator");
      if (op) replace("bool-swap", op, op.type === "and" ? "or" : "and");
      break;
    }
    case "not_operator": {
      const arg = node.childForFieldName("argument");
      if (arg) replace("bool-swap", node, arg.text);
      break;
    }
    case "true":
    case "false":
      replace("bool-swap", node, node.type === "true" ? "False" : "True");
      break;
    case "integer": {
      const next = bumpInteger(node.text, 1n);
      if (next !== undefined && !indexLiterals.has(node.startIndex)) replace("const-change", node, next);
      break;
    }
    case "float": {
      const next = bumpFloat(node.text);
      if (next !== undefined) replace("const-change", node, next);
      break;
    }
    case "string": {
      const end = node.children.find((c) => c.type === "string_end");
      if (end && !insideMessage(node)) {
        add(
          "const-change",
          node,
          [{ start: end.startIndex, end: end.startIndex, text: "_" }],
          node.text,
          node.text.slice(0, end.startIndex - node.startIndex) + "_" + end.text,
        );
      }
      break;
    }
    case "unary_operator": {
      const op = node.childForFieldName("operator");
      const arg = node.childForFieldName("argument");
      if (op?.type === "-" && arg) replace("unary-minus", node, arg.text);
      break;
    }
    case "expression_statement":
      if (canDrop(node, nonlocals)) replace("drop-statement", node, "pass");
      break;
    case "call": {
      const args = node.childForFieldName("arguments");
      const positional = args?.type === "argument_list" ? args.namedChildren.filter((a) => !NOT_POSITIONAL.has(a.type)) : [];
      const [a, b] = positional;
      if (a && b && a.text !== b.text) {
        add(
          "swap-args",
          a,
          [
            { start: a.startIndex, end: a.endIndex, text: b.text },
            { start: b.startIndex, end: b.endIndex, text: a.text },
          ],
          `${a.text}, ${b.text}`,
          `${b.text}, ${a.text}`,
        );
      }
      break;
    }
    case "return_statement": {
      const value = node.namedChildren.find((c) => c.type !== "comment");
      if (value && value.type !== "none") replace("return-none", value, "None");
      break;
    }
    case "subscript":
      for (const sub of node.childrenForFieldName("subscript")) {
        const bounds = sub.type === "slice" ? sub.namedChildren : [sub];
        for (const bound of bounds) {
          const literal = integerLiteral(bound);
          if (!literal) continue;
          indexLiterals.add(literal.startIndex);
          const next = bumpInteger(bound.text.replace(/\s+/g, ""), 1n);
          if (next !== undefined) replace("index-shift", bound, next);
        }
      }
      break;
    case "augmented_assignment": {
      const op = node.childForFieldName("operator");
      if (op && AUGMENTED[op.type]) replace("aug-assign", op, AUGMENTED[op.type]!);
      break;
    }
  }
}

/** `n` or `-n` as an integer literal node, else undefined. */
function integerLiteral(node: Node): Node | undefined {
  if (node.type === "integer") return node;
  if (node.type === "unary_operator" && node.childForFieldName("operator")?.type === "-") {
    const arg = node.childForFieldName("argument");
    if (arg?.type === "integer") return arg;
  }
  return undefined;
}

/** Python integer literal (optionally negative) plus `delta`, as decimal; undefined for complex or odd literals. */
function bumpInteger(text: string, delta: bigint): string | undefined {
  const negative = text.startsWith("-");
  const digits = (negative ? text.slice(1) : text).replace(/_/g, "");
  if (!/^(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|\d+)$/.test(digits)) return undefined;
  const value = (negative ? -1n : 1n) * BigInt(digits) + delta;
  return value.toString();
}

/** x → x*1.5+0.1, written as a Python float literal. */
function bumpFloat(text: string): string | undefined {
  if (/[jJ]$/.test(text)) return undefined;
  const value = Number(text.replace(/_/g, ""));
  const next = value * 1.5 + 0.1;
  if (!Number.isFinite(value) || !Number.isFinite(next)) return undefined;
  const s = String(next);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** A string on its own as a statement: a docstring or a no-op; never a mutation point. */
function isBareString(node: Node): boolean {
  if (node.type !== "expression_statement" || node.namedChildCount !== 1) return false;
  const t = node.namedChildren[0]!.type;
  return t === "string" || t === "concatenated_string";
}

function canDrop(stmt: Node, nonlocals: Set<string>): boolean {
  const block = stmt.parent;
  if (!block || block.type !== "block") return false;
  const statements = block.namedChildren.filter((c) => c.type !== "comment");
  const expr = stmt.namedChildren[0];
  if (expr?.type === "call" && isDiagnosticCall(expr)) return false;
  // Dropping the binding that a nested `nonlocal x` refers to is a compile error, not a mutant.
  if (expr?.type === "assignment" && assignedNames(expr).some((n) => nonlocals.has(n))) return false;
  return statements.length >= 2;
}

function collectNonlocalNames(body: Node): Set<string> {
  const names = new Set<string>();
  for (const stmt of body.descendantsOfType("nonlocal_statement")) {
    for (const id of stmt?.namedChildren ?? []) if (id.type === "identifier") names.add(id.text);
  }
  return names;
}

function assignedNames(assignment: Node): string[] {
  const out: string[] = [];
  for (let n: Node | null = assignment; n?.type === "assignment"; n = n.childForFieldName("right")) {
    const left = n.childForFieldName("left");
    if (!left) continue;
    if (left.type === "identifier") out.push(left.text);
    else for (const id of left.descendantsOfType("identifier")) if (id) out.push(id.text);
  }
  return out;
}

function isDiagnosticCall(call: Node): boolean {
  const fn = call.childForFieldName("function");
  return fn !== null && DIAGNOSTIC_CALL.test(fn.text.replace(/\s+/g, ""));
}

/** A string inside a raise or assert statement is a message: changing it is an equivalent mutant. */
function insideMessage(node: Node): boolean {
  for (let n = node.parent; n; n = n.parent) {
    if (n.type === "raise_statement" || n.type === "assert_statement") return true;
    if (n.type === "block" || n.type === "function_definition") return false;
  }
  return false;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 40 ? `${flat.slice(0, 37)}...` : flat;
}

/** A target of mutation testing, as verify names it. */
export interface MutantTarget {
  /** Qualified name: `f`, `Class.method`, `outer.inner`, or `Class` (every body in it). */
  symbol: string;
  /** 1-based line of the `def`/`class` (or its first decorator) when the name is defined more than once. */
  line?: number;
  /**
   * Only mutate inside these [start, end) string offsets of the source (a region target: the
   * masked lines, not the rest of the function, which the agent never writes).
   */
  spans?: [number, number][];
}

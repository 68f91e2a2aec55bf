import type { Node } from "../../lang/python-parser.js";

/** One function or class definition found in a Python tree. */
export interface PyDef {
  /** Qualified name: `f`, `A.m`, `outer.inner`. */
  qualname: string;
  kind: "function" | "method" | "class";
  /** The `function_definition` or `class_definition` node. */
  node: Node;
  /** The `decorated_definition` around it, or the node itself. */
  outer: Node;
  /** 1-based line of the `def`/`async`/`class` keyword. */
  line: number;
  /** 1-based line of the first decorator, when decorated. */
  decoratorLine?: number;
  parent?: PyDef;
}

export interface PyIndex {
  defs: PyDef[];
  byName: Map<string, PyDef[]>;
  byNodeId: Map<number, PyDef>;
}

/** Compound statements whose blocks do not open a new scope: a def inside `if`/`try`/`with` belongs to the enclosing scope. */
const TRANSPARENT_STATEMENTS = new Set([
  "if_statement",
  "for_statement",
  "while_statement",
  "try_statement",
  "with_statement",
  "match_statement",
]);

function isTransparentPart(type: string): boolean {
  return type === "block" || type.endsWith("_clause");
}

/** Walks the statement structure once (never into expressions) and indexes every definition. */
export function indexDefinitions(root: Node): PyIndex {
  const index: PyIndex = { defs: [], byName: new Map(), byNodeId: new Map() };

  const register = (node: Node, outer: Node, parent: PyDef | undefined): void => {
    const name = node.childForFieldName("name")?.text ?? "";
    const qualname = parent ? `${parent.qualname}.${name}` : name;
    const kind = node.type === "class_definition" ? "class" : parent?.kind === "class" ? "method" : "function";
    const def: PyDef = { qualname, kind, node, outer, line: node.startPosition.row + 1 };
    if (outer !== node) def.decoratorLine = outer.startPosition.row + 1;
    if (parent) def.parent = parent;
    index.defs.push(def);
    index.byNodeId.set(node.id, def);
    const same = index.byName.get(qualname);
    if (same) same.push(def);
    else index.byName.set(qualname, [def]);
    const body = node.childForFieldName("body");
    if (body) walk(body, def);
  };

  const walk = (container: Node, scope: PyDef | undefined): void => {
    for (const child of container.namedChildren) {
      const type = child.type;
      if (type === "function_definition" || type === "class_definition") {
        register(child, child, scope);
      } else if (type === "decorated_definition") {
        const def = child.childForFieldName("definition");
        if (def) register(def, child, scope);
      } else if (TRANSPARENT_STATEMENTS.has(type) || isTransparentPart(type)) {
        walk(child, scope);
      }
    }
  };

  walk(root, undefined);
  return index;
}

/** The `:` that ends a definition's header. */
export function findHeaderColon(node: Node): Node {
  const body = node.childForFieldName("body");
  let colon: Node | undefined;
  for (const child of node.children) {
    if (child.type === ":") colon = child;
    if (body && child.id === body.id) break;
  }
  if (!colon) throw new Error(`no ':' in ${node.type} at line ${node.startPosition.row + 1}`);
  return colon;
}

/**
 * The items of a definition's body in source order: comments between the
 * header and the block (tree-sitter hangs them on the definition), then the
 * block's statements and comments. Trailing comments that are dedented below
 * the body belong to what follows, so they are left out.
 */
export function listBodyItems(node: Node): Node[] {
  const body = node.childForFieldName("body");
  if (!body) return [];
  const colon = findHeaderColon(node);
  const items: Node[] = [];
  let afterColon = false;
  for (const child of node.children) {
    if (child.id === colon.id) afterColon = true;
    else if (child.id === body.id) break;
    // A comment on the header line after the colon belongs to the header.
    else if (afterColon && child.type === "comment" && child.startPosition.row > colon.endPosition.row) items.push(child);
  }
  return [...items, ...trimDedentedComments(body.namedChildren)];
}

/** Drops trailing comment children indented less than the block's first statement. */
export function trimDedentedComments(children: Node[]): Node[] {
  const first = children.find((n) => n.type !== "comment");
  if (!first) return children;
  let end = children.length;
  while (end > 0 && children[end - 1]!.type === "comment" && children[end - 1]!.startPosition.column < first.startPosition.column) end--;
  return end === children.length ? children : children.slice(0, end);
}

/** The parts of a definition's body the maskers need, found without listing every statement. */
export interface BodyShape {
  colon: Node;
  /** First item: a comment between the header and the block, or the block's first child. */
  first: Node;
  firstStatement: Node;
  docstring?: Node;
  /** Last item (statement or comment indented like the body). */
  last: Node;
}

export function describeBody(node: Node): BodyShape | undefined {
  const body = node.childForFieldName("body");
  if (!body) return undefined;
  // Walk back from the block: comments hung on the definition, then the header's ':'.
  let leading: Node | undefined;
  let colon = body.previousSibling;
  while (colon && colon.type === "comment") {
    leading = colon;
    colon = colon.previousSibling;
  }
  if (!colon || colon.type !== ":") return undefined;
  // A comment on the header line after the colon belongs to the header.
  if (leading && leading.startPosition.row === colon.endPosition.row) leading = leading.nextSibling ?? undefined;
  if (leading && leading.id === body.id) leading = undefined;
  let firstStatement = body.firstNamedChild;
  while (firstStatement && firstStatement.type === "comment") firstStatement = firstStatement.nextNamedSibling;
  if (!firstStatement) return undefined;
  let last = body.lastNamedChild;
  while (last && last.type === "comment" && last.startPosition.column < firstStatement.startPosition.column) last = last.previousNamedSibling;
  const shape: BodyShape = { colon, first: leading ?? body.firstNamedChild ?? firstStatement, firstStatement, last: last ?? firstStatement };
  const docstring = findDocstring([firstStatement]);
  if (docstring) shape.docstring = docstring;
  return shape;
}

/** The docstring statement (first statement, a plain string expression), if any: same rule as Python's `ast.get_docstring`. */
export function findDocstring(items: Node[]): Node | undefined {
  const first = items.find((n) => n.type !== "comment");
  if (!first || first.type !== "expression_statement" || first.namedChildCount !== 1) return undefined;
  const expr = first.namedChild(0);
  if (!expr) return undefined;
  if (expr.type === "string") return isPlainString(expr) ? first : undefined;
  if (expr.type === "concatenated_string") {
    return expr.namedChildren.every((s) => s !== null && s.type === "string" && isPlainString(s)) ? first : undefined;
  }
  return undefined;
}

/** A `str` literal: not an f-string, not bytes (those are not docstrings in Python). */
function isPlainString(str: Node): boolean {
  const start = str.child(0);
  const prefix = (start?.type === "string_start" ? start.text : str.text.slice(0, 3)).replace(/["']/g, "").toLowerCase();
  return !prefix.includes("f") && !prefix.includes("b");
}

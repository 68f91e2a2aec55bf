import type { Node } from "../lang/python-parser.js";

export interface Definition {
  /** `f`, `A.m`, `outer.inner`. */
  qualname: string;
  kind: "function" | "method" | "class";
  /** The function_definition / class_definition node. */
  node: Node;
  /** The node to move or insert around: the decorated_definition when there is one. */
  outer: Node;
  /** The class that holds a method. */
  owner?: Definition;
}

/** Every function, method and class, with qualified names, in source order (also those inside if/try blocks). */
function listDefinitions(root: Node): Definition[] {
  const out: Definition[] = [];
  function walk(node: Node, prefix: string, owner: Definition | undefined, inClass: boolean): void {
    for (const child of node.namedChildren) {
      if (!child) continue;
      const def = child.type === "decorated_definition" ? child.childForFieldName("definition") : child;
      if (def && (def.type === "function_definition" || def.type === "class_definition")) {
        const name = def.childForFieldName("name")?.text ?? "?";
        const qualname = prefix ? `${prefix}.${name}` : name;
        const kind = def.type === "class_definition" ? "class" : inClass ? "method" : "function";
        const d: Definition = { qualname, kind, node: def, outer: child, ...(kind === "method" && owner ? { owner } : {}) };
        out.push(d);
        const body = def.childForFieldName("body");
        if (body) walk(body, qualname, kind === "class" ? d : undefined, kind === "class");
      } else if (child.type !== "function_definition" && child.type !== "class_definition") {
        walk(child, prefix, owner, inClass);
      }
    }
  }
  walk(root, "", undefined, false);
  return out;
}

export type FindResult = { ok: true; def: Definition } | { ok: false; message: string };

/** The one definition named `qualname`, or a message listing near matches or the duplicates. */
export function findDefinition(root: Node, qualname: string): FindResult {
  const all = listDefinitions(root);
  const hits = all.filter((d) => d.qualname === qualname && d.kind !== "class");
  if (hits.length === 1) return { ok: true, def: hits[0]! };
  if (hits.length > 1) {
    return {
      ok: false,
      message: `'${qualname}' is defined ${hits.length} times (lines ${hits.map((h) => h.node.startPosition.row + 1).join(", ")}); extract-function needs one`,
    };
  }
  const want = qualname.toLowerCase();
  const last = want.split(".").pop()!;
  const near = all
    .filter((d) => d.kind !== "class")
    .filter((d) => {
      const q = d.qualname.toLowerCase();
      const tail = q.split(".").pop()!;
      return q.includes(last) || last.includes(tail) || editDistance(q, want) <= 2 || editDistance(tail, last) <= 2;
    })
    .map((d) => d.qualname)
    .slice(0, 8);
  return { ok: false, message: `no function or method '${qualname}'${near.length ? `; near matches: ${near.join(", ")}` : ""}` };
}

/** The nearest enclosing function_definition or class_definition of `node` (not `node` itself). */
export function enclosingScope(node: Node): Node | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "class_definition") return p;
  }
  return undefined;
}

/** The child of the module that contains `node`. */
export function topLevelStatement(node: Node): Node {
  let n = node;
  while (n.parent && n.parent.type !== "module") n = n.parent;
  return n;
}

/** Leading spaces and tabs of a line. */
export function indentOf(line: string): string {
  return /^[ \t]*/.exec(line)![0];
}

/**
 * The file's indentation step: the most common difference between a block's
 * first line and the line that opens it; a tab when the file indents with tabs.
 */
export function detectIndentUnit(root: Node, lines: string[]): string {
  const counts = new Map<string, number>();
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === "block" && n.parent && n.startPosition.row > n.parent.startPosition.row) {
      const outer = indentOf(lines[n.parent.startPosition.row] ?? "");
      const inner = indentOf(lines[n.startPosition.row] ?? "");
      if (inner.length > outer.length && inner.startsWith(outer)) {
        const step = inner.slice(outer.length);
        counts.set(step, (counts.get(step) ?? 0) + 1);
      }
    }
    for (const c of n.namedChildren) if (c) stack.push(c);
  }
  let best = "    ";
  let bestCount = 0;
  for (const [step, c] of counts) if (c > bestCount) [best, bestCount] = [step, c];
  return best;
}

/** Split keeping each line's own terminator, so rows match tree-sitter rows and endings survive. */
export function splitLines(source: string): string[] {
  return source === "" ? [] : source.split(/(?<=\n)/);
}

/** "\r\n" when most lines end that way, else "\n". */
export function dominantEol(source: string): string {
  const crlf = (source.match(/\r\n/g) ?? []).length;
  const lf = (source.match(/\n/g) ?? []).length - crlf;
  return crlf > lf ? "\r\n" : "\n";
}

const KEYWORDS = new Set(
  "False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield".split(
    " ",
  ),
);

export function isIdentifier(s: string): boolean {
  return /^[\p{L}_][\p{L}\p{N}_]*$/u.test(s) && !KEYWORDS.has(s);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Rows (0-based) that continue a multi-line string, within rows `first`..`last` (default: all):
 * a reindent must leave them byte for byte, since their whitespace is part of the string.
 */
export function stringContinuationRows(root: Node, first = 0, last = Number.POSITIVE_INFINITY): Set<number> {
  const rows = new Set<number>();
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.endPosition.row < first || n.startPosition.row > last) continue;
    if (n.type === "string" && n.endPosition.row > n.startPosition.row) {
      for (let r = n.startPosition.row + 1; r <= n.endPosition.row; r++) rows.add(r);
      continue;
    }
    for (const c of n.namedChildren) if (c) stack.push(c);
  }
  return rows;
}

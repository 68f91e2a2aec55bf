import { LmrError, type ErrorCode } from "../core/errors.js";
import type { LineRef } from "../manifest/types.js";
import type { Node, Tree } from "../lang/python-parser.js";
import { enclosingScope, findDefinition, type Definition } from "./python-scope.js";

/** Rows (0-based, inclusive) a LineRef may point into, and how to name them in messages. */
export interface RowRange {
  first: number;
  last: number;
  label: string;
}

export function fail(code: ErrorCode, message: string, pointer?: string, hint?: string): never {
  throw new LmrError({ code, message, ...(pointer ? { pointer } : {}), ...(hint ? { hint } : {}) });
}

/** The definition `within` names (undefined for module level) and the rows refs are resolved in. */
export function resolveWithin(tree: Tree, lines: string[], within: string | undefined): { def?: Definition; range: RowRange } {
  if (within === undefined) return { range: { first: 0, last: Math.max(0, lines.length - 1), label: `the module (lines 1-${lines.length})` } };
  const found = findDefinition(tree.rootNode, within);
  if (!found.ok) fail("prepare/within-not-found", found.message, "/within", "use the qualified name: `function`, `Class.method` or `outer.inner`");
  const def = found.def;
  const body = def.node.childForFieldName("body")!;
  return {
    def,
    range: {
      first: body.startPosition.row,
      last: def.node.endPosition.row,
      label: `${within} (lines ${body.startPosition.row + 1}-${def.node.endPosition.row + 1})`,
    },
  };
}

/** A LineRef → 0-based row inside `range`. */
export function resolveLineRef(lines: string[], ref: LineRef, range: RowRange, field: "start" | "end"): number {
  if ("line" in ref) {
    const row = ref.line - 1;
    if (!Number.isInteger(ref.line) || row < range.first || row > range.last) {
      fail("prepare/line-out-of-range", `${field} line ${ref.line} is outside ${range.label}`, `/${field}/line`);
    }
    return row;
  }
  const want = ref.occurrence ?? 1;
  let seen = 0;
  for (let row = range.first; row <= range.last; row++) {
    if ((lines[row] ?? "").includes(ref.anchor) && ++seen === want) return row;
  }
  const what = want === 1 ? `no line contains` : `only ${seen} line(s) contain`;
  return fail(
    "prepare/anchor-not-found",
    `${field} anchor ${JSON.stringify(ref.anchor)}${want > 1 ? ` (occurrence ${want})` : ""}: ${what} it in ${range.label}`,
    `/${field}/anchor`,
    "anchors match a substring of one line, case-sensitively; pick text that is in the upstream file at the pinned commit",
  );
}

export interface Block {
  /** First and last rows of the extracted text (blank edge lines trimmed; comments kept). */
  startRow: number;
  endRow: number;
  /** The statements, in order; all children of `parent`. */
  statements: Node[];
  /** The block (or module) holding them. */
  parent: Node;
  /** Leading whitespace of the statements. */
  indent: string;
}

const isBlank = (l: string | undefined): boolean => (l ?? "").trim() === "";
const isCodeLine = (l: string | undefined): boolean => !isBlank(l) && !(l ?? "").trimStart().startsWith("#");

/** Check that rows start..end are whole statements under one parent, directly inside `def` (or at module level). */
export function locateBlock(tree: Tree, lines: string[], def: Definition | undefined, start: number, end: number): Block {
  if (end < start) fail("prepare/block-empty", `the end (line ${end + 1}) comes before the start (line ${start + 1})`, "/end");
  let s = start;
  let e = end;
  while (s <= e && isBlank(lines[s])) s++;
  while (e >= s && isBlank(lines[e])) e--;
  let cs = s;
  let ce = e;
  while (cs <= ce && !isCodeLine(lines[cs])) cs++;
  while (ce >= cs && !isCodeLine(lines[ce])) ce--;
  if (cs > ce) fail("prepare/block-empty", `lines ${start + 1}-${end + 1} hold no statement`, "/start");

  const col = lines[cs]!.length - lines[cs]!.trimStart().length;
  let first: Node | null = tree.rootNode.descendantForPosition({ row: cs, column: col });
  while (first && first.parent && first.parent.type !== "block" && first.parent.type !== "module") first = first.parent;
  if (!first || !first.parent) fail("prepare/block-invalid", `line ${cs + 1} is not the start of a statement`, "/start");
  if (first.startPosition.row !== cs) {
    fail(
      "prepare/block-invalid",
      `line ${cs + 1} is in the middle of a statement that starts at line ${first.startPosition.row + 1}`,
      "/start",
      "start the block at the first line of a statement",
    );
  }
  const parent = first.parent;
  const statements = parent.namedChildren.filter((c): c is Node => c !== null && c.type !== "comment" && c.endPosition.row >= cs && c.startPosition.row <= ce);
  const last = statements[statements.length - 1]!;
  if (last.endPosition.row > ce) {
    const indent = (row: number): number => lines[row]!.length - lines[row]!.trimStart().length;
    if (last.startPosition.row < ce && indent(ce) > indent(cs)) {
      const kw = last.type.replace(/_statement$|_definition$/, "");
      fail(
        "prepare/block-crosses-indentation",
        `lines ${cs + 1}-${ce + 1} are not whole statements at one indentation level: line ${ce + 1} is inside the \`${kw}\` at lines ${last.startPosition.row + 1}-${last.endPosition.row + 1}`,
        "/end",
        `end the block at line ${last.endPosition.row + 1} (after the whole \`${kw}\`) or before line ${last.startPosition.row + 1}`,
      );
    }
    fail(
      "prepare/block-invalid",
      `line ${ce + 1} is in the middle of the statement at lines ${last.startPosition.row + 1}-${last.endPosition.row + 1}`,
      "/end",
      "end the block at the last line of a statement",
    );
  }
  if (last.endPosition.row < ce) {
    fail(
      "prepare/block-crosses-indentation",
      `lines ${cs + 1}-${ce + 1} are not whole statements at one indentation level: line ${ce + 1} is outside the block that line ${cs + 1} belongs to (it ends at line ${last.endPosition.row + 1})`,
      "/end",
      "start and end the block inside the same suite (same indentation)",
    );
  }
  checkScope(parent, def, cs);
  return { startRow: s, endRow: e, statements, parent, indent: /^[ \t]*/.exec(lines[cs]!)![0] };
}

function checkScope(parent: Node, def: Definition | undefined, row: number): void {
  const scope = parent.type === "module" ? undefined : (enclosingScope(parent) ?? undefined);
  const where = (n: Node): string =>
    `${n.type === "class_definition" ? "class" : "function"} '${n.childForFieldName("name")?.text}' (line ${n.startPosition.row + 1})`;
  if (def === undefined) {
    if (scope)
      fail(
        "prepare/block-scope",
        `line ${row + 1} is inside ${where(scope)}, not at module level`,
        "/within",
        "set `within` to the function that holds the lines",
      );
    return;
  }
  if (!scope || scope.id !== def.node.id) {
    const inside = scope ? `inside ${where(scope)}` : "at module level";
    fail(
      "prepare/block-scope",
      `line ${row + 1} is ${inside}, not directly in ${def.qualname}`,
      "/within",
      "name the innermost function that holds the lines in `within`",
    );
  }
}

/**
 * Reject blocks whose control flow leaves the block: after extraction a
 * `return` would return from the new function, `break` would have no loop,
 * `yield` would make a generator, `global` would change scoping.
 */
export function checkNoEscapes(statements: Node[], within: string | undefined): void {
  const owner = within ?? "the module";
  function visit(n: Node, inLoop: boolean): void {
    const line = n.startPosition.row + 1;
    switch (n.type) {
      case "function_definition":
      case "class_definition":
      case "lambda":
        return;
      case "return_statement":
        fail(
          "prepare/block-escapes",
          `line ${line}: the block contains \`return\`, which returns from ${owner}; as a new function it would return from that function instead`,
          "/start",
          "end the block before the return, or restructure upstream code with another step",
        );
        break;
      case "yield":
        fail("prepare/block-escapes", `line ${line}: the block contains \`yield\`; as a new function it would become a generator`, "/start");
        break;
      case "await":
        fail("prepare/block-escapes", `line ${line}: the block contains \`await\`; extracting from async code is not supported`, "/start");
        break;
      case "global_statement":
      case "nonlocal_statement":
        fail(
          "prepare/block-escapes",
          `line ${line}: the block contains \`${n.type.split("_")[0]}\`, whose meaning would change inside a new function`,
          "/start",
        );
        break;
      case "break_statement":
      case "continue_statement":
        if (!inLoop) {
          const kw = n.type.split("_")[0];
          fail(
            "prepare/block-escapes",
            `line ${line}: \`${kw}\` refers to a loop outside the block; a new function cannot ${kw} it`,
            "/start",
            "include the whole loop in the block",
          );
        }
        return;
      case "for_statement":
      case "while_statement": {
        if (n.children.some((c) => c?.type === "async")) {
          fail("prepare/block-escapes", `line ${line}: the block contains \`async for\`; extracting from async code is not supported`, "/start");
        }
        // the loop body may break/continue; an `else:` clause belongs to the outer context
        for (const c of n.namedChildren) if (c) visit(c, c.type === "block" || inLoop);
        return;
      }
    }
    if (n.type === "with_statement" && n.children.some((c) => c?.type === "async")) {
      fail("prepare/block-escapes", `line ${line}: the block contains \`async with\`; extracting from async code is not supported`, "/start");
    }
    for (const c of n.namedChildren) if (c) visit(c, inLoop);
  }
  for (const s of statements) visit(s, false);
}

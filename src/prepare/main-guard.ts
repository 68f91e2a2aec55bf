import { parsePython, type Node } from "../lang/python-parser.js";
import { fail } from "./block.js";
import { collectNameEvents } from "./names.js";
import { detectIndentUnit, dominantEol, splitLines, stringContinuationRows } from "./python-scope.js";

/**
 * `main_guard`: a script's top-level code goes under `if __name__ == "__main__":`
 * so that importing the module defines the extracted function without running
 * the script. Imports, `def`s, `class`es, the module docstring and existing
 * `__main__` blocks stay where they are; every other top-level statement is
 * guarded, consecutive ones under one `if`. Run as a script, the module does
 * what it did, in the same order: an `if` opens no scope.
 */

export interface GuardResult {
  source: string;
  /** 1-based, inclusive line ranges of the guarded code in the result (each below its `if`). */
  guarded: Array<[number, number]>;
  /** 0-based rows (of the input) before which an `if` line was inserted. */
  inserted_before: number[];
}

const GUARD = 'if __name__ == "__main__":';

/** Top-level statements that run when the module is imported and that the guard would wrap. */
function scriptStatements(root: Node): Node[] {
  const stmts = root.namedChildren.filter((c): c is Node => c !== null && c.type !== "comment");
  return stmts.filter((s, i) => !staysUnguarded(s, i === 0));
}

/** Runs of consecutive script statements (nothing that stays between them): each goes under one `if`. */
function scriptRuns(root: Node): Array<{ first: Node; last: Node; nodes: Node[] }> {
  const runs: Array<{ first: Node; last: Node; nodes: Node[] }> = [];
  let prevGuarded = false;
  root.namedChildren.forEach((c, i) => {
    if (!c || c.type === "comment") return;
    const guarded = !staysUnguarded(c, runs.length === 0 && !prevGuarded && isFirstStatement(root, i));
    if (guarded && prevGuarded) {
      const run = runs[runs.length - 1]!;
      run.last = c;
      run.nodes.push(c);
    } else if (guarded) runs.push({ first: c, last: c, nodes: [c] });
    prevGuarded = guarded;
  });
  return runs;
}

function isFirstStatement(root: Node, index: number): boolean {
  return root.namedChildren.slice(0, index).every((c) => !c || c.type === "comment");
}

/** Line ranges (1-based) of the runs of top-level code that call something when the module is imported: what `main_guard` is for. */
export async function codeRunOnImport(source: string): Promise<Array<[number, number]>> {
  const tree = await parsePython(source);
  return scriptRuns(tree.rootNode)
    .filter((r) => r.nodes.some(hasCall))
    .map((r): [number, number] => [r.first.startPosition.row + 1, r.last.endPosition.row + 1]);
}

/**
 * Guard the script code of `source`. `fn` is the row of the new function's
 * `def`: the names it reads must not be ones only guarded code binds.
 * `lineOf` maps a row of `source` to the line that messages name (the
 * upstream file's, before extraction).
 */
export async function guardScriptCode(
  source: string,
  fn: { name: string; row: number },
  lineOf: (row: number) => number = (row) => row + 1,
): Promise<GuardResult> {
  const tree = await parsePython(source);
  const root = tree.rootNode;
  const lines = splitLines(source);
  const guarded = scriptStatements(root);
  if (guarded.length === 0) {
    fail(
      "prepare/main-guard-empty",
      'main_guard is true but the module has no top-level code to guard: only imports, definitions and `if __name__ == "__main__":` blocks',
      "/main_guard",
      "drop main_guard",
    );
  }
  const kept = root.namedChildren.filter((c): c is Node => c !== null && c.type !== "comment" && !guarded.includes(c));
  checkRowsShared(guarded, kept, lineOf);
  checkNames(root, guarded, kept, fn, lineOf);

  const runs = scriptRuns(root).map((r): [Node, Node] => [r.first, r.last]);

  const eol = dominantEol(source);
  const unit = detectIndentUnit(root, lines);
  const verbatim = stringContinuationRows(root);
  const out = [...lines];
  for (const [first, last] of runs) {
    for (let row = first.startPosition.row; row <= last.endPosition.row; row++) {
      const line = out[row]!;
      if (verbatim.has(row) || line.trim() === "") continue;
      out[row] = unit + line;
    }
  }
  if (out.length > 0 && !out[out.length - 1]!.endsWith("\n")) out[out.length - 1] += eol;
  // Insert the `if` lines bottom-up so earlier rows keep their numbers.
  const starts = runs.map(([first]) => first.startPosition.row);
  for (const row of [...starts].reverse()) out.splice(row, 0, GUARD + eol);
  const ranges = runs.map(([first, last], i): [number, number] => [first.startPosition.row + i + 2, last.endPosition.row + i + 2]);
  return { source: out.join(""), guarded: ranges, inserted_before: starts };
}

function staysUnguarded(s: Node, first: boolean): boolean {
  switch (s.type) {
    case "import_statement":
    case "import_from_statement":
    case "future_import_statement":
    case "function_definition":
    case "class_definition":
    case "decorated_definition":
      return true;
    case "expression_statement":
      // the module docstring
      return first && s.namedChildCount === 1 && s.namedChildren[0]?.type === "string";
    case "if_statement":
      return isMainCheck(s.childForFieldName("condition"));
  }
  return false;
}

function isMainCheck(cond: Node | null): boolean {
  if (!cond || cond.type !== "comparison_operator") return false;
  const text = cond.text.replace(/\s+/g, "").replace(/'/g, '"');
  return text === '__name__=="__main__"' || text === '"__main__"==__name__';
}

function hasCall(n: Node): boolean {
  if (n.type === "call") return true;
  return n.namedChildren.some((c) => c !== null && hasCall(c));
}

/** A guarded statement and a kept one on one line (`import os; x = f()`) cannot be split by indentation. */
function checkRowsShared(guarded: Node[], kept: Node[], lineOf: (row: number) => number): void {
  for (const g of guarded) {
    const k = kept.find((s) => s.startPosition.row <= g.endPosition.row && g.startPosition.row <= s.endPosition.row);
    if (k) {
      fail(
        "prepare/main-guard-unsafe",
        `line ${lineOf(Math.max(g.startPosition.row, k.startPosition.row))} holds top-level code to guard and a statement that stays (${k.type.replace(/_statement$|_definition$/, "")}) on one line`,
        "/main_guard",
        "main_guard needs them on separate lines; leave main_guard off",
      );
    }
  }
}

/**
 * Importing the guarded module runs the kept statements only: a name that only
 * guarded code binds is undefined then. The new function must not read one
 * (pass it as a parameter), and no kept definition may read one when it is
 * defined (decorators, defaults, base classes, class bodies).
 */
function checkNames(root: Node, guarded: Node[], kept: Node[], fn: { name: string; row: number }, lineOf: (row: number) => number): void {
  const mainBlocks = kept.filter((k) => k.type === "if_statement");
  const onImport = kept.filter((k) => !mainBlocks.includes(k));
  const boundOnImport = new Set(
    collectNameEvents(onImport)
      .filter((e) => e.op === "store")
      .map((e) => e.name),
  );
  const firstBinding = new Map<string, number>();
  for (const e of collectNameEvents([...guarded, ...mainBlocks].sort((a, b) => a.startIndex - b.startIndex))) {
    if (e.op === "store" && !boundOnImport.has(e.name) && !firstBinding.has(e.name)) firstBinding.set(e.name, rowAt(root, e.index));
  }
  const newDef = onImport.flatMap((k) => definitionsIn(k)).find((d) => d.childForFieldName("name")?.text === fn.name && d.startPosition.row === fn.row);
  for (const k of onImport) {
    if (k.type === "import_statement" || k.type === "import_from_statement" || k.type === "future_import_statement") continue;
    for (const e of collectNameEvents([k])) {
      if (e.op !== "load" || !firstBinding.has(e.name)) continue;
      const line = lineOf(rowAt(root, e.index));
      const bound = lineOf(firstBinding.get(e.name)!);
      if (newDef && e.index >= newDef.startIndex && e.index < newDef.endIndex) {
        fail(
          "prepare/main-guard-unsafe",
          `line ${line}: the new function ${fn.name} reads '${e.name}', which only the script code binds (line ${bound}): after importing the module it is undefined`,
          "/params",
          `add '${e.name}' to params`,
        );
      }
      if (atDefinitionTime(k, e.index)) {
        fail(
          "prepare/main-guard-unsafe",
          `line ${line}: '${e.name}' is read when the definition at line ${lineOf(k.startPosition.row)} runs (a decorator, default, base class or class body), but only the script code binds it (line ${bound}): importing the module would fail`,
          "/main_guard",
          "leave main_guard off",
        );
      }
    }
  }
}

/** Function definitions inside a kept top-level statement (itself, or methods of a class). */
function definitionsIn(n: Node): Node[] {
  const out: Node[] = [];
  const stack: Node[] = [n];
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (c.type === "function_definition") out.push(c);
    for (const x of c.namedChildren) if (x) stack.push(x);
  }
  return out;
}

/** Whether the identifier at `index` inside `top` is evaluated when `top` runs, not when a function in it is called. */
function atDefinitionTime(top: Node, index: number): boolean {
  for (let n = top.descendantForIndex(index); n && n.id !== top.id; n = n.parent) {
    const p = n.parent;
    if (p && (p.type === "function_definition" || p.type === "lambda") && n.id === p.childForFieldName("body")?.id) return false;
  }
  return true;
}

function rowAt(root: Node, index: number): number {
  return root.descendantForIndex(index)?.startPosition.row ?? 0;
}

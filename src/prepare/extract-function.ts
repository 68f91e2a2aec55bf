import type { ExtractFunctionStep } from "../manifest/types.js";
import { findSyntaxError, parsePython, type Node, type Tree } from "../lang/python-parser.js";
import { checkNoEscapes, fail, locateBlock, resolveLineRef, resolveWithin, type Block } from "./block.js";
import { guardScriptCode } from "./main-guard.js";
import { collectNameEvents, collectScopeEvents } from "./names.js";
import {
  detectIndentUnit,
  dominantEol,
  indentOf,
  isIdentifier,
  splitLines,
  stringContinuationRows,
  topLevelStatement,
  type Definition,
} from "./python-scope.js";

/** The manifest step without its kind and file: what the pure transformation needs. */
export type ExtractSpec = Omit<ExtractFunctionStep, "kind" | "file">;

export interface ExtractResult {
  source: string;
  /** 1-based lines of the extracted block in the original file. */
  start_line: number;
  end_line: number;
  /** 1-based line of the new `def` in the result. */
  def_line: number;
  /** The call that replaced the block, without indentation. */
  call: string;
  /** main_guard: 1-based line ranges of the result that went under `if __name__ == "__main__":`. */
  guarded?: Array<[number, number]>;
}

/**
 * Move a block of statements into a new function (or method) and call it from
 * where the block was. Pure: source in, source out. Errors are LmrErrors whose
 * pointer is relative to the step (e.g. "/start/anchor").
 */
export async function extractFunction(source: string, spec: ExtractSpec): Promise<ExtractResult> {
  checkNames(spec);
  const tree = await parsePython(source);
  const syntax = findSyntaxError(tree.rootNode);
  if (syntax) fail("prepare/source-invalid", `the file does not parse (line ${syntax.startPosition.row + 1}); cannot extract from it`, "/file");
  const lines = splitLines(source);
  const { def, range } = resolveWithin(tree, lines, spec.within);
  const start = resolveLineRef(lines, spec.start, range, "start");
  const end = resolveLineRef(lines, spec.end, range, "end");
  const block = locateBlock(tree, lines, def, start, end);
  checkNoEscapes(block.statements, spec.within);

  const eol = dominantEol(source);
  const unit = detectIndentUnit(tree.rootNode, lines);
  const asMethod = spec.as_method === true;
  const method = asMethod ? methodContext(def, spec.within) : undefined;
  checkFreeName(tree, def, method, spec.name, block);
  if (method && spec.params.includes(method.self)) {
    fail(
      "prepare/name-invalid",
      `params lists '${method.self}', which a method gets first anyway`,
      "/params",
      `drop '${method.self}' from params when as_method is true`,
    );
  }

  const defIndent = method ? indentOf(lines[method.def.outer.startPosition.row]!) : "";
  const bodyIndent = defIndent + unit;
  const params = method ? [method.self, ...spec.params] : spec.params;
  const header = [...(method?.decorator ? [`${defIndent}${method.decorator}`] : []), `${defIndent}def ${spec.name}(${params.join(", ")}):`];
  const body = reindentBlock(tree, lines, block, bodyIndent, eol);
  const ret = spec.returns.length > 0 ? [`${bodyIndent}return ${spec.returns.join(", ")}`] : [];
  const newDef = [...header.map((l) => l + eol), ...body, ...ret.map((l) => l + eol)];

  const callee = method ? `${method.self}.${spec.name}` : spec.name;
  const call = `${spec.returns.length > 0 ? `${spec.returns.join(", ")} = ` : ""}${callee}(${spec.params.join(", ")})`;
  const lastLine = lines[block.endRow]!;
  const callLine = `${block.indent}${call}${/\r?\n$/.exec(lastLine)?.[0] ?? ""}`;

  const out = [...lines];
  // origin[i]: the row of the input that line i of the result comes from (new lines: the block's first row).
  const origin = lines.map((_, i) => i);
  const defOrigin = [...header.map(() => block.startRow), ...body.map((_, j) => block.startRow + j), ...ret.map(() => block.startRow)];
  let defRow: number;
  if (method) {
    const after = method.def.node.endPosition.row;
    if (!out[after]!.endsWith("\n")) out[after] += eol;
    out.splice(after + 1, 0, eol, ...newDef);
    origin.splice(after + 1, 0, after, ...defOrigin);
    out.splice(block.startRow, block.endRow - block.startRow + 1, callLine);
    origin.splice(block.startRow, block.endRow - block.startRow + 1, block.startRow);
    defRow = after + 2 + header.length - 1 - (block.endRow - block.startRow);
  } else {
    const anchorNode = topLevelStatement(def ? def.outer : block.statements[0]!);
    // A block that is itself at top level gets its function right above the call.
    const at = anchorNode.startPosition.row >= block.startRow ? block.startRow : insertionRow(lines, anchorNode);
    out.splice(block.startRow, block.endRow - block.startRow + 1, callLine);
    origin.splice(block.startRow, block.endRow - block.startRow + 1, block.startRow);
    const before = at > 0 && !isBlankLine(out[at - 1]) ? [eol, eol] : [];
    out.splice(at, 0, ...before, ...newDef, eol, eol);
    origin.splice(at, 0, ...before.map(() => at), ...defOrigin, at, at);
    defRow = at + before.length + header.length - 1;
  }
  let result = out.join("");
  const check = await parsePython(result);
  const err = findSyntaxError(check.rootNode);
  if (err) {
    fail(
      "prepare/result-invalid",
      `the extracted code does not parse (line ${err.startPosition.row + 1} of the result)`,
      undefined,
      "check `params`/`returns`, and that the block is plain statements",
    );
  }
  let guarded: Array<[number, number]> | undefined;
  if (spec.main_guard === true) {
    const g = await guardScriptCode(result, { name: spec.name, row: defRow }, (row) => (origin[row] ?? row) + 1);
    defRow += g.inserted_before.filter((r) => r <= defRow).length;
    result = g.source;
    guarded = g.guarded;
  }
  return { source: result, start_line: block.startRow + 1, end_line: block.endRow + 1, def_line: defRow + 1, call, ...(guarded ? { guarded } : {}) };
}

function checkNames(spec: ExtractSpec): void {
  if (!isIdentifier(spec.name)) fail("prepare/name-invalid", `name ${JSON.stringify(spec.name)} is not a Python identifier`, "/name");
  spec.params.forEach((p, i) => {
    if (!isIdentifier(p)) fail("prepare/name-invalid", `params[${i}] ${JSON.stringify(p)} is not a Python identifier`, `/params/${i}`);
  });
  spec.returns.forEach((r, i) => {
    if (!isIdentifier(r)) fail("prepare/name-invalid", `returns[${i}] ${JSON.stringify(r)} is not a Python identifier`, `/returns/${i}`);
  });
  const dup = spec.params.find((p, i) => spec.params.indexOf(p) !== i);
  if (dup) fail("prepare/name-invalid", `params lists '${dup}' twice`, "/params");
}

interface MethodContext {
  def: Definition;
  /** The method's first parameter (`self`, or `cls` for a classmethod). */
  self: string;
  decorator?: string;
}

function methodContext(def: Definition | undefined, within: string | undefined): MethodContext {
  if (!def || def.kind !== "method")
    fail(
      "prepare/not-a-method",
      `as_method is true but ${within ?? "the module"} is not a method of a class`,
      "/as_method",
      "drop as_method to make a module-level function",
    );
  const decorators = def.outer.type === "decorated_definition" ? def.outer.namedChildren.filter((c) => c?.type === "decorator").map((c) => c!.text.trim()) : [];
  if (decorators.includes("@staticmethod"))
    fail("prepare/not-a-method", `${def.qualname} is a staticmethod: it has no self to call a new method on`, "/as_method", "drop as_method");
  const first = def.node.childForFieldName("parameters")?.namedChildren[0];
  const self = first?.type === "identifier" ? first.text : first?.namedChildren.find((c) => c?.type === "identifier")?.text;
  if (!self) fail("prepare/not-a-method", `${def.qualname} has no self parameter`, "/as_method");
  return { def, self, ...(decorators.includes("@classmethod") ? { decorator: "@classmethod" } : {}) };
}

/**
 * The new name must be free where it is defined and where it is called: a
 * module-level function named like a local of `within` would never be reached.
 */
function checkFreeName(tree: Tree, def: Definition | undefined, method: MethodContext | undefined, name: string, block: Block): void {
  const taken = (where: string, index: number): never =>
    fail("prepare/name-taken", `'${name}' is already ${where} (line ${rowOf(tree, index) + 1})`, "/name", "choose another name");
  if (method) {
    const body = method.def.owner?.node.childForFieldName("body");
    const hit = collectNameEvents(body ? [body] : []).find((e) => e.op === "store" && e.name === name && e.region[0] === body?.startIndex);
    if (hit) taken(`defined in class ${method.def.owner?.qualname}`, hit.index);
    return;
  }
  const top = collectNameEvents(tree.rootNode.namedChildren.filter((c): c is Node => c !== null)).find(
    (e) => e.op === "store" && e.name === name && !insideFunction(tree, e.index),
  );
  if (top) taken("bound at module level", top.index);
  if (def) {
    // Names bound inside the block move out with it.
    const from = block.statements[0]!.startIndex;
    const to = block.statements[block.statements.length - 1]!.endIndex;
    const local = collectScopeEvents(def.node).find((e) => e.op === "store" && e.name === name && (e.index < from || e.index >= to));
    if (local) taken(`a local name of ${def.qualname}, so the call would not reach the new function`, local.index);
  }
}

function rowOf(tree: Tree, index: number): number {
  return tree.rootNode.descendantForIndex(index)?.startPosition.row ?? 0;
}

function insideFunction(tree: Tree, index: number): boolean {
  for (let n = tree.rootNode.descendantForIndex(index); n; n = n.parent) {
    if (n.type === "function_definition" || n.type === "lambda" || n.type === "class_definition") {
      // the def's own name is bound in the enclosing scope
      if (n.childForFieldName("name")?.startIndex === index) continue;
      return true;
    }
  }
  return false;
}

/** Block lines moved to `indent`; continuation lines of multi-line strings stay byte for byte. */
function reindentBlock(tree: Tree, lines: string[], block: Block, indent: string, eol: string): string[] {
  const verbatim = stringContinuationRows(tree.rootNode, block.startRow, block.endRow);
  const out: string[] = [];
  for (let row = block.startRow; row <= block.endRow; row++) {
    const line = lines[row]!;
    const ending = line.endsWith("\n") ? line.slice(line.replace(/\r?\n$/, "").length) : eol;
    const text = line.replace(/\r?\n$/, "");
    if (verbatim.has(row)) out.push(text + ending);
    else if (text.trim() === "") out.push(ending);
    else {
      const ws = indentOf(text);
      const rest = ws.startsWith(block.indent) ? text.slice(block.indent.length) : text.trimStart();
      out.push(indent + rest + ending);
    }
  }
  return out;
}

/** Row before which a module-level function goes: above `node` and the comments directly over it. */
function insertionRow(lines: string[], node: Node): number {
  let row = node.startPosition.row;
  while (row > 0 && lines[row - 1]!.trimStart().startsWith("#")) row--;
  return row;
}

function isBlankLine(l: string | undefined): boolean {
  return l === undefined || l.trim() === "";
}

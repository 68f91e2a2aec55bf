import type { LineRef } from "../manifest/types.js";
import { findSyntaxError, parsePython, type Node } from "../lang/python-parser.js";
import { fail, locateBlock, resolveLineRef, resolveWithin } from "./block.js";
import { codeRunOnImport } from "./main-guard.js";
import { collectNameEvents, collectScopeEvents, type NameEvent } from "./names.js";
import { splitLines } from "./python-scope.js";

export interface Signature {
  params: string[];
  returns: string[];
  /** 1-based lines of the block (blank edge lines trimmed). */
  start_line: number;
  end_line: number;
  /**
   * Present when importing the file runs top-level code that calls something
   * (1-based line ranges; a module-level block is among them, and so is the call
   * that replaces it): the step wants `main_guard`, or importing the module runs the script.
   */
  main_guard?: true;
  runs_on_import?: Array<[number, number]>;
}

/**
 * Propose params and returns for extracting lines start..end of `within`
 * (free-variable analysis). Params: names the block reads before assigning
 * them that are bound earlier in the enclosing function (or, at module level,
 * module variables assigned earlier); builtins, imports and other globals stay
 * free. Returns: names the block assigns that are read after it (or elsewhere
 * in an enclosing loop). Order: first occurrence in the block.
 */
export async function suggestSignature(
  source: string,
  within: string | undefined,
  start: LineRef,
  end: LineRef,
  opts: { asMethod?: boolean } = {},
): Promise<Signature> {
  const tree = await parsePython(source);
  const syntax = findSyntaxError(tree.rootNode);
  if (syntax) fail("prepare/source-invalid", `the file does not parse (line ${syntax.startPosition.row + 1})`, "/file");
  const lines = splitLines(source);
  const { def, range } = resolveWithin(tree, lines, within);
  const block = locateBlock(tree, lines, def, resolveLineRef(lines, start, range, "start"), resolveLineRef(lines, end, range, "end"));
  const from = block.statements[0]!.startIndex;
  const to = block.statements[block.statements.length - 1]!.endIndex;

  const scopeNode = def ? def.node : tree.rootNode;
  const events = def ? collectScopeEvents(def.node) : collectNameEvents(tree.rootNode.namedChildren.filter((c): c is Node => c !== null));
  const boundBefore = new Set<string>();
  for (const e of events) {
    if (e.op !== "store" || e.index >= from) continue;
    if (def || e.bind === "variable") boundBefore.add(e.name);
  }
  for (const outer of enclosingFunctions(scopeNode)) {
    for (const e of collectScopeEvents(outer)) if (e.op === "store") boundBefore.add(e.name);
  }
  const selfName = opts.asMethod && def ? firstParam(def.node) : undefined;

  const inBlock = (e: NameEvent): boolean => e.index >= from && e.index < to;
  const stores = events.filter((e) => e.op === "store");
  // A store covers a later load when the load sits in the store's own block: then the load can only see that store.
  const covered = (load: NameEvent, since: number): boolean =>
    stores.some((s) => s.name === load.name && s.index >= since && s.at <= load.index && load.index >= s.region[0] && load.index < s.region[1]);

  const params: string[] = [];
  const assigned: string[] = [];
  // Source order, so the proposal reads like the code (events come in evaluation order).
  for (const e of events.filter(inBlock).sort((a, b) => a.index - b.index)) {
    if (e.op === "store") {
      if (!assigned.includes(e.name)) assigned.push(e.name);
    } else if (!params.includes(e.name) && boundBefore.has(e.name) && e.name !== selfName && !covered(e, from)) {
      params.push(e.name);
    }
  }

  const loop = enclosingLoop(block.parent, scopeNode);
  const live = new Set<string>();
  for (const e of events) {
    if (e.op !== "load") continue;
    if (e.index >= to && !covered(e, to)) live.add(e.name);
    // the next iteration of a loop around the block reads what the block left
    else if (loop && e.index >= loop.startIndex && e.index < from && !covered(e, loop.startIndex)) live.add(e.name);
  }
  const returns = assigned.filter((n) => live.has(n));
  const runs = await codeRunOnImport(source);
  return {
    params,
    returns,
    start_line: block.startRow + 1,
    end_line: block.endRow + 1,
    ...(runs.length > 0 ? { main_guard: true as const, runs_on_import: runs } : {}),
  };
}

function firstParam(fn: Node): string | undefined {
  const p = fn.childForFieldName("parameters")?.namedChildren[0];
  return p?.type === "identifier" ? p.text : undefined;
}

/** Functions around `node` whose locals it can see (class bodies are not visible scopes). */
function enclosingFunctions(node: Node): Node[] {
  const out: Node[] = [];
  for (let p = node.parent; p; p = p.parent) if (p.type === "function_definition") out.push(p);
  return out;
}

/** The innermost loop around the block, inside its scope: its later iterations read what the block wrote. */
function enclosingLoop(parent: Node, scope: Node): Node | undefined {
  for (let p: Node | null = parent; p && p.id !== scope.id; p = p.parent) {
    if (p.type === "for_statement" || p.type === "while_statement") return p;
  }
  return undefined;
}

import type { Parser } from "web-tree-sitter";
import { LmrError, type ErrorCode } from "../../core/errors.js";
import { findSyntaxError, getPythonParser, type Tree } from "../../lang/python-parser.js";
import { applyEdits, checkOverlaps, type TextEdit } from "../apply-edits.js";
import { collectMethods, locateSymbol } from "../locate-symbol.js";
import { checkSpecMode } from "../spec-check.js";
import { detectIndentUnit, planBodyEdit } from "./body.js";
import { describeBody, findHeaderColon, indexDefinitions, type PyDef, type PyIndex } from "./symbols.js";
import { planRegionEdit } from "./region.js";
import { verifyMasked, type VerifyMode } from "./verify.js";
import { ByteOffsets } from "../text-layout.js";
import type { MaskResult, MaskSpec, MaskedTarget, Masker, SymbolInfo } from "../types.js";

export interface PythonMaskerOptions {
  /** How to re-parse the masked source and reject error nodes (default "changed": only the changed definitions; see verify.ts). */
  verify?: VerifyMode;
  /** How many parsed sources to keep (tree + symbol index), so several calls on one file parse it once. Default 4; 0 = none. */
  cacheSize?: number;
}

interface ParsedSource {
  tree: Tree;
  index: PyIndex;
  bytes: ByteOffsets;
  indentUnit?: string;
}

/** The Python masker: tree-sitter (web-tree-sitter) based, pure text in and out. */
export class PythonMasker implements Masker {
  readonly language = "python";
  readonly extensions = [".py"] as const;
  private readonly cache = new Map<string, ParsedSource>();
  private readonly verify: VerifyMode;
  private readonly cacheSize: number;

  constructor(options: PythonMaskerOptions = {}) {
    this.verify = options.verify ?? "changed";
    this.cacheSize = options.cacheSize ?? 4;
  }

  async mask(source: string, specs: MaskSpec[], file?: string): Promise<MaskResult> {
    const parser = await getPythonParser();
    // Everything after the parser is ready is synchronous, so no other call can evict the cached tree meanwhile.
    const parsed = this.load(parser, source, file);
    try {
      return this.maskParsed(parser, parsed, source, specs, file);
    } finally {
      if (this.cacheSize === 0) parsed.tree.delete();
    }
  }

  async listSymbols(source: string, file?: string): Promise<SymbolInfo[]> {
    const parser = await getPythonParser();
    const parsed = this.load(parser, source, file);
    try {
      return parsed.index.defs.map((d) => describeSymbol(source, d, parsed.bytes));
    } finally {
      if (this.cacheSize === 0) parsed.tree.delete();
    }
  }

  /** Frees the cached trees (WASM memory). */
  clearCache(): void {
    for (const p of this.cache.values()) p.tree.delete();
    this.cache.clear();
  }

  private load(parser: Parser, source: string, file: string | undefined): ParsedSource {
    const hit = this.cache.get(source);
    if (hit) {
      this.cache.delete(source);
      this.cache.set(source, hit);
      return hit;
    }
    const tree = parser.parse(source);
    if (!tree) throw new LmrError({ code: "mask/no-tree", file, message: "tree-sitter returned no tree" });
    const bad = findSyntaxError(tree.rootNode);
    if (bad) {
      tree.delete();
      throw new LmrError({
        code: "mask/parse-error",
        file,
        pointer: `line ${bad.startPosition.row + 1}`,
        message: `the input does not parse (tree-sitter ${bad.isMissing ? `missing ${bad.type}` : "syntax error"} at line ${bad.startPosition.row + 1})`,
        hint: "mask only files that are valid Python 3",
      });
    }
    const parsed: ParsedSource = { tree, index: indexDefinitions(tree.rootNode), bytes: new ByteOffsets(source) };
    if (this.cacheSize > 0) {
      this.cache.set(source, parsed);
      while (this.cache.size > this.cacheSize) {
        const [oldest, entry] = this.cache.entries().next().value as [string, ParsedSource];
        this.cache.delete(oldest);
        entry.tree.delete();
      }
    }
    return parsed;
  }

  private maskParsed(parser: Parser, parsed: ParsedSource, source: string, specs: MaskSpec[], file: string | undefined): MaskResult {
    if (specs.length === 0) throw new LmrError({ code: "mask/no-targets", file, message: "no symbol to mask", hint: "give at least one symbol" });
    const edits: TextEdit[] = [];
    const defs: PyDef[] = [];
    specs.forEach((spec, owner) => {
      const def = locateSymbol(parsed.index, spec.symbol, spec.line, file);
      defs.push(def);
      const container = { start: def.outer.startIndex, end: def.outer.endIndex, row: def.outer.startPosition.row };
      for (const e of this.planSpec(source, parsed, def, spec, owner, file)) edits.push({ ...e, container });
    });
    checkOverlaps(edits, (owner) => `"${specs[owner]!.symbol}"`, file);
    const masked = applyEdits(source, edits);
    verifyMasked(parser, parsed.tree, masked, edits, this.verify, file);

    const ascending = [...edits].sort((a, b) => a.start - b.start);
    const targets: MaskedTarget[] = specs.map((spec, owner) => ({
      symbol: spec.symbol,
      mode: spec.mode,
      start_line: defs[owner]!.outer.startPosition.row + 1,
      end_line: defs[owner]!.outer.endPosition.row + 1,
      reference: [],
      byte_ranges: [],
    }));
    for (const e of ascending) {
      const t = targets[e.owner]!;
      t.reference.push(source.slice(e.start, e.end));
      t.byte_ranges.push([parsed.bytes.at(e.start), parsed.bytes.at(e.end)]);
    }
    return { source: masked, targets };
  }

  private planSpec(source: string, parsed: ParsedSource, def: PyDef, spec: MaskSpec, owner: number, file: string | undefined): TextEdit[] {
    const fail = checkSpecMode(spec, file);
    if (spec.mode === "region" && spec.region) {
      return [planRegionEdit(source, def, spec.region, owner, file)];
    }
    if (spec.mode === "class") {
      if (def.kind !== "class") fail("mask/wrong-mode", `"${spec.symbol}" is a ${def.kind}, not a class`, "use mode body for functions and methods");
      const methods = collectMethods(parsed.index.defs, def);
      if (methods.length === 0) fail("mask/nothing-to-mask", `class "${spec.symbol}" has no methods`, "mask a class with methods, or use mode region");
      return methods.map((m) => planBodyEdit(source, m, this.indentUnitOf(source, parsed), owner));
    }
    if (def.kind === "class") fail("mask/wrong-mode", `"${spec.symbol}" is a class`, "use mode class to mask every method body");
    return [planBodyEdit(source, def, this.indentUnitOf(source, parsed), owner)];
  }

  private indentUnitOf(source: string, parsed: ParsedSource): string {
    parsed.indentUnit ??= detectIndentUnit(source, parsed.index);
    return parsed.indentUnit;
  }
}

function describeSymbol(source: string, d: PyDef, bytes: ByteOffsets): SymbolInfo {
  const shape = describeBody(d.node);
  const colon = shape?.colon ?? findHeaderColon(d.node);
  const doc = shape?.docstring;
  const info: SymbolInfo = {
    name: d.qualname,
    kind: d.kind,
    line: d.line,
    end_line: d.outer.endPosition.row + 1,
    signature: source.slice(d.node.startIndex, colon.endIndex),
  };
  if (doc) info.docstring = doc.text;
  if (d.decoratorLine !== undefined) info.decorator_line = d.decoratorLine;
  info.bytes = { start: bytes.at(d.outer.startIndex), header_end: bytes.at(colon.endIndex), end: bytes.at(d.outer.endIndex) };
  return info;
}

import type { SourceFile } from "ts-morph";
import { LmrError, type ErrorCode } from "../../core/errors.js";
import {
  describeDiagnostic,
  FLAVOR_EXTENSIONS,
  flavorOf,
  isTypedFlavor,
  parseTsSource,
  parseTsSourceWith,
  readSyntaxDiagnostics,
  type ScriptFlavor,
  type TsMorph,
} from "../../lang/ts-source.js";
import { applyEdits, checkOverlaps, type TextEdit } from "../apply-edits.js";
import { collectMethods, locateSymbol } from "../locate-symbol.js";
import { checkSpecMode } from "../spec-check.js";
import { detectTsIndentUnit, keepInferredTypes, planTsBodyEdit, type BodyContext } from "./body.js";
import { indexTsDefinitions, type TsDef, type TsIndex } from "./symbols.js";
import { planTsRegionEdit } from "./region.js";
import type { TsStubFacts, TsTypeOracle } from "./types.js";
import { ByteOffsets } from "../text-layout.js";
import type { MaskResult, MaskSpec, MaskedTarget, Masker, SymbolInfo } from "../types.js";

export interface TsMaskOptions {
  /**
   * The type checker's view of the file (createTsTypeOracle over a project
   * that holds `source`): stubs then keep each function's inferred return type
   * exactly, and the variables of enclosing functions it assigned; the result
   * is checked for type errors inside the stubs, and a stub with one returns
   * `any` instead. Ignored for JavaScript.
   */
  types?: TsTypeOracle;
}

interface Parsed {
  file: SourceFile;
  morph: TsMorph;
  index: TsIndex;
  dispose: () => void;
}

/**
 * The TypeScript/JavaScript masker (ts-morph): targets by qualified name
 * (see symbols.ts), bodies replaced by a TODO comment and
 * `throw new Error("not implemented: NAME")`, everything outside the
 * replaced spans kept byte for byte. The result is parsed again and must
 * have no syntax diagnostic (the input must have none either). Whether it
 * type-checks against a project is `checkTsTypes`' job (it needs the files
 * around it); in .ts/.tsx the masker keeps callers' inferred types: exactly
 * with a type oracle (types.ts), as `any` without (body.ts).
 *
 * One instance per flavor (how TypeScript parses the file: .ts, .tsx, .js,
 * .jsx); a `file` argument with another extension takes that one's flavor.
 */
export class TsMasker implements Masker {
  readonly language: string;
  readonly extensions: readonly string[];

  private readonly cache = new Map<string, Parsed>();
  private readonly cacheSize: number;

  /** `cacheSize`: parsed sources kept (file + index), so masking many symbols of one file parses it once. Default 2; 0 = none. */
  constructor(
    private readonly flavor: ScriptFlavor,
    options: { cacheSize?: number } = {},
  ) {
    this.language = flavor.startsWith("ts") ? "typescript" : "javascript";
    this.extensions = FLAVOR_EXTENSIONS[flavor];
    this.cacheSize = options.cacheSize ?? 2;
  }

  async mask(source: string, specs: MaskSpec[], file?: string, options: TsMaskOptions = {}): Promise<MaskResult> {
    if (specs.length === 0) throw new LmrError({ code: "mask/no-targets", file, message: "no symbol to mask", hint: "give at least one symbol" });
    const flavor = flavorOf(file, this.flavor);
    const parsed = await this.load(source, flavor, file);
    try {
      const oracle = isTypedFlavor(flavor) ? options.types : undefined;
      const defs = specs.map((spec) => locateSymbol(parsed.index, spec.symbol, spec.line, file));
      const plan = (anyFor: ReadonlySet<number>): { edits: TextEdit[]; bodies: BodyEdit[] } => {
        const stubFacts = oracle ? (def: TsDef): TsStubFacts | undefined => factsFor(oracle, source, def, anyFor, parsed.morph) : undefined;
        const ctx: BodyContext = {
          indentUnit: detectTsIndentUnit(source, parsed.index, parsed.morph),
          typed: isTypedFlavor(flavor),
          morph: parsed.morph,
          ...(stubFacts ? { stubFacts } : {}),
        };
        const edits: TextEdit[] = [];
        const bodies: BodyEdit[] = [];
        specs.forEach((spec, owner) => {
          for (const e of planSpec(source, defs[owner]!, spec, parsed.index, ctx, owner, file, bodies)) edits.push(e);
        });
        checkOverlaps(edits, (owner) => `"${specs[owner]!.symbol}"`, file);
        return { edits, bodies };
      };
      let { edits, bodies } = plan(new Set());
      let masked = applyEdits(source, edits);
      if (oracle && bodies.length > 0) {
        // a printed type that does not resolve in the masked file: `any` for that stub
        const spans = bodies.map((b) => {
          const start = shiftedBy(edits, b.edit.start);
          return { start, end: start + b.edit.text.length };
        });
        const broken = oracle.brokenStubs(masked, spans);
        if (broken.length > 0) {
          ({ edits, bodies } = plan(new Set(broken.map((i) => bodies[i]!.def.node.getStart()))));
          masked = applyEdits(source, edits);
        }
      }
      checkParses(parsed.morph, masked, flavor, file);
      const bytes = new ByteOffsets(source);
      const targets: MaskedTarget[] = specs.map((spec, owner) => ({
        symbol: spec.symbol,
        mode: spec.mode,
        start_line: defs[owner]!.decoratorLine ?? defs[owner]!.line,
        end_line: lineOf(parsed.file, defs[owner]!.end),
        reference: [],
        byte_ranges: [],
      }));
      for (const e of [...edits].sort((a, b) => a.start - b.start)) {
        const t = targets[e.owner]!;
        t.reference.push(source.slice(e.start, e.end));
        t.byte_ranges.push([bytes.at(e.start), bytes.at(e.end)]);
      }
      return { source: masked, targets };
    } finally {
      this.release(parsed);
    }
  }

  async listSymbols(source: string, file?: string): Promise<SymbolInfo[]> {
    const parsed = await this.load(source, flavorOf(file, this.flavor), file);
    try {
      const bytes = new ByteOffsets(source);
      return parsed.index.defs.map((d) => describeSymbol(source, d, parsed, bytes));
    } finally {
      this.release(parsed);
    }
  }

  /** For each listed symbol (same order), the UTF-8 offset where its function node starts; undefined for classes. */
  async listFunctionStarts(source: string, file?: string): Promise<(number | undefined)[]> {
    const parsed = await this.load(source, flavorOf(file, this.flavor), file);
    try {
      const bytes = new ByteOffsets(source);
      return parsed.index.defs.map((d) => (d.kind === "class" ? undefined : bytes.at(d.node.getStart())));
    } finally {
      this.release(parsed);
    }
  }

  /** Frees the cached sources. */
  clearCache(): void {
    for (const p of this.cache.values()) p.dispose();
    this.cache.clear();
  }

  private release(parsed: Parsed): void {
    if (![...this.cache.values()].includes(parsed)) parsed.dispose();
  }

  private async load(source: string, flavor: ScriptFlavor, file: string | undefined): Promise<Parsed> {
    const key = `${flavor}\u0000${source}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const parsed = await this.parse(source, flavor, file);
    if (this.cacheSize > 0) {
      this.cache.set(key, parsed);
      while (this.cache.size > this.cacheSize) {
        const [oldest, entry] = this.cache.entries().next().value as [string, Parsed];
        this.cache.delete(oldest);
        entry.dispose();
      }
    }
    return parsed;
  }

  private async parse(source: string, flavor: ScriptFlavor, file: string | undefined): Promise<Parsed> {
    const { file: sf, morph, dispose } = await parseTsSource(source, flavor);
    const bad = readSyntaxDiagnostics(sf)[0];
    if (bad) {
      // the message reads the source file: describe before disposing
      const where = describeDiagnostic(morph.ts, sf, bad);
      dispose();
      throw new LmrError({
        code: "mask/parse-error",
        file,
        message: `the input does not parse as ${flavor.startsWith("ts") ? "TypeScript" : "JavaScript"} (${where})`,
        hint: "mask only files that TypeScript parses without errors (.ts/.tsx/.js/.mjs/.cjs/.jsx decide how)",
      });
    }
    return { file: sf, morph, index: indexTsDefinitions(sf, morph), dispose };
  }
}

/** The oracle's facts for a body stub; for those in `anyFor`, its assignments but the plain `any` return. */
function factsFor(oracle: TsTypeOracle, source: string, def: TsDef, anyFor: ReadonlySet<number>, morph: TsMorph): TsStubFacts | undefined {
  const facts = oracle.stubFacts(source, def.node.getStart());
  if (!facts || !anyFor.has(def.node.getStart())) return facts;
  return { keep: keepInferredTypes(def, morph), assign: facts.assign };
}

/** Where `pos` of the original lands in the edited text (no edit spans it; one that starts there is not counted). */
function shiftedBy(edits: readonly TextEdit[], pos: number): number {
  let shift = 0;
  for (const e of edits) if (e.end <= pos && e.start < pos) shift += e.text.length - (e.end - e.start);
  return pos + shift;
}

/** A body masked in mode body or class, and its edit. */
interface BodyEdit {
  def: TsDef;
  edit: TextEdit;
}

/** The edits for one spec; those that mask a body are pushed to `bodies` too. */
function planSpec(
  source: string,
  def: TsDef,
  spec: MaskSpec,
  index: TsIndex,
  ctx: BodyContext,
  owner: number,
  file: string | undefined,
  bodies: BodyEdit[],
): TextEdit[] {
  const fail = checkSpecMode(spec, file);
  if (spec.mode === "region" && spec.region) {
    if (def.kind === "class") fail("mask/wrong-mode", `"${spec.symbol}" is a class`, "mask a region of one of its methods");
    return [planTsRegionEdit(source, def, spec.region, ctx.typed, ctx.morph, owner, file)];
  }
  if (spec.mode === "class") {
    if (def.kind !== "class") fail("mask/wrong-mode", `"${spec.symbol}" is a ${def.kind}, not a class`, "use mode body for functions and methods");
    const methods = collectMethods(index.defs, def);
    if (methods.length === 0) fail("mask/nothing-to-mask", `class "${spec.symbol}" has no method with a body`, "mask a class with methods");
    return methods.map((m) => {
      const edit = planTsBodyEdit(source, m, ctx, owner);
      bodies.push({ def: m, edit });
      return edit;
    });
  }
  if (def.kind === "class") fail("mask/wrong-mode", `"${spec.symbol}" is a class`, "use mode class to mask every method body");
  const edit = planTsBodyEdit(source, def, ctx, owner);
  bodies.push({ def, edit });
  return [edit];
}

/** The masked text must parse with no diagnostic: the input had none, so any is the masker's. */
function checkParses(morph: TsMorph, masked: string, flavor: ScriptFlavor, file: string | undefined): void {
  const { file: sf, dispose } = parseTsSourceWith(morph, masked, flavor);
  try {
    const bad = readSyntaxDiagnostics(sf)[0];
    if (!bad) return;
    throw new LmrError({
      code: "mask/masked-parse-error",
      file,
      message: `the masked source does not parse (${describeDiagnostic(morph.ts, sf, bad)} of the result)`,
      hint: "this is a masker bug or an unusual layout; report the file and symbol",
    });
  } finally {
    dispose();
  }
}

function lineOf(file: SourceFile, pos: number): number {
  return file.compilerNode.getLineAndCharacterOfPosition(pos).line + 1;
}

function describeSymbol(source: string, d: TsDef, parsed: Parsed, bytes: ByteOffsets): SymbolInfo {
  const N = parsed.morph.Node;
  // the header ends where the body starts: after `{` of a block (or of a class), at an arrow's expression
  let headerEnd = d.end;
  if (d.body) headerEnd = N.isBlock(d.body) ? d.body.getStart() + 1 : d.body.getStart();
  else {
    const brace = d.node.getFirstChildByKind(parsed.morph.ts.SyntaxKind.OpenBraceToken);
    if (brace) headerEnd = brace.getEnd();
  }
  const info: SymbolInfo = {
    name: d.qualname,
    kind: d.kind,
    line: d.line,
    end_line: lineOf(parsed.file, d.end),
    signature: source.slice(d.headerStart, headerEnd).replace(/\{$/, "").trimEnd(),
  };
  if (d.jsdoc !== undefined) info.docstring = d.jsdoc;
  if (d.decoratorLine !== undefined) info.decorator_line = d.decoratorLine;
  info.bytes = { start: bytes.at(d.start), header_end: bytes.at(headerEnd), end: bytes.at(d.end) };
  return info;
}

import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import type { Project } from "ts-morph";
import { isLmrError } from "../../dist/core/errors.js";
import { loadTsMorph, type TsMorph } from "../../dist/lang/ts-source.js";
import { listApiDefinitions } from "./ts-api-index.js";
import { formatTsThrow, formatTsTodo } from "../../dist/mask/ts/body.js";
import { TsMasker } from "../../dist/mask/ts/masker.js";
import { collectErrors, formatTypeProblem, subtract, type TypeProblem } from "../../dist/mask/ts/typecheck.js";
import { createTsTypeOracle, type TsTypeOracle } from "../../dist/mask/ts/types.js";
import type { SymbolInfo } from "../../dist/mask/types.js";

/**
 * The TS/JS masking sweep: every function and method of many files (as the
 * compiler API counts them, see ts-api-index.ts), masked one at a time in
 * mode body, each result checked:
 *  - index: the masker finds every definition the compiler API finds;
 *  - mask/parse: it masks, and the result parses with no syntax diagnostic;
 *  - span: the result differs from the input only inside the reported span,
 *    which lies after the header and inside the definition, and holds the TODO and the throw;
 *  - signature: listed again, the definition has the same header, JSDoc and decorators;
 *  - types: with `typeCheck`, no type error that the file (and, with
 *    `checkImporters`, the files importing it) did not have before.
 */

type TsSweepCheck = "read" | "parse" | "index" | "mask" | "span" | "signature" | "types";

interface TsSweepFailure {
  file: string;
  symbol?: string;
  line?: number;
  check: TsSweepCheck;
  message: string;
  /** A failure of a known kind that no stub avoids (see TS_SWEEP_CATEGORIES). */
  category?: TsSweepCategory;
}

/**
 * New type errors whose cause the sweep recognises as one a stub cannot
 * avoid, reported by name and counted (still failures, never skipped).
 */
const TS_SWEEP_CATEGORIES = {
  "inexact-type":
    "the stub wrote the inferred return type out and it is not the same type: the type names declarations the file cannot import (type aliases or classes the package does not export), and written out in full the checker tells it apart (its return type prints otherwise)",
} as const;
type TsSweepCategory = keyof typeof TS_SWEEP_CATEGORIES;

export interface TsSweepReport {
  files: number;
  /** Functions and methods, as the compiler API counts them. */
  defs: number;
  ok: number;
  failures: TsSweepFailure[];
  typeChecked: boolean;
  /** What the stubs held after their throw (type-checked runs): the inferred type written out; `any` (the inferred type was any, or could not be written in the stub); assignments kept. */
  stubs: { typed: number; any: number; assigns: number };
  seconds: number;
}

export interface TsSweepOptions {
  /** Folder the files' names are reported relative to. */
  root: string;
  typeCheck?: boolean;
  /** Also check the files that import the masked one (slower). */
  checkImporters?: boolean;
  /** Mask without the type oracle even when type-checking (the stubs of `lmr mask` with no project): what the oracle fixes. */
  plainStubs?: boolean;
  onFile?: (file: string, done: number, total: number) => void;
}

/**
 * Compiler options for packages that ship their sources without a tsconfig:
 * strict, the newest lib (mobx 6.13 types ES2025 Set methods), no emit, and
 * vitest's globals, which the shipped tests (@reduxjs/toolkit's) use as their
 * own tsconfig does: without them `vi.fn()` is an error type, and an error
 * type in a function's inferred type is one a stub can only write as `any`
 * (the checker treats the two apart: in createApi.test.ts `getNewApi`).
 */
function sweepCompilerOptions(morph: TsMorph): import("ts-morph").CompilerOptions {
  const ts = morph.ts;
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ["lib.esnext.d.ts", "lib.dom.d.ts"],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    experimentalDecorators: true,
    types: ["vitest/globals"],
  };
}

export async function sweepTsFiles(files: readonly string[], options: TsSweepOptions): Promise<TsSweepReport> {
  const started = performance.now();
  const morph = await loadTsMorph();
  const masker = new TsMasker("ts");
  const report: TsSweepReport = {
    files: files.length,
    defs: 0,
    ok: 0,
    failures: [],
    typeChecked: options.typeCheck === true,
    stubs: { typed: 0, any: 0, assigns: 0 },
    seconds: 0,
  };
  let project: Project | undefined;
  if (options.typeCheck) {
    project = new morph.Project({ compilerOptions: sweepCompilerOptions(morph), skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true });
    for (const f of files) project.addSourceFileAtPath(f);
  }
  for (const [i, file] of files.entries()) {
    await sweepFile(file, morph, masker, project, report, options);
    options.onFile?.(file, i + 1, files.length);
  }
  masker.clearCache();
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

async function sweepFile(
  abs: string,
  morph: TsMorph,
  masker: TsMasker,
  project: Project | undefined,
  report: TsSweepReport,
  options: TsSweepOptions,
): Promise<void> {
  const file = relative(options.root, abs);
  const source = await readFile(abs, "utf8");
  const api = listApiDefinitions(morph.ts, morph.ts.createSourceFile(abs, source, morph.ts.ScriptTarget.Latest, true));
  report.defs += api.length;
  let symbols: SymbolInfo[];
  try {
    symbols = await masker.listSymbols(source, abs);
  } catch (err) {
    report.failures.push({ file, check: "parse", message: isLmrError(err) ? err.message : String(err) });
    return;
  }
  // the definitions each side finds, by where the function node starts (a byte offset)
  const ours = new Map<number, SymbolInfo>();
  const starts = await functionStarts(masker, source, abs, symbols);
  symbols.forEach((s, i) => {
    if (starts[i] !== undefined) ours.set(starts[i]!, s);
  });
  const counts = new Map<string, number>();
  for (const s of symbols) counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
  const sf = project?.getSourceFile(abs);
  const checked = sf ? [sf, ...(options.checkImporters ? sf.getReferencingSourceFiles() : [])] : [];
  let baseline: TypeProblem[] = [];
  let oracle: TsTypeOracle | undefined;
  if (project && sf) {
    if (sf.getFullText() !== source) sf.replaceWithText(source);
    baseline = collectErrors(project, morph, options.root, checked);
    if (!options.plainStubs) {
      // every definition's facts from the one checker of the original text, before the masked texts replace it
      oracle = createTsTypeOracle(morph, project, abs);
      oracle.prepare(
        source,
        api.map((d) => d.start),
      );
    }
  }

  for (const def of api) {
    const sym = ours.get(Buffer.byteLength(source.slice(0, def.start), "utf8"));
    if (!sym) {
      report.failures.push({ file, line: def.line, check: "index", message: `the masker does not list the definition at line ${def.line}` });
      continue;
    }
    const fail = (check: TsSweepCheck, message: string): void => {
      report.failures.push({ file, symbol: sym.name, line: sym.line, check, message });
    };
    let masked: string;
    let stub = "";
    try {
      const spec = counts.get(sym.name)! > 1 ? { symbol: sym.name, mode: "body" as const, line: sym.line } : { symbol: sym.name, mode: "body" as const };
      const result = await masker.mask(source, [spec], abs, oracle ? { types: oracle } : {});
      masked = result.source;
      const problem = checkSpan(source, masked, sym, result.targets[0]?.byte_ranges[0], result.targets[0]?.reference[0]);
      if (problem) {
        fail("span", problem);
        continue;
      }
      stub = insertedText(source, masked, result.targets[0]!.byte_ranges[0]!);
      if (oracle) countStub(report, stub);
      const again = (await masker.listSymbols(masked, abs)).find((s) => s.name === sym.name && s.line === sym.line);
      const changed = !again
        ? "the definition is gone"
        : again.signature !== sym.signature
          ? "signature changed"
          : again.docstring !== sym.docstring
            ? "JSDoc changed"
            : again.decorator_line !== sym.decorator_line
              ? "decorators moved"
              : undefined;
      if (changed) {
        fail("signature", changed);
        continue;
      }
    } catch (err) {
      fail(
        isLmrError(err) && (err.code === "mask/parse-error" || err.code === "mask/masked-parse-error") ? "parse" : "mask",
        isLmrError(err) ? `${err.code}: ${err.message}` : String(err),
      );
      continue;
    }
    if (project && sf) {
      // the oracle left the masked text in place when it checked the stub's return type: same program, same checker
      if (sf.getFullText() !== masked) sf.replaceWithText(masked);
      const added = subtract(collectErrors(project, morph, options.root, checked), baseline);
      if (added.length > 0) {
        fail("types", `${added.length} new type error(s): ${added.slice(0, 2).map(formatTypeProblem).join("; ")}`);
        // the function starts before its body: the same index in the masked text
        if (oracle && stub.includes(" as unknown as ") && oracle.sameReturnType(source, def.start, masked, def.start) === false)
          report.failures[report.failures.length - 1]!.category = "inexact-type";
        continue;
      }
    }
    report.ok++;
  }
  // the next file is checked against this one as shipped, not with its last stub
  if (sf && sf.getFullText() !== source) sf.replaceWithText(source);
}

/** For each symbol, the UTF-8 offset where its function node starts (undefined for classes). */
async function functionStarts(masker: TsMasker, source: string, abs: string, symbols: SymbolInfo[]): Promise<(number | undefined)[]> {
  const starts = await masker.listFunctionStarts(source, abs);
  return symbols.map((_, i) => starts[i]);
}

/** Bytes outside the reported span are unchanged, the span sits in the body, the reference is the original text, and the stub is there. */
function checkSpan(original: string, masked: string, sym: SymbolInfo, range: [number, number] | undefined, reference: string | undefined): string | undefined {
  if (!range || reference === undefined || !sym.bytes) return "the masker reported no span";
  const [start, end] = range;
  if (start < sym.bytes.header_end || end > sym.bytes.end)
    return `span ${start}-${end} leaves the body (header ends at ${sym.bytes.header_end}, definition at ${sym.bytes.end})`;
  const before = Buffer.from(original, "utf8");
  const out = Buffer.from(masked, "utf8");
  const tail = before.length - end;
  if (!out.subarray(0, start).equals(before.subarray(0, start))) return "text before the body changed";
  if (!out.subarray(out.length - tail).equals(before.subarray(end))) return "text after the body changed";
  if (before.subarray(start, end).toString("utf8") !== reference) return "the recorded reference differs from the original text";
  const inserted = out.subarray(start, out.length - tail).toString("utf8");
  if (!inserted.includes(formatTsTodo(sym.name)) || !inserted.includes(formatTsThrow(sym.name))) return "the TODO comment or the throw is missing";
  return undefined;
}

/** The text that replaced the original's bytes [start, end). */
function insertedText(original: string, masked: string, [start, end]: [number, number]): string {
  const out = Buffer.from(masked, "utf8");
  return out.subarray(start, out.length - (Buffer.byteLength(original, "utf8") - end)).toString("utf8");
}

/** What the stub's text after the throw holds. */
function countStub(report: TsSweepReport, inserted: string): void {
  if (inserted.includes(" as unknown as ")) report.stubs.typed++;
  if (/\(?undefined as any\)?;/.test(inserted)) report.stubs.any++;
  if (inserted.includes(" = undefined as never;")) report.stubs.assigns++;
}

/** `N/M defs masked OK (xx.x%)`, then the failures. */
export function formatTsSweepReport(r: TsSweepReport, label = ""): string {
  const pct = r.defs === 0 ? 100 : (100 * r.ok) / r.defs;
  const stubs =
    r.stubs.typed + r.stubs.any + r.stubs.assigns > 0
      ? `; stubs: ${r.stubs.typed} wrote the inferred type, ${r.stubs.any} returned any (inferred any, or not writable there), ${r.stubs.assigns} kept assignments`
      : "";
  const lines = [
    `${label}${r.ok}/${r.defs} defs masked OK (${pct.toFixed(2)}%) in ${r.files} files, ${r.seconds.toFixed(1)} s${r.typeChecked ? ", type-checked" : ""}${stubs}`,
  ];
  for (const [name, why] of Object.entries(TS_SWEEP_CATEGORIES)) {
    const n = r.failures.filter((f) => f.category === name).length;
    if (n > 0) lines.push(`  ${n} of the failures: ${name}: ${why}`);
  }
  for (const f of r.failures)
    lines.push(
      `  FAIL [${f.check}${f.category ? `, ${f.category}` : ""}] ${f.file}${f.symbol ? ` ${f.symbol} (line ${f.line})` : f.line ? ` line ${f.line}` : ""}: ${f.message}`,
    );
  return lines.join("\n");
}

/** The packages the sweep masks: well-known npm packages that ship their TypeScript sources (devDependencies, exact versions). */
export const SWEEP_PACKAGES = ["rxjs", "mobx", "immer", "@reduxjs/toolkit", "@tanstack/query-core"] as const;

/** A package's own .ts/.tsx sources (its tests too; not declaration files, not nested node_modules), sorted, and its version. */
export async function listPackageSources(name: string, from = process.cwd()): Promise<{ name: string; version: string; root: string; files: string[] }> {
  const { createRequire } = await import("node:module");
  const { readdir } = await import("node:fs/promises");
  const { dirname, join } = await import("node:path");
  const require = createRequire(join(from, "package.json"));
  const manifest = require.resolve(`${name}/package.json`);
  const root = dirname(manifest);
  const version = (JSON.parse(await readFile(manifest, "utf8")) as { version: string }).version;
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && /\.(ts|tsx|mts|cts)$/.test(e.name) && !/\.d\.[mc]?ts$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => !/(^|[/\\])node_modules[/\\]/.test(relative(root, f)))
    .sort();
  return { name, version, root, files };
}

import { extname } from "node:path";
import type { Project, SourceFile, ts as TsNamespace } from "ts-morph";

/**
 * ts-morph, loaded on first use (it brings its own TypeScript, ~10 MB of
 * JavaScript: Python-only commands never pay for it), and one in-memory
 * project that parses sources for the masker and the mutant generator.
 */
export type TsMorph = typeof import("ts-morph");

let loading: Promise<TsMorph> | undefined;

export function loadTsMorph(): Promise<TsMorph> {
  loading ??= import("ts-morph");
  return loading;
}

export type ScriptFlavor = "ts" | "tsx" | "js" | "jsx";

/** The extensions the TS/JS masker takes, by how TypeScript parses them. */
export const FLAVOR_EXTENSIONS: Record<ScriptFlavor, readonly string[]> = {
  ts: [".ts", ".mts", ".cts"],
  tsx: [".tsx"],
  js: [".js", ".mjs", ".cjs"],
  jsx: [".jsx"],
};

export function flavorOf(file: string | undefined, fallback: ScriptFlavor): ScriptFlavor {
  if (file === undefined) return fallback;
  const ext = extname(file).toLowerCase();
  for (const [flavor, exts] of Object.entries(FLAVOR_EXTENSIONS) as [ScriptFlavor, readonly string[]][]) {
    if (exts.includes(ext)) return flavor;
  }
  return fallback;
}

/** True for files whose types TypeScript checks (the masker keeps callers' inferred types there). */
export function isTypedFlavor(flavor: ScriptFlavor): boolean {
  return flavor === "ts" || flavor === "tsx";
}

export function isTsJsFile(file: string): boolean {
  const ext = extname(file).toLowerCase();
  return Object.values(FLAVOR_EXTENSIONS).some((exts) => exts.includes(ext));
}

let project: Project | undefined;
let counter = 0;

/**
 * A parsed source file in the shared in-memory project; `dispose` forgets it.
 * No type information: the project never resolves imports or builds a program.
 */
export async function parseTsSource(source: string, flavor: ScriptFlavor): Promise<ParsedTs> {
  return parseTsSourceWith(await loadTsMorph(), source, flavor);
}

export interface ParsedTs {
  file: SourceFile;
  morph: TsMorph;
  dispose: () => void;
}

/** The same, synchronous, once ts-morph is loaded. */
export function parseTsSourceWith(morph: TsMorph, source: string, flavor: ScriptFlavor): ParsedTs {
  project ??= new morph.Project({ useInMemoryFileSystem: true, skipFileDependencyResolution: true, compilerOptions: { allowJs: true, noLib: true } });
  const ext = flavor === "ts" ? ".ts" : `.${flavor}`;
  const kind = { ts: morph.ts.ScriptKind.TS, tsx: morph.ts.ScriptKind.TSX, js: morph.ts.ScriptKind.JS, jsx: morph.ts.ScriptKind.JSX }[flavor];
  const file = project.createSourceFile(`/lmr/source-${++counter}${ext}`, source, { overwrite: true, scriptKind: kind });
  return { file, morph, dispose: () => project?.removeSourceFile(file) };
}

/** The parser's own diagnostics of a source file (syntax errors only; no binding, no types). */
export function readSyntaxDiagnostics(file: SourceFile): readonly TsNamespace.Diagnostic[] {
  return (file.compilerNode as unknown as { parseDiagnostics?: TsNamespace.Diagnostic[] }).parseDiagnostics ?? [];
}

/** "line N: message" of the first diagnostic, for error messages. */
export function describeDiagnostic(ts: typeof TsNamespace, file: SourceFile, d: TsNamespace.Diagnostic): string {
  const line = d.start !== undefined ? file.compilerNode.getLineAndCharacterOfPosition(d.start).line + 1 : 1;
  return `line ${line}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
}

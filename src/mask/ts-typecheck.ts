import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Diagnostic, Project, SourceFile } from "ts-morph";
import { LmrError } from "../core/errors.js";
import { loadTsMorph, type TsMorph } from "../lang/ts-source.js";

/** A type error the masked file brought into the project. */
export interface TypeProblem {
  /** Relative to the tsconfig's folder. */
  file: string;
  line: number;
  code: number;
  message: string;
}

export interface TypeCheckOutcome {
  /** The tsconfig.json the check used. */
  tsconfig: string;
  /** Errors in the project before and after, and those that are new. */
  before: number;
  after: number;
  added: TypeProblem[];
}

/** The nearest tsconfig.json at or above the file's folder, or undefined. */
export function findTsconfig(file: string): string | undefined {
  for (let dir = dirname(resolve(file)); ; dir = dirname(dir)) {
    const candidate = join(dir, "tsconfig.json");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * `tsc --noEmit` with the repository's own tsconfig, before and after the
 * file's text is replaced by `masked` (in memory: nothing is written), and the
 * errors that are new. Errors are compared by file, code and message (the
 * masked file's lines move), as multisets. Undefined when no tsconfig.json
 * sits above the file: then there is no project to check against.
 */
export async function checkTsTypes(file: string, masked: string, tsconfig = findTsconfig(file)): Promise<TypeCheckOutcome | undefined> {
  if (tsconfig === undefined) return undefined;
  const morph = await loadTsMorph();
  let project: Project;
  try {
    project = new morph.Project({ tsConfigFilePath: tsconfig });
  } catch (err) {
    throw new LmrError({ code: "mask/tsconfig-unreadable", kind: "input", file: tsconfig, message: `cannot load the project: ${String(err)}`, hint: "fix tsconfig.json, or pass --no-compile-check" });
  }
  const abs = resolve(file);
  const sf = project.getSourceFile(abs) ?? project.addSourceFileAtPath(abs);
  const root = dirname(tsconfig);
  const before = collectErrors(project, morph, root);
  sf.replaceWithText(masked);
  const after = collectErrors(project, morph, root);
  return { tsconfig, before: before.length, after: after.length, added: subtract(after, before) };
}

/** Every error of the project's own files (not of lib or declaration files from node_modules). */
export function collectErrors(project: Project, morph: TsMorph, root: string, only?: readonly SourceFile[]): TypeProblem[] {
  const program = project.getProgram();
  const files = only ?? project.getSourceFiles().filter((f) => !f.isFromExternalLibrary() && !f.isInNodeModules());
  const out: TypeProblem[] = [];
  for (const f of files) {
    for (const d of [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]) {
      if (d.getCategory() !== morph.ts.DiagnosticCategory.Error) continue;
      out.push(toProblem(d, morph, root));
    }
  }
  return out;
}

function toProblem(d: Diagnostic, morph: TsMorph, root: string): TypeProblem {
  const text = d.getMessageText();
  const message = typeof text === "string" ? text : morph.ts.flattenDiagnosticMessageText(text.compilerObject, " ");
  const file = d.getSourceFile();
  return { file: file ? relative(root, file.getFilePath()) : "", line: d.getLineNumber() ?? 0, code: d.getCode(), message };
}

/** Problems of `after` with no match in `before` (same file, code and message), counting repeats. */
export function subtract(after: readonly TypeProblem[], before: readonly TypeProblem[]): TypeProblem[] {
  const key = (p: TypeProblem): string => `${p.file}\u0000${p.code}\u0000${p.message}`;
  const left = new Map<string, number>();
  for (const p of before) left.set(key(p), (left.get(key(p)) ?? 0) + 1);
  const added: TypeProblem[] = [];
  for (const p of after) {
    const n = left.get(key(p)) ?? 0;
    if (n > 0) left.set(key(p), n - 1);
    else added.push(p);
  }
  return added;
}

export function formatTypeProblem(p: TypeProblem): string {
  return `${p.file}:${p.line}: TS${p.code}: ${p.message}`;
}

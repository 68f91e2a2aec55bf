import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Diagnostic, Project, SourceFile } from "ts-morph";
import { LmrError } from "../../core/errors.js";
import { loadTsMorph, type TsMorph } from "../../lang/ts-source.js";

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

/**
 * The nearest tsconfig.json at or above the file's folder, or undefined; with `within`,
 * only one at or below that folder (a bundle's workspace: never a project around it).
 */
export function findTsconfig(file: string, within?: string): string | undefined {
  const top = within === undefined ? undefined : resolve(within);
  for (let dir = dirname(resolve(file)); ; dir = dirname(dir)) {
    if (top !== undefined && dir !== top && !dir.startsWith(`${top}/`)) return undefined;
    const candidate = join(dir, "tsconfig.json");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/** A project loaded for a type check, with its errors before masking. */
export interface OpenTypeCheck {
  tsconfig: string;
  morph: TsMorph;
  project: Project;
  /** The file, absolute, as the project holds it. */
  file: string;
  before: TypeProblem[];
}

/**
 * The project of the repository's own tsconfig, loaded around `file` (its
 * text as on disk), and its errors: the first half of `checkTsTypes`. A type
 * oracle (ts-types.ts) can use the project before `finishTypeCheck`.
 * Undefined when no tsconfig.json sits above the file.
 */
export async function openTypeCheck(file: string, tsconfig = findTsconfig(file)): Promise<OpenTypeCheck | undefined> {
  if (tsconfig === undefined) return undefined;
  const morph = await loadTsMorph();
  let project: Project;
  try {
    project = new morph.Project({ tsConfigFilePath: tsconfig });
  } catch (err) {
    throw new LmrError({
      code: "mask/tsconfig-unreadable",
      file: tsconfig,
      message: `cannot load the project: ${String(err)}`,
      hint: "fix tsconfig.json, or pass --no-compile-check",
    });
  }
  const abs = resolve(file);
  const sf = project.getSourceFile(abs) ?? project.addSourceFileAtPath(abs);
  return { tsconfig, morph, project, file: sf.getFilePath(), before: collectErrors(project, morph, dirname(tsconfig)) };
}

/** The file's text replaced by `masked` (in memory: nothing is written), and the errors that are new. */
export function finishTypeCheck(open: OpenTypeCheck, masked: string): TypeCheckOutcome {
  const sf = open.project.getSourceFileOrThrow(open.file);
  if (sf.getFullText() !== masked) sf.replaceWithText(masked);
  const after = collectErrors(open.project, open.morph, dirname(open.tsconfig));
  return { tsconfig: open.tsconfig, before: open.before.length, after: after.length, added: subtract(after, open.before) };
}

/**
 * `tsc --noEmit` with the repository's own tsconfig, before and after the
 * file's text is replaced by `masked` (in memory: nothing is written), and the
 * errors that are new. Errors are compared by file, code and message (the
 * masked file's lines move), as multisets. Undefined when no tsconfig.json
 * sits above the file: then there is no project to check against.
 */
export async function checkTsTypes(file: string, masked: string, tsconfig = findTsconfig(file)): Promise<TypeCheckOutcome | undefined> {
  const open = await openTypeCheck(file, tsconfig);
  return open && finishTypeCheck(open, masked);
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

/**
 * "Cannot find name 'x'. Did you mean 'y'?" is "Cannot find name 'x'." with a
 * suggestion, and the checker suggests only for the first 10 such errors of a
 * file: a masked body with fewer errors before them turns later ones into
 * the other code. Compared as one error.
 */
const SUGGESTION_CODES = new Map([
  [2552, 2304], // Cannot find name
  [2551, 2339], // Property does not exist on type
]);

function comparable(p: TypeProblem): string {
  const plain = SUGGESTION_CODES.get(p.code);
  if (plain === undefined) return `${p.file}\u0000${p.code}\u0000${p.message}`;
  return `${p.file}\u0000${plain}\u0000${p.message.replace(/ Did you mean '[^']*'\?$/, "")}`;
}

/** Problems of `after` with no match in `before` (same file, code and message; suggestions aside), counting repeats. */
export function subtract(after: readonly TypeProblem[], before: readonly TypeProblem[]): TypeProblem[] {
  const key = comparable;
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

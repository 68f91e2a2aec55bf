import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { findSyntaxError, parsePython, type Node } from "../lang/python-parser.js";
import type { ResolvedTask } from "../manifest/types.js";
import { formatTodo } from "../mask/python/body.js";
import { describeBody, findDocstring, indexDefinitions } from "../mask/python/symbols.js";
import { locateSymbol } from "../mask/locate-symbol.js";

/** What `workspace.strip` took out of one file. */
export interface StrippedEntry {
  file: string;
  symbol?: string;
  comments: number;
  docstrings: number;
  why: string;
}

/**
 * Applies the manifest's `workspace.strip`: the comments and docstrings of a symbol (or of a
 * whole file) leave the workspace. Runs after masking, so the masker's own TODO lines stay.
 * An entry that strips nothing is an error: the manifest no longer describes the upstream.
 */
export async function stripDeclaredText(task: ResolvedTask, workspace: string): Promise<StrippedEntry[]> {
  const out: StrippedEntry[] = [];
  for (const [i, entry] of (task.manifest.workspace?.strip ?? []).entries()) {
    const pointer = `/workspace/strip/${i}`;
    const fail = (message: string, hint: string): never => {
      throw new LmrError({ code: "bundle/strip-bad-entry", file: task.manifestPath, pointer, message, hint });
    };
    if (!entry.file.endsWith(".py")) fail(`'${entry.file}' is not a Python file`, "strip applies to .py files only");
    const path = join(workspace, entry.file);
    const source = await readFile(path, "utf8").catch(() =>
      fail(`'${entry.file}' is not in the prepared upstream tree`, "fix the path (relative to the upstream root or its subdir) or drop the entry"),
    );
    let result: StripResult;
    try {
      result = await stripPythonProse(source, entry.symbol, entry.file);
    } catch (err) {
      if (err instanceof LmrError)
        throw new LmrError({
          code: err.code,
          file: task.manifestPath,
          pointer,
          message: `${entry.file}: ${err.message}`,
          ...(err.hint ? { hint: err.hint } : {}),
        });
      throw err;
    }
    if (result.comments + result.docstrings === 0) {
      fail(
        `'${entry.file}'${entry.symbol ? ` ${entry.symbol}` : ""} has no comment or docstring to strip`,
        "drop the entry, or name the symbol whose prose gives the method away",
      );
    }
    await writeFile(path, result.source);
    out.push({
      file: entry.file,
      ...(entry.symbol ? { symbol: entry.symbol } : {}),
      comments: result.comments,
      docstrings: result.docstrings,
      why: entry.reason,
    });
  }
  return out;
}

export interface StripResult {
  source: string;
  comments: number;
  docstrings: number;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Python source without the comments and docstrings inside `symbol` (or anywhere, without one).
 * Every line keeps its number: a comment's or docstring's lines become empty, a docstring that
 * was its block's only statement becomes `pass`. Kept: the masker's TODO comments, a first-line
 * shebang and an encoding declaration (they change how the file runs or reads).
 */
export async function stripPythonProse(source: string, symbol: string | undefined, file?: string): Promise<StripResult> {
  const tree = await parsePython(source);
  const root = tree.rootNode;
  let scope: Node = root;
  if (symbol !== undefined) scope = locateSymbol(indexDefinitions(root), symbol, undefined, file).outer;
  const edits: Edit[] = [];
  let comments = 0;
  let docstrings = 0;
  const visit = (n: Node): void => {
    if (n.type === "comment") {
      if (!keepComment(n, source)) {
        edits.push({ start: n.startIndex, end: n.endIndex, text: "" });
        comments++;
      }
      return;
    }
    const doc = docstringOf(n);
    if (doc) {
      const block = doc.parent;
      const alone = block !== null && block.namedChildren.filter((c) => c !== null && c.type !== "comment").length === 1;
      const newlines = source.slice(doc.startIndex, doc.endIndex).split("\n").length - 1;
      edits.push({ start: doc.startIndex, end: doc.endIndex, text: (alone ? "pass" : "") + "\n".repeat(newlines) });
      docstrings++;
    }
    for (const c of n.children) if (c) visit(c);
  };
  visit(scope);
  tree.delete();
  edits.sort((a, b) => b.start - a.start);
  let text = source;
  for (const e of edits) text = text.slice(0, e.start) + e.text + text.slice(e.end);
  // a line the strip emptied is left empty, not as trailing blanks
  const before = source.split("\n");
  const lines = text
    .split("\n")
    .map((l, i) => (l.trim() === "" && before[i]?.trim() !== "" ? "" : l.replace(/[ \t]+$/, (w) => (before[i]?.endsWith(w) ? w : ""))));
  text = lines.join("\n");
  const check = await parsePython(text);
  const bad = findSyntaxError(check.rootNode);
  check.delete();
  if (bad) {
    throw new LmrError({
      code: "bundle/strip-broke-syntax",
      message: `stripping left a syntax error at line ${bad.startPosition.row + 1}`,
      hint: "strip a narrower symbol, or use workspace.mask for it",
    });
  }
  return { source: text, comments, docstrings };
}

/** The docstring statement of a module, class or function node, if it has one. */
function docstringOf(n: Node): Node | undefined {
  if (n.type === "module") return findDocstring(n.namedChildren.filter((c): c is Node => c !== null));
  if (n.type === "function_definition" || n.type === "class_definition") return describeBody(n)?.docstring;
  return undefined;
}

function keepComment(n: Node, source: string): boolean {
  const text = source.slice(n.startIndex, n.endIndex);
  if (text.startsWith(formatTodo(""))) return true;
  const row = n.startPosition.row;
  if (row === 0 && text.startsWith("#!")) return true;
  return row <= 1 && /^#.*coding[:=]\s*[-\w.]+/.test(text);
}

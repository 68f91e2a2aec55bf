import { readFile, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { isLmrError } from "../../core/errors.js";
import { checkRelativePath } from "../../core/paths.js";
import { LICENSE_FILES, detectLicense } from "../../manifest/license.js";
import { maskerFor } from "../../mask/registry.js";
import type { SymbolInfo } from "../../mask/types.js";
import type { Report } from "./info.js";
import { parseRequirements } from "./requirements.js";

/*
 * Checks of an LMR-Bench paper folder's repository copy: where it is, whether
 * the goal files, functions, unit tests and context files exist, its licence and
 * requirements. Each finding goes to `report`.
 */

/** Folders LMR-Bench keeps beside the repository copy. */
const NOT_REPO = new Set(["golden_files", "unit_test", "unit_tests", "__pycache__"]);

export async function isDir(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export async function isFile(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** The repository folder's name: repo_folder_name, or the only candidate subfolder when it is missing. */
export async function locateRepoFolder(
  folderDir: string,
  declared: string | undefined,
  repoUrl: string | undefined,
  report: Report,
): Promise<string | undefined> {
  if (declared !== undefined) {
    const why = checkRelativePath(declared);
    if (why === undefined && (await isDir(join(folderDir, declared)))) return declared;
    report("/repo_folder_name", why ? `'${declared}': ${why}` : `folder '${declared}' does not exist in the paper folder`, false);
    return undefined;
  }
  const subdirs: string[] = [];
  for (const e of await readdir(folderDir, { withFileTypes: true })) {
    if (e.isDirectory() && !e.name.startsWith(".") && !NOT_REPO.has(e.name)) subdirs.push(e.name);
  }
  const byUrl = repoUrl?.split("/").pop();
  const guess = subdirs.length === 1 ? subdirs[0] : subdirs.find((d) => d === byUrl);
  if (guess !== undefined) {
    report("/repo_folder_name", `repo_folder_name missing; using the folder '${guess}'`, true);
    return guess;
  }
  report("/repo_folder_name", `repo_folder_name missing and no single repository folder to use (found: ${subdirs.join(", ") || "none"})`, false);
  return undefined;
}

/** A path from info.json as a path inside the repository folder: "../" and a leading "<repo>/" removed. */
export function normalizeRepoPath(path: string, repoFolder: string): { path: string; strippedPrefix: boolean } {
  let p = path.replace(/\\/g, "/").replace(/^(\.\/)+/, "");
  let strippedPrefix = false;
  if (p.startsWith(`${repoFolder}/`)) {
    p = p.slice(repoFolder.length + 1);
    strippedPrefix = true;
  }
  return { path: p, strippedPrefix };
}

export type SymbolCheck = { ok: true; symbol: string; repaired?: string } | { ok: false; message: string };

/**
 * Looks the symbol up in the file with the masker's own index, so a task we
 * write can be masked. A bare function name that exists only as a method of one
 * class is repaired to `Class.method`.
 */
export async function checkSymbol(repoDir: string, file: string, symbol: string, line: number | undefined): Promise<SymbolCheck> {
  let symbols: SymbolInfo[];
  try {
    symbols = await maskerFor(file).listSymbols(await readFile(join(repoDir, file), "utf8"));
  } catch (err) {
    return { ok: false, message: `cannot index ${file}: ${isLmrError(err) ? err.message : String(err)}` };
  }
  const same = symbols.filter((s) => s.name === symbol);
  if (same.length === 1 || (same.length > 1 && line !== undefined && same.some((s) => s.line === line || s.decorator_line === line)))
    return { ok: true, symbol };
  if (same.length > 1)
    return { ok: false, message: `${symbol} is defined ${same.length} times in ${file} (lines ${same.map((s) => s.line).join(", ")}); a person must pick one` };
  if (!symbol.includes(".")) {
    const methods = symbols.filter((s) => s.name.endsWith(`.${symbol}`));
    if (methods.length === 1)
      return { ok: true, symbol: methods[0]!.name, repaired: `${symbol} is a method: class_name '${methods[0]!.name.slice(0, -symbol.length - 1)}' added` };
  }
  const last = symbol.split(".").pop()!;
  const near = symbols.filter((s) => s.name.split(".").pop() === last).map((s) => s.name);
  const hint =
    near.length > 0
      ? `; defined as ${near.join(", ")}`
      : symbols.length > 0
        ? `; the file defines ${symbols
            .slice(0, 5)
            .map((s) => s.name)
            .join(", ")}${symbols.length > 5 ? ", ..." : ""}`
        : "";
  return { ok: false, message: `${symbol} is not defined in ${file}${hint}` };
}

/** The signature line(s) of a symbol, for the placeholder instruction. */
export async function readSignature(repoDir: string, file: string, symbol: string): Promise<string | undefined> {
  try {
    const symbols = await maskerFor(file).listSymbols(await readFile(join(repoDir, file), "utf8"));
    return symbols.find((s) => s.name === symbol)?.signature;
  } catch {
    return undefined;
  }
}

/** SPDX id of the repository copy's licence file, or undefined with the reason. */
export async function readLicense(repoDir: string): Promise<{ license?: string; file?: string }> {
  for (const name of LICENSE_FILES) {
    const path = join(repoDir, name);
    if (await isFile(path)) {
      const found = detectLicense(await readFile(path, "utf8"));
      return found !== undefined ? { license: found, file: name } : { file: name };
    }
  }
  return {};
}

/** Plain specifiers from the repository copy's requirements.txt (none when there is no such file). */
export async function readRequirements(repoDir: string): Promise<{ requirements: string[]; skipped: string[] }> {
  const path = join(repoDir, "requirements.txt");
  if (!(await isFile(path))) return { requirements: [], skipped: [] };
  return parseRequirements(await readFile(path, "utf8"));
}

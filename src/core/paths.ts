import { isAbsolute, normalize, resolve, relative, sep } from "node:path";
import { lstat, realpath, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/** Root of the installed toolkit (where schema/, templates/, python/ live). */
export const TOOLKIT_ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

export function toolkitPath(...parts: string[]): string {
  return resolve(TOOLKIT_ROOT, ...parts);
}

/** Why a manifest path is unsafe, or undefined when it is a plain relative path inside its root. */
export function checkRelativePath(p: string): string | undefined {
  if (p === "") return "path is empty";
  if (isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p)) return "path is absolute";
  if (p.includes("\\")) return "path uses backslashes; use '/'";
  const parts = p.split("/");
  if (parts.includes("..")) return "path contains '..'";
  if (parts.some((s) => s === "")) return "path has an empty segment";
  return undefined;
}

/** True when `child` is `root` or inside it (lexically). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(resolve(root), resolve(child));
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** True when `child`, with symlinks resolved, is inside `root` with symlinks resolved. */
export async function isInsideReal(root: string, child: string): Promise<boolean> {
  const [r, c] = await Promise.all([realpath(root), realpath(child)]);
  return isInside(r, c);
}

export function toPosix(p: string): string {
  return normalize(p).split(sep).join("/");
}

/** Whether `p` names something (a link counts only when its target exists). */
export async function pathExists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** Whether the entry `p` itself is there: a link counts, even a broken one. */
export async function entryExists(p: string): Promise<boolean> {
  return lstat(p).then(
    () => true,
    () => false,
  );
}

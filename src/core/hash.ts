import { createHash } from "node:crypto";
import { readFile, readdir, readlink, lstat } from "node:fs/promises";
import { join, relative, sep } from "node:path";

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export async function hashFile(path: string): Promise<string> {
  return sha256(await readFile(path));
}

/** List regular files under `root` (relative, POSIX separators, sorted). Symlinks are not followed. */
export async function listFiles(root: string, skip: (rel: string, isDir: boolean) => boolean = () => false): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries) {
      const abs = join(dir, e.name);
      const rel = relative(root, abs).split(sep).join("/");
      if (e.isDirectory()) {
        if (!skip(rel, true)) await walk(abs);
      } else if (e.isFile()) {
        if (!skip(rel, false)) out.push(rel);
      } else if (e.isSymbolicLink()) {
        const st = await lstat(abs);
        if (!skip(rel, false) && st.isSymbolicLink()) out.push(rel);
      }
    }
  }
  await walk(root);
  return out.sort();
}

/** Hash of a set of files: each path and content hash, in sorted order. */
export async function hashTree(root: string, files?: string[]): Promise<{ hash: string; files: Record<string, string> }> {
  const list = files ?? (await listFiles(root));
  const map: Record<string, string> = {};
  for (const f of [...list].sort()) map[f] = await hashEntry(join(root, f));
  const hash = sha256(
    Object.entries(map)
      .map(([f, h]) => `${h}  ${f}\n`)
      .join(""),
  );
  return { hash, files: map };
}

/**
 * A file's content hash; a symlink that points nowhere (an upstream's submodule link
 * that was never checked out) is hashed by where it points, instead of failing.
 */
async function hashEntry(path: string): Promise<string> {
  try {
    return await hashFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" && (err as NodeJS.ErrnoException).code !== "ELOOP") throw err;
    const link = await lstat(path).catch(() => undefined);
    if (!link?.isSymbolicLink()) throw err;
    return sha256(`dangling symlink -> ${await readlink(path)}`);
  }
}

import { copyFile, mkdir, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";

/** What a plain-folder upstream never contributes to the tree. */
function isSkippedEntry(name: string, isDir: boolean): boolean {
  if (isDir) return name === ".git" || name === "__pycache__" || name === ".ipynb_checkpoints";
  return name === ".git" || name.endsWith(".pyc");
}

/** Copy `src` into the existing folder `dest`: files keep their mode, symlinks stay symlinks. */
export async function copyFolder(src: string, dest: string): Promise<number> {
  let count = 0;
  async function walk(from: string, to: string): Promise<void> {
    for (const e of await readdir(from, { withFileTypes: true })) {
      if (isSkippedEntry(e.name, e.isDirectory())) continue;
      const a = join(from, e.name);
      const b = join(to, e.name);
      if (e.isDirectory()) {
        await mkdir(b);
        await walk(a, b);
      } else if (e.isSymbolicLink()) {
        await symlink(await readlink(a), b);
        count++;
      } else if (e.isFile()) {
        await copyFile(a, b);
        count++;
      }
    }
  }
  await walk(src, dest);
  return count;
}

import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { mkdtempForPlacing } from "../core/fs-atomic.js";
import { entryExists } from "../core/paths.js";

/**
 * Creates the folder `target` with `files` (relative path → content), built in
 * a temp sibling and renamed into place, so it appears whole or not at all.
 * Unlike writeDirAtomic it never replaces anything: an existing `target` is an error.
 */
export async function createDirExclusive(target: string, files: Record<string, string>): Promise<void> {
  const exists = (): LmrError =>
    new LmrError({
      code: "new/task-exists",
      file: target,
      message: "the task folder already exists; lmr new never overwrites a task",
      hint: "choose another id with --id, or remove the folder first",
    });
  if (await entryExists(target)) throw exists();
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const tmp = await mkdtempForPlacing(join(parent, `.${basename(target)}.new-`));
  try {
    for (const [rel, content] of Object.entries(files)) {
      await mkdir(dirname(join(tmp, rel)), { recursive: true });
      await writeFile(join(tmp, rel), content);
    }
    // rename() would silently replace an empty folder made meanwhile: look again just before
    if (await entryExists(target)) throw exists();
    await rename(tmp, target);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    if ((err as NodeJS.ErrnoException).code === "ENOTEMPTY" || (err as NodeJS.ErrnoException).code === "EEXIST") throw exists();
    throw err;
  }
}

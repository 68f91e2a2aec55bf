import { rename as renameCb, writeFile as writeFileCb } from "node:fs";
import { chmod, copyFile, mkdir, rename, rm, mkdtemp } from "node:fs/promises";
import { dirname, basename, join } from "node:path";
import { promisify } from "node:util";

// The callback API: fs/promises' FileHandle round trips cost the event loop about twice the CPU
// per write, which shows where writes sit on a hot path (lmr generate caches every reply).
const writeFileAsync = promisify(writeFileCb);
const renameAsync = promisify(renameCb);

/**
 * Write a file so that readers see the old content or the new one, never half. With
 * `parentExists` the caller knows the folder is there (a caller writing many files into a few
 * folders makes each once); without it the folder is made first.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: { parentExists?: boolean } = {}): Promise<void> {
  if (!opts.parentExists) await mkdir(dirname(path), { recursive: true });
  await placeFile(path, (tmp) => writeFileAsync(tmp, data));
}

/** Copy `from` to `to` so that readers of `to` see no file or the whole copy, never half (the folder must exist). */
export async function copyFileAtomic(from: string, to: string): Promise<void> {
  await placeFile(to, (tmp) => copyFile(from, tmp));
}

/** `make` writes a temp sibling of `path`, which is then renamed onto it; on failure the temp file goes. */
async function placeFile(path: string, make: (tmp: string) => Promise<void>): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    await make(tmp);
    await renameAsync(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(value, null, 2) + "\n");
}

/**
 * A temp folder that will be renamed into place: mkdtemp makes it 0700, but the folder it
 * becomes must have the mode mkdir would give it (a task folder made 0700 cannot be read by
 * the unprivileged user a docker run maps to, and is not what anyone expects to find).
 */
export async function mkdtempForPlacing(prefix: string): Promise<string> {
  const tmp = await mkdtemp(prefix);
  await chmod(tmp, 0o777 & ~process.umask());
  return tmp;
}

/**
 * Build a directory in a temp sibling and move it into place only when `fill`
 * succeeds. An existing target is replaced; on failure nothing is left behind.
 */
export async function writeDirAtomic(target: string, fill: (tmpDir: string) => Promise<void>): Promise<void> {
  const parent = dirname(target);
  await mkdir(parent, { recursive: true });
  const tmp = await mkdtempForPlacing(join(parent, `.${basename(target)}.tmp-`));
  try {
    await fill(tmp);
    const old = `${tmp}.old`;
    let moved = false;
    try {
      await rename(target, old);
      moved = true;
    } catch {
      // no previous target
    }
    await rename(tmp, target);
    if (moved) await rm(old, { recursive: true, force: true });
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

import { chmod, mkdir, rename, rm, writeFile, mkdtemp } from "node:fs/promises";
import { dirname, basename, join } from "node:path";

/** Write a file so that readers see the old content or the new one, never half. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    await writeFile(tmp, data);
    await rename(tmp, path);
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

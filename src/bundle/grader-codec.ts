import { copyFile, lstat, readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { toolkitPath } from "../core/paths.js";

/** The name replay tests load the codec by, from their own folder. */
export const GRADER_CODEC_NAME = "_lmr_codec.py";
const CODEC_SOURCE = toolkitPath("python", "lmr_record", "codec.py");

/**
 * Writes the toolkit's record codec as `_lmr_codec.py` into every grader folder
 * holding a Python file that refers to `_lmr_codec` (the replay tests of
 * `lmr scaffold tests` load it from beside themselves). The codec is toolkit code,
 * so tasks do not carry copies; a task that ships its own `_lmr_codec.py` keeps it.
 * `files` are the grader files relative to `graderDir`; returns the codec paths added.
 */
export async function addGraderCodec(graderDir: string, files: string[]): Promise<string[]> {
  const folders = new Set<string>();
  for (const rel of files) {
    if (!rel.endsWith(".py") || posix.basename(rel) === GRADER_CODEC_NAME) continue;
    if ((await readFile(join(graderDir, rel), "utf8")).includes("_lmr_codec")) folders.add(posix.dirname(rel));
  }
  const added: string[] = [];
  for (const folder of [...folders].sort()) {
    const rel = posix.join(folder, GRADER_CODEC_NAME);
    const to = join(graderDir, rel);
    if (await lstat(to).then(() => true, () => false)) continue;
    await copyFile(CODEC_SOURCE, to);
    added.push(rel);
  }
  return added;
}

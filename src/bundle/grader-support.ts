import { copyFile, lstat, readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { toolkitPath } from "../core/paths.js";

/** The name replay tests load the codec by, from their own folder. */
export const GRADER_CODEC_NAME = "_lmr_codec.py";
/** The name replay tests load the replay machinery (comparisons, replay) by, from their own folder. */
export const GRADER_REPLAY_NAME = "_lmr_replay.py";

/** Toolkit modules a grader test may load from beside itself: the name it uses, and the source. */
const SUPPORT_FILES: { name: string; source: string }[] = [
  { name: GRADER_CODEC_NAME, source: toolkitPath("python", "lmr_record", "codec.py") },
  { name: GRADER_REPLAY_NAME, source: toolkitPath("python", "lmr_record", "replay.py") },
];

/**
 * Writes the toolkit's record codec as `_lmr_codec.py`, and its replay machinery as
 * `_lmr_replay.py`, into every grader folder holding a Python file that refers to that
 * module (`_lmr_codec`, `_lmr_replay`); the replay tests of `lmr scaffold tests` load both
 * from beside themselves. They are toolkit code, so tasks do not carry copies; a task that
 * ships its own keeps it. `files` are the grader files relative to `graderDir`; returns the
 * paths added.
 */
export async function addGraderSupport(graderDir: string, files: string[]): Promise<string[]> {
  const names = new Set(SUPPORT_FILES.map((f) => f.name));
  const wanted = new Set<string>(); // grader-relative paths of support files to add
  for (const rel of files) {
    if (!rel.endsWith(".py") || names.has(posix.basename(rel))) continue;
    const text = await readFile(join(graderDir, rel), "utf8");
    for (const f of SUPPORT_FILES) {
      if (text.includes(f.name.slice(0, -".py".length))) wanted.add(posix.join(posix.dirname(rel), f.name));
    }
  }
  const added: string[] = [];
  for (const rel of [...wanted].sort()) {
    const to = join(graderDir, rel);
    if (await lstat(to).then(() => true, () => false)) continue;
    await copyFile(SUPPORT_FILES.find((f) => f.name === posix.basename(rel))!.source, to);
    added.push(rel);
  }
  return added;
}

import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { listFiles } from "../core/hash.js";
import { BODIES_FILE, parseBodies, spliceBodies } from "../manifest/alternative-bodies.js";

/** Folder of a task that holds independently written solutions, one subfolder each. */
const ALTERNATIVES_DIR = "alternatives";

/** One alternative solution: `alternatives/<name>/bodies.py`, the bodies it writes into the masked stubs. */
export interface Alternative {
  name: string;
  /** Files relative to the alternative's folder (= paths in the workspace). */
  files: string[];
}

const junk = (rel: string, isDir: boolean): boolean => {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  return isDir ? name === "__pycache__" || name === ".pytest_cache" : name.endsWith(".pyc") || name === ".DS_Store";
};

/** The alternatives of the task in `taskDir`, sorted by name; none when the folder is absent. */
async function listAlternatives(taskDir: string): Promise<Alternative[]> {
  const root = join(taskDir, ALTERNATIVES_DIR);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const out: Alternative[] = [];
  for (const e of entries.filter((x) => x.isDirectory()).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    out.push({ name: e.name, files: await listFiles(join(root, e.name), junk) });
  }
  return out;
}

/** Task-relative paths of every alternative file (for the task-input hash). */
export async function alternativeInputFiles(taskDir: string): Promise<string[]> {
  return (await listAlternatives(taskDir)).flatMap((a) => a.files.map((f) => `${ALTERNATIVES_DIR}/${a.name}/${f}`));
}

/**
 * Writes each alternative's whole target files into `destDir/<name>/` (the
 * bundle's alternatives/, beside grader/, never in the workspace): the masked
 * workspace files with the bodies of its bodies.py spliced in.
 */
export async function copyAlternatives(
  taskDir: string,
  workspaceDir: string,
  targets: readonly { file: string; symbol: string }[],
  destDir: string,
): Promise<Alternative[]> {
  const targetFiles = [...new Set(targets.map((t) => t.file))].sort();
  const alts = await listAlternatives(taskDir);
  for (const alt of alts) {
    const label = `${ALTERNATIVES_DIR}/${alt.name}/${BODIES_FILE}`;
    if (alt.files.length !== 1 || alt.files[0] !== BODIES_FILE) {
      throw new LmrError({
        code: "alternative/bodies",
        file: label,
        message: `alternatives/${alt.name}/ holds ${alt.files.join(", ") || "nothing"}`,
        hint: `an alternative is one ${BODIES_FILE} of '# lmr-body: FILE::SYMBOL' blocks (CONTRIBUTING.md, "Alternatives")`,
      });
    }
    const blocks = parseBodies(await readFile(join(taskDir, ALTERNATIVES_DIR, alt.name, BODIES_FILE), "utf8"), label);
    for (const b of blocks) {
      if (!targetFiles.includes(b.file))
        throw new LmrError({
          code: "alternative/bodies",
          file: label,
          message: `line ${b.line}: ${b.file} is not a target file`,
          hint: `name one of ${targetFiles.join(", ")}`,
        });
    }
    for (const file of targetFiles) {
      const source = await readFile(join(workspaceDir, file), "utf8");
      const to = join(destDir, alt.name, file);
      await mkdir(dirname(to), { recursive: true });
      const mine = targets.filter((t) => t.file === file).map((t) => t.symbol);
      const isTarget = (name: string): boolean => mine.some((sym) => name === sym || name.startsWith(`${sym}.`));
      await writeFile(
        to,
        spliceBodies(
          source,
          blocks.filter((b) => b.file === file),
          file,
          label,
          isTarget,
        ),
      );
    }
  }
  return alts;
}

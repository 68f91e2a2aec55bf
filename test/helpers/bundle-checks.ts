import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Every entry under `root` (folders end with "/"), relative, sorted. */
export async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string, rel: string): Promise<void> {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        out.push(`${r}/`);
        await walk(join(dir, e.name), r);
      } else out.push(r);
    }
  }
  await walk(root, "");
  return out.sort();
}

/** Entries whose name says they leak a reference: VCS data, bytecode, notebook checkpoints. */
export function forbiddenEntries(entries: string[]): string[] {
  return entries.filter((e) => /(^|\/)(\.git|__pycache__|\.ipynb_checkpoints)(\/|$)/.test(e) || /\.py[co]$/.test(e));
}

/**
 * Lines of the reference file that the masked file no longer has anywhere
 * (stripped, at least `minLength` characters): what masking took away. Computed
 * from the two files alone, independent of the masker and the bundle's scanner.
 */
export async function maskedAwayLines(referenceFile: string, maskedFile: string, minLength = 16): Promise<string[]> {
  const strip = (text: string): string[] => text.split(/\r?\n/).map((l) => l.trim());
  const kept = new Set(strip(await readFile(maskedFile, "utf8")));
  return [...new Set(strip(await readFile(referenceFile, "utf8")))].filter((l) => l.length >= minLength && !kept.has(l));
}

/** Lines of a file, stripped; a notebook's lines are those of its cell sources. */
function fileLines(rel: string, raw: Buffer): string[] {
  const text = raw.toString("latin1");
  if (rel.endsWith(".ipynb")) {
    try {
      const nb = JSON.parse(raw.toString("utf8")) as { cells: { source: string | string[] }[] };
      return nb.cells.flatMap((c) => (Array.isArray(c.source) ? c.source.join("") : c.source).split(/\r?\n/)).map((l) => l.trim());
    } catch {
      // not JSON: fall through to plain lines
    }
  }
  return text.split(/\r?\n/).map((l) => l.trim());
}

/** `file: line` for every workspace file (binary ones too) that has one of `lines` as a whole line. */
export async function findLines(workspace: string, lines: string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const rel of (await listTree(workspace)).filter((e) => !e.endsWith("/"))) {
    const present = new Set(fileLines(rel, await readFile(join(workspace, rel))));
    for (const line of lines) if (present.has(line)) hits.push(`${rel}: ${line}`);
  }
  return hits;
}

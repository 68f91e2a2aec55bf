import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { listFiles } from "../core/hash.js";
import { parsePython } from "../lang/python-parser.js";
import { indexDefinitions } from "../mask/python/symbols.js";
import type { ReviewItem } from "./record.js";

/** A reviewer reads this list; beyond it, the count says there is more. */
const MAX_ITEMS = 30;
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const skipDir = (rel: string, isDir: boolean): boolean => {
  const name = rel.slice(rel.lastIndexOf("/") + 1);
  return isDir && (name === ".git" || name === "__pycache__" || name === "node_modules");
};

/**
 * Definitions in the workspace's other Python files that share a name with a
 * target: a class of the same name as a target's class, or a function/method
 * of the same name as a target function. Not leaks (the leak scan looks for
 * the reference's lines); candidates for another implementation of the same
 * algorithm (a TensorFlow twin, an older copy), listed for a reviewer.
 */
export async function findSameNamedDefinitions(workspace: string, targets: { file: string; symbol: string }[]): Promise<{ items: ReviewItem[]; more: number }> {
  const wanted = new Map<string, string>();
  for (const t of targets) {
    const parts = t.symbol.split(".");
    wanted.set(parts.at(-1)!, `${t.file}::${t.symbol}`);
    if (parts.length > 1) wanted.set(parts[0]!, `${t.file}::${t.symbol}`);
  }
  const targetFiles = new Set(targets.map((t) => t.file));
  // A file can only define one of the names after `def` or `class`: the others are not parsed
  // (a vendored library of a thousand files costs a regex each instead of a parse).
  const escaped = [...wanted.keys()].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const mayDefine = new RegExp(`\\b(?:def|class)\\s+(?:${escaped.join("|")})\\b`);
  const items: ReviewItem[] = [];
  let more = 0;
  for (const rel of (await listFiles(workspace, skipDir)).filter((f) => f.endsWith(".py") && !targetFiles.has(f))) {
    const text = await readFile(join(workspace, rel), "utf8").catch(() => undefined);
    if (text === undefined || text.length > MAX_FILE_BYTES || !mayDefine.test(text)) continue;
    const tree = await parsePython(text);
    try {
      for (const def of indexDefinitions(tree.rootNode).defs) {
        const name = def.qualname.split(".").at(-1)!;
        const target = wanted.get(name);
        // a method sharing only a common method name (forward, step) with a target elsewhere says little; its class must match too
        const isMethodTarget = target !== undefined && target.split("::")[1]!.includes(".");
        if (target === undefined) continue;
        if (def.kind === "method" && isMethodTarget && def.parent?.qualname.split(".").at(-1) !== target.split("::")[1]!.split(".")[0]) continue;
        if (items.length < MAX_ITEMS) items.push({ file: rel, line: def.line, name: def.qualname, target });
        else more++;
      }
    } finally {
      tree.delete();
    }
  }
  return { items, more };
}

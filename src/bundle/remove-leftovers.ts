import { lstat, readFile, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { RemovalReason, RemovedEntry } from "./types.js";

export interface LeftoverContext {
  /** Prepared, unmasked content of every target file, by workspace-relative path. */
  targets: ReadonlyMap<string, Buffer>;
  /** Workspace-relative notebook → the target module a notebook-to-module step wrote from it. */
  preparedFrom: ReadonlyMap<string, string>;
}

const DIR_REASONS: Record<string, RemovalReason> = {
  ".git": "vcs",
  __pycache__: "bytecode",
  ".ipynb_checkpoints": "notebook-checkpoint",
};

function fileReason(name: string): RemovalReason | undefined {
  if (name === ".git") return "vcs";
  if (name.endsWith(".pyc") || name.endsWith(".pyo")) return "bytecode";
  return undefined;
}

/**
 * Removes from the workspace what would hand the agent the reference: version
 * control data, compiled bytecode, notebook checkpoints, byte-identical copies
 * of a prepared target file, and notebooks that a target module was made from.
 * Returns what it removed, sorted by path.
 */
export async function removeLeftovers(workspaceDir: string, ctx: LeftoverContext): Promise<RemovedEntry[]> {
  const removed: RemovedEntry[] = [];
  const sizes = new Set([...ctx.targets.values()].map((b) => b.length));

  async function copyOf(rel: string, abs: string, size: number): Promise<string | undefined> {
    if (ctx.targets.has(rel) || !sizes.has(size)) return undefined;
    const content = await readFile(abs);
    for (const [target, original] of ctx.targets) if (original.equals(content)) return target;
    return undefined;
  }

  async function walk(dir: string, prefix: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const rel = prefix + entry.name;
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) {
        const reason = DIR_REASONS[entry.name];
        if (reason) {
          await rm(abs, { recursive: true, force: true });
          removed.push({ path: `${rel}/`, reason });
        } else {
          await walk(abs, `${rel}/`);
        }
        continue;
      }
      const reason = fileReason(entry.name);
      const producedTarget = ctx.preparedFrom.get(rel);
      if (reason) {
        await rm(abs, { force: true });
        removed.push({ path: rel, reason });
      } else if (producedTarget !== undefined) {
        await rm(abs, { force: true });
        removed.push({ path: rel, reason: "prepare-source", of: producedTarget });
      } else if (entry.isFile()) {
        const target = await copyOf(rel, abs, (await lstat(abs)).size);
        if (target !== undefined) {
          await rm(abs, { force: true });
          removed.push({ path: rel, reason: "copy-of-target", of: target });
        }
      }
    }
  }

  await walk(workspaceDir, "");
  return removed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

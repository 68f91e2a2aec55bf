import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { RemovedEntry } from "./types.js";

/**
 * Takes the manifest's `workspace.remove` paths out of the workspace (other
 * implementations of the target, say). A path that is not there is an error:
 * the manifest no longer describes the upstream, and a silent no-op would
 * leave what it meant to remove. A path that holds a target file is refused.
 */
export async function removeDeclaredPaths(task: ResolvedTask, workspace: string, targetFiles: ReadonlyMap<string, unknown>): Promise<RemovedEntry[]> {
  const out: RemovedEntry[] = [];
  for (const [i, entry] of (task.manifest.workspace?.remove ?? []).entries()) {
    const rel = entry.path.replace(/\/+$/, "");
    const pointer = `/workspace/remove/${i}/path`;
    const hit = [...targetFiles.keys()].find((f) => f === rel || f.startsWith(`${rel}/`));
    if (hit !== undefined) {
      throw new LmrError({
        code: "bundle/remove-target",
        file: task.manifestPath,
        pointer,
        message: `'${entry.path}' holds the target file '${hit}'`,
        hint: "remove only other files; targets are masked, not removed",
      });
    }
    const info = await lstat(join(workspace, rel)).catch(() => undefined);
    if (!info) {
      throw new LmrError({
        code: "bundle/remove-missing",
        file: task.manifestPath,
        pointer,
        message: `'${entry.path}' is not in the prepared upstream tree`,
        hint: "fix the path (relative to the upstream root or its subdir) or drop the entry",
      });
    }
    await rm(join(workspace, rel), { recursive: true, force: true });
    out.push({ path: info.isDirectory() ? `${rel}/` : rel, reason: "manifest", why: entry.reason });
  }
  return out;
}

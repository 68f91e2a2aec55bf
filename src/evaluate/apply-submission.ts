import { lstat, readFile } from "node:fs/promises";
import { basename, join, posix } from "node:path";
import { applyPatch, parsePatch } from "diff";
import { checkRelativePath } from "../core/paths.js";
import { firstSymlink, type Submission } from "./submissions.js";

/** The target files' new content, or why the submission cannot be graded. */
export type AppliedSubmission = { ok: true; overlay: Record<string, string>; ignored: string[] } | { ok: false; reason: string };

/** Files a submission may never touch: they would change how the grader runs. */
export function isForbiddenPath(path: string, mount: string): boolean {
  const name = basename(path);
  return (
    path === mount ||
    path.startsWith(`${mount}/`) ||
    ["conftest.py", "pytest.ini", ".pytest.ini", "sitecustomize.py", "usercustomize.py", "tox.ini", "setup.cfg", "pyproject.toml"].includes(name) ||
    name.endsWith(".pth")
  );
}

function cleanPath(p: string): string | undefined {
  let s = p.trim().replace(/^"|"$/g, "");
  if (s === "/dev/null") return undefined;
  s = s.replace(/^[ab]\//, "").replace(/^\.\//, "");
  return posix.normalize(s);
}

/**
 * Takes only the target files from a submission. Grader files and files that
 * change how Python or pytest start make it `invalid`; other non-target files
 * are ignored (listed), so a model's stray edits never reach the grader.
 */
export async function applySubmission(sub: Submission, workspace: string, targetFiles: string[], mount: string): Promise<AppliedSubmission> {
  const targets = new Set(targetFiles);
  const overlay: Record<string, string> = {};
  const ignored: string[] = [];
  const c = sub.content;

  const accept = (path: string): "target" | "ignored" | string => {
    const bad = checkRelativePath(path);
    if (bad) return `path '${path}': ${bad}`;
    if (isForbiddenPath(path, mount)) return `touches '${path}', which only the grader may provide`;
    return targets.has(path) ? "target" : "ignored";
  };

  if (c.kind === "invalid") return { ok: false, reason: `the submission gives no code: ${c.reason}` };
  if (c.kind === "stopped") return { ok: false, reason: c.reason };
  if (c.kind === "files") {
    for (const [raw, content] of Object.entries(c.files)) {
      const path = cleanPath(raw) ?? raw;
      const verdict = accept(path);
      if (verdict === "target") overlay[path] = content;
      else if (verdict === "ignored") ignored.push(path);
      else return { ok: false, reason: verdict };
    }
  } else if (c.kind === "tree") {
    for (const file of targetFiles) {
      // Never follow a link, at any component: it could point at the reference or anything else the evaluator can read.
      const link = await firstSymlink(c.dir, file);
      if (link !== undefined)
        return { ok: false, reason: `${file} in the submitted workspace is reached through the symbolic link '${link}'; submit the files themselves` };
      const st = await lstat(join(c.dir, file)).catch(() => undefined);
      if (!st) return { ok: false, reason: `the submitted workspace has no ${file}` };
      if (st.isSymbolicLink()) return { ok: false, reason: `${file} in the submitted workspace is a symbolic link; submit the file itself` };
      if (!st.isFile()) return { ok: false, reason: `${file} in the submitted workspace is not a regular file` };
      overlay[file] = await readFile(join(c.dir, file), "utf8");
    }
  } else {
    let patches: ReturnType<typeof parsePatch>;
    try {
      patches = parsePatch(c.patch);
    } catch (err) {
      return { ok: false, reason: `the patch cannot be parsed: ${(err as Error).message}` };
    }
    if (patches.length === 0 || patches.every((p) => p.hunks.length === 0)) return { ok: false, reason: "the patch is empty" };
    for (const p of patches) {
      const path = cleanPath(p.newFileName ?? "") ?? cleanPath(p.oldFileName ?? "");
      if (path === undefined) return { ok: false, reason: "a patch section names no file" };
      const verdict = accept(path);
      if (verdict === "ignored") {
        ignored.push(path);
        continue;
      }
      if (verdict !== "target") return { ok: false, reason: verdict };
      const before = overlay[path] ?? (await readFile(join(workspace, path), "utf8"));
      let after: string | false;
      try {
        after = applyPatch(before, p, { fuzzFactor: 0 });
      } catch {
        after = false;
      }
      if (after === false) return { ok: false, reason: `the patch does not apply to ${path}` };
      overlay[path] = after;
    }
  }
  if (Object.keys(overlay).length === 0) return { ok: false, reason: `the submission changes none of the target files (${targetFiles.join(", ")})` };
  return { ok: true, overlay, ignored };
}

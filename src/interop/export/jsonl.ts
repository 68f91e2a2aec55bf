import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { BUNDLE_FILES, type BundleManifest } from "../../bundle/types.js";
import { isRedistributable } from "../../manifest/license.js";
import { isUrlUpstream, type Category, type Environment, type Target } from "../../manifest/types.js";
import type { BuiltTask } from "./tasks.js";

/** One line of the JSONL export (Hugging Face datasets style: flat, self-describing). */
export interface JsonlRow {
  id: string;
  paper: { title: string; url: string; year: number };
  category: Category;
  upstream: { repo: string | null; commit: string | null; license: string };
  targets: Target[];
  instruction: string;
  environment: Environment;
  hashes: BundleManifest["hashes"];
  /** True only when the upstream licence is a known permissive or copyleft SPDX id. */
  redistributable: boolean;
  /** Masked target files (path → content) when redistributable; null otherwise. */
  code: Record<string, string> | null;
}

/** The row for one built task, and a warning when its code must stay out. */
export async function makeJsonlRow(built: BuiltTask): Promise<{ row: JsonlRow; warning?: string }> {
  const { task, bundle } = built;
  const m = task.manifest;
  const redistributable = isRedistributable(m.upstream.license);
  let code: Record<string, string> | null = null;
  if (redistributable) {
    code = {};
    for (const file of [...new Set(m.targets.map((t) => t.file))]) code[file] = await readFile(join(bundle.dir, BUNDLE_FILES.workspace, file), "utf8");
  }
  const row: JsonlRow = {
    id: m.id,
    paper: { title: m.paper.title, url: m.paper.url, year: m.paper.year },
    category: m.category,
    // a local upstream's path means nothing on another machine
    upstream: { repo: isUrlUpstream(m.upstream) ? m.upstream.repo : null, commit: bundle.upstream.commit, license: m.upstream.license },
    targets: m.targets.map((t) => ({ ...t })),
    instruction: await readFile(join(task.dir, m.instruction), "utf8"),
    environment: { ...m.environment, requirements: [...m.environment.requirements] },
    hashes: bundle.hashes,
    redistributable,
    code,
  };
  return redistributable
    ? { row }
    : { row, warning: `${m.id}: upstream licence ${m.upstream.license} does not allow redistribution; row written with "code": null` };
}

export function renderJsonl(rows: JsonlRow[]): string {
  return rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length > 0 ? "\n" : "");
}

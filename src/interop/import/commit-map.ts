import { readFile } from "node:fs/promises";
import { LmrError } from "../../core/errors.js";
import type { RepoFacts } from "../types.js";

const SHA = /^[0-9a-f]{40}$/;

/**
 * Reads a --commit-map file: {"<repo url>": "<40-hex sha>"} or, for
 * repositories whose info.json lacks them, {"<repo url>": {"commit": sha,
 * "paper_url": ..., "year": ..., "license": ...}}.
 */
export async function readCommitMap(file: string): Promise<Record<string, RepoFacts>> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new LmrError({
      code: "import/commit-map-unreadable",
      file,
      message: `cannot read the commit map (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      hint: 'give a JSON file {"<repo url>": "<sha>"}',
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new LmrError({
      code: "import/commit-map-invalid",
      file,
      message: `not valid JSON (${(err as Error).message})`,
      hint: 'write {"https://github.com/owner/name": "<40-hex sha>"}',
    });
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new LmrError({
      code: "import/commit-map-invalid",
      file,
      message: "expected an object of repository URL → commit",
      hint: 'write {"https://github.com/owner/name": "<40-hex sha>"}',
    });
  }
  const out: Record<string, RepoFacts> = {};
  for (const [url, v] of Object.entries(data as Record<string, unknown>)) {
    const pointer = `/${url.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    const bad = (message: string, hint: string): LmrError => new LmrError({ code: "import/commit-map-invalid", file, pointer, message, hint });
    const facts = typeof v === "string" ? { commit: v } : typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    if (!facts) throw bad(`value for ${url} is neither a commit nor an object`, 'give "<sha>" or {"commit": "<sha>", ...}');
    const commit = facts.commit;
    if (typeof commit !== "string" || !SHA.test(commit)) {
      throw bad(
        `commit for ${url} must be a full 40-hex SHA in lowercase, got ${JSON.stringify(commit)}`,
        "run `git rev-parse <ref>` in a clone of the repository",
      );
    }
    const entry: RepoFacts = { commit };
    if (facts.paper_url !== undefined) {
      if (typeof facts.paper_url !== "string") throw bad("paper_url must be a string", 'e.g. "https://arxiv.org/abs/2305.18290"');
      entry.paper_url = facts.paper_url;
    }
    if (facts.year !== undefined) {
      if (typeof facts.year !== "number" || !Number.isInteger(facts.year)) throw bad("year must be an integer", "e.g. 2023");
      entry.year = facts.year;
    }
    if (facts.license !== undefined) {
      if (typeof facts.license !== "string" || facts.license === "") throw bad("license must be an SPDX id", 'e.g. "MIT" or "NOASSERTION"');
      entry.license = facts.license;
    }
    out[url] = entry;
  }
  return out;
}

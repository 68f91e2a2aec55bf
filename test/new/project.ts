import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { UPSTREAMS, git, makeTempDir } from "../helpers/git-fixture.js";

export const DPO_TITLE = "Direct Preference Optimization: Your Language Model is Secretly a Reward Model";

export interface Project {
  /** Project root (has package.json), where lmr runs. */
  root: string;
  /** The pref-trainer fixture, committed as a git repository at root/upstreams/pref-trainer. */
  upstream: string;
  commit: string;
}

/**
 * A project folder as a task author has it: package.json at the top, and the
 * pref-trainer fixture inside it as a git repository with one deterministic commit.
 */
export async function makeProject(label = "new"): Promise<Project> {
  const root = await makeTempDir(label);
  await writeFile(join(root, "package.json"), "{}\n");
  const upstream = join(root, "upstreams", "pref-trainer");
  await cp(join(UPSTREAMS, "pref-trainer"), upstream, { recursive: true });
  await git(upstream, "init", "-q");
  await git(upstream, "add", "-A");
  await git(upstream, "commit", "-q", "-m", "pref-trainer fixture");
  return { root, upstream, commit: await git(upstream, "rev-parse", "HEAD") };
}

/** Flags of a complete `lmr new` over the project's upstream (override or drop with `extra`). */
export function completeFlags(p: Project, extra: Record<string, string | undefined> = {}): string[] {
  const flags: Record<string, string | undefined> = {
    "--paper-title": DPO_TITLE,
    "--paper-url": "https://arxiv.org/abs/2305.18290",
    "--year": "2023",
    "--venue": "NeurIPS 2023",
    "--repo": "upstreams/pref-trainer",
    "--commit": p.commit.slice(0, 7),
    "--file": "trainers.py",
    "--symbol": "preference_loss",
    "--category": "training objectives",
    "--author": "Test Author",
    ...extra,
  };
  return ["new", ...Object.entries(flags).flatMap(([k, v]) => (v === undefined ? [] : [k, v]))];
}

import { docker, listImagesWithLabel, type ImageInfo } from "./docker-cli.js";
import { LABEL } from "./images.js";
import type { EnvSpec } from "./spec.js";

export interface LmrImage {
  tag: string;
  kind: "rootfs" | "base" | "env";
  id: string;
  size: number;
  created: string;
  spec?: EnvSpec;
  base?: string;
}

function toLmrImage(i: ImageInfo): LmrImage {
  const kind = i.labels[LABEL.kind] as LmrImage["kind"];
  let spec: EnvSpec | undefined;
  try {
    spec = i.labels[LABEL.spec] ? (JSON.parse(i.labels[LABEL.spec]!) as EnvSpec) : undefined;
  } catch {
    spec = undefined;
  }
  return {
    tag: i.tags[0] ?? "<untagged>",
    kind,
    id: i.id,
    size: i.size,
    created: i.created,
    ...(spec ? { spec } : {}),
    ...(i.labels[LABEL.base] ? { base: i.labels[LABEL.base] } : {}),
  };
}

const ORDER = { rootfs: 0, base: 1, env: 2 } as const;

/** Every image lmr made (rootfs imports, bases, environments), oldest layer first. */
export async function listLmrImages(): Promise<LmrImage[]> {
  const images = (await listImagesWithLabel(LABEL.kind)).map(toLmrImage).filter((i) => i.kind in ORDER);
  return images.sort((a, b) => ORDER[a.kind] - ORDER[b.kind] || a.tag.localeCompare(b.tag));
}

export interface PruneResult {
  removed: LmrImage[];
  kept: LmrImage[];
  failed: { image: LmrImage; reason: string }[];
}

/**
 * Removes environment images no task in `wanted` uses, then bases no remaining
 * environment image is built on (and that no wanted task needs). Rootfs
 * imports stay unless `all`: they take minutes to make again. `all` removes
 * every lmr image. `dryRun` only says what would go.
 */
export async function pruneImages(
  wanted: { envTags: Set<string>; baseTags: Set<string> },
  opts: { all?: boolean; dryRun?: boolean } = {},
): Promise<PruneResult> {
  const images = await listLmrImages();
  const keepEnv = images.filter((i) => i.kind === "env" && !opts.all && wanted.envTags.has(i.tag));
  const neededBases = new Set([...wanted.baseTags]);
  const goes = (i: LmrImage): boolean => {
    if (opts.all) return true;
    if (i.kind === "env") return !keepEnv.includes(i);
    if (i.kind === "base") return !neededBases.has(i.tag);
    return false;
  };
  const result: PruneResult = { removed: [], kept: [], failed: [] };
  // Environment images first: a base cannot go while an image is built on it.
  for (const kind of ["env", "base", "rootfs"] as const) {
    for (const i of images.filter((x) => x.kind === kind)) {
      if (!goes(i)) {
        result.kept.push(i);
        continue;
      }
      if (opts.dryRun) {
        result.removed.push(i);
        continue;
      }
      const r = await docker(["image", "rm", i.tag === "<untagged>" ? i.id : i.tag], { timeoutMs: 60_000 });
      if (r.exitCode === 0) result.removed.push(i);
      else result.failed.push({ image: i, reason: r.stderr.trim().split("\n").pop() ?? `exit ${r.exitCode}` });
    }
  }
  return result;
}

import { readFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { BUNDLE_FILES, buildBundle, type BundleOptions, type LeakReference } from "../bundle/index.js";
import { findTaskDirs, loadTask } from "../manifest/load.js";
import { isUrlUpstream, type ResolvedTask } from "../manifest/types.js";
import { maskerFor } from "../mask/registry.js";

/**
 * The references of other tasks over the same upstream, for the dataset-wide
 * leak scan: two tasks whose targets sit in one file must not show each
 * other's reference. Built once per task per verify invocation.
 */
export class SiblingReferences {
  private readonly cache = new Map<string, Promise<LeakReference[]>>();
  private readonly tasksByFolder = new Map<string, Promise<ResolvedTask[]>>();

  constructor(
    private readonly workDir: string,
    private readonly opts: BundleOptions,
  ) {}

  /** Tasks in the same tasks folder as `task` (its parent) over the same upstream repository. */
  async siblingsOf(task: ResolvedTask): Promise<ResolvedTask[]> {
    const folder = dirname(resolve(task.dir));
    let all = this.tasksByFolder.get(folder);
    if (!all) {
      all = loadAll(folder);
      this.tasksByFolder.set(folder, all);
    }
    const key = upstreamKey(task);
    return (await all).filter((t) => t.manifest.id !== task.manifest.id && upstreamKey(t) === key);
  }

  /** The reference bodies of a sibling's targets, named `<task id>:<file>::<symbol>`. */
  referencesOf(sibling: ResolvedTask): Promise<LeakReference[]> {
    const id = sibling.manifest.id;
    let refs = this.cache.get(id);
    if (!refs) {
      refs = buildReferences(sibling, join(this.workDir, "siblings"), this.opts);
      this.cache.set(id, refs);
    }
    return refs;
  }
}

async function loadAll(folder: string): Promise<ResolvedTask[]> {
  const out: ResolvedTask[] = [];
  for (const dir of await findTaskDirs(folder).catch(() => [])) {
    // a sibling that does not load is verified (and reported) on its own
    const task = await loadTask(dir).catch(() => undefined);
    if (task) out.push(task);
  }
  return out;
}

function upstreamKey(task: ResolvedTask): string {
  const u = task.manifest.upstream;
  if (isUrlUpstream(u))
    return `repo:${u.repo
      .toLowerCase()
      .replace(/\.git$/, "")
      .replace(/\/+$/, "")}`;
  return `path:${resolve(task.dir, u.path)}`;
}

async function buildReferences(task: ResolvedTask, outDir: string, opts: BundleOptions): Promise<LeakReference[]> {
  const bundle = await buildBundle(task, outDir, opts);
  const refs: LeakReference[] = [];
  for (const file of new Set(bundle.targets.map((t) => t.file))) {
    const source = await readFile(join(bundle.dir, BUNDLE_FILES.reference, file), "utf8");
    const specs = task.manifest.targets
      .filter((x) => x.file === file)
      .map((x) => ({ symbol: x.symbol, mode: x.mode, ...(x.line ? { line: x.line } : {}), ...(x.region ? { region: x.region } : {}) }));
    const masked = await maskerFor(file).mask(source, specs, file);
    refs.push({
      file,
      bodies: masked.targets.flatMap((x) => x.reference),
      targets: masked.targets.flatMap((x) => x.reference.map(() => `${task.manifest.id}:${file}::${x.symbol}`)),
    });
  }
  return refs;
}

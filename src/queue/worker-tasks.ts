import { mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { buildBundle, hashTaskInputs, BUNDLE_FILES, type BundleInfo, type BundleManifest } from "../bundle/index.js";
import { LmrError, isLmrError } from "../core/errors.js";
import { findTaskDirs, loadTask } from "../manifest/load.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { SourceOptions } from "../source/types.js";
import { toolkitIdentity } from "../core/toolkit-identity.js";

export interface WorkerTaskOptions extends SourceOptions {
  tasksDir: string;
  /** Where built bundles are kept between jobs and worker restarts ($LMR_CACHE/bundles by default). */
  bundlesDir: string;
  /** Names this worker in refusals. */
  workerId: string;
}

/**
 * A worker's view of the tasks: its own checkout, each task loaded, hashed and
 * built once. A bundle is cached under bundlesDir by task id and input hash;
 * several workers on one machine share the cache (each builds into a private
 * folder and renames it into place; the first one there wins).
 */
export class WorkerTasks {
  private byId: Map<string, string> | undefined;
  /** Task folders (by folder name) whose manifest did not load, and why. */
  private broken: Map<string, unknown> | undefined;
  private readonly hashes = new Map<string, Promise<{ task: ResolvedTask; hash: string }>>();
  private readonly bundles = new Map<string, Promise<BundleInfo>>();

  constructor(private readonly opts: WorkerTaskOptions) {}

  /**
   * The task and bundle for `taskId`, built from inputs hashing to `wanted`.
   * Throws an infra LmrError naming the task when this checkout has no such
   * task, or its inputs hash differently (read again once: the checkout may
   * have moved since it was first read).
   */
  async resolveTask(taskId: string, wanted: BundleManifest["hashes"]): Promise<{ task: ResolvedTask; bundle: BundleInfo }> {
    let found = await this.hashTask(taskId, false);
    if (found.hash !== wanted.task) found = await this.hashTask(taskId, true);
    if (found.hash !== wanted.task) {
      throw new LmrError({
        code: "queue/task-hash-mismatch",
        file: found.task.manifestPath,
        message: `worker ${this.opts.workerId} cannot reproduce task '${taskId}': its inputs here hash to ${found.hash.slice(0, 12)}, the run's to ${wanted.task.slice(0, 12)}`,
        hint: `check out the same commit of the tasks on this worker as on the coordinator (--tasks-dir ${this.opts.tasksDir}), then run lmr eval again to retry infra samples`,
      });
    }
    const bundle = await this.buildCached(found.task, found.hash);
    for (const part of ["workspace", "reference", "grader"] as const) {
      if (bundle.hashes[part] !== wanted[part]) {
        throw new LmrError({
          code: "queue/bundle-hash-mismatch",
          file: join(bundle.dir, BUNDLE_FILES.manifest),
          pointer: `/hashes/${part}`,
          message: `worker ${this.opts.workerId} builds a different ${part} for task '${taskId}' (${bundle.hashes[part].slice(0, 12)}, the run's ${wanted[part].slice(0, 12)}): its upstream or toolkit differs`,
          hint: "give the worker the same --mirror / upstream checkout and lmr version as the coordinator",
        });
      }
    }
    return { task: found.task, bundle };
  }

  private async hashTask(taskId: string, fresh: boolean): Promise<{ task: ResolvedTask; hash: string }> {
    if (fresh) this.hashes.delete(taskId);
    let p = this.hashes.get(taskId);
    if (!p) {
      p = (async () => {
        const dir = await this.findTaskDir(taskId, fresh);
        const task = await loadTask(dir);
        return { task, hash: await hashTaskInputs(task) };
      })();
      this.hashes.set(taskId, p);
      p.catch(() => this.hashes.delete(taskId));
    }
    return p;
  }

  private async findTaskDir(taskId: string, fresh: boolean): Promise<string> {
    if (!this.byId || fresh || !this.byId.has(taskId)) {
      const map = new Map<string, string>();
      this.broken = new Map();
      for (const dir of await findTaskDirs(this.opts.tasksDir)) {
        const task = await loadTask(dir).catch((err: unknown) => {
          this.broken!.set(basename(dir), err);
          return undefined;
        });
        if (task) map.set(task.manifest.id, dir);
      }
      this.byId = map;
    }
    const dir = this.byId.get(taskId);
    const broken = this.broken?.get(taskId);
    if (dir === undefined && broken !== undefined) {
      throw new LmrError({
        code: "queue/task-unloadable",
        file: join(resolve(this.opts.tasksDir), taskId),
        message: `worker ${this.opts.workerId} cannot load task '${taskId}': ${isLmrError(broken) ? broken.format() : String(broken)}`,
        hint: "fix the worker's checkout of the task (lmr validate there)",
      });
    }
    if (dir === undefined) {
      throw new LmrError({
        code: "queue/unknown-task",
        file: resolve(this.opts.tasksDir),
        message: `worker ${this.opts.workerId} has no task '${taskId}' under its tasks folder`,
        hint: "start the worker with --tasks-dir pointing at a checkout of the coordinator's tasks",
      });
    }
    return dir;
  }

  private buildCached(task: ResolvedTask, hash: string): Promise<BundleInfo> {
    const id = task.manifest.id;
    const key = `${id}-${hash.slice(0, 16)}-${toolkitIdentity()}`;
    let p = this.bundles.get(key);
    if (!p) {
      p = this.readOrBuild(task, join(this.opts.bundlesDir, key), hash);
      this.bundles.set(key, p);
      p.catch(() => this.bundles.delete(key));
    }
    return p;
  }

  private async readOrBuild(task: ResolvedTask, dir: string, hash: string): Promise<BundleInfo> {
    const cached = await readBundle(dir);
    if (cached && cached.hashes.task === hash) return cached;
    // Only a folder of another build can be in the way here (the name holds the hash): never one in use.
    await rm(dir, { recursive: true, force: true });
    await mkdir(this.opts.bundlesDir, { recursive: true });
    const tmp = await mkdtemp(join(this.opts.bundlesDir, ".build-"));
    try {
      await buildBundle(task, tmp, this.opts);
      // Another worker may have put the same bundle there meanwhile: its copy is as good as ours.
      await rename(join(tmp, task.manifest.id), dir).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
    const built = await readBundle(dir);
    if (!built)
      throw new LmrError({
        code: "queue/bundle-missing",
        file: dir,
        message: `the bundle of task '${task.manifest.id}' was built but cannot be read`,
        hint: "check that the bundles folder is writable",
      });
    return built;
  }
}

async function readBundle(dir: string): Promise<BundleInfo | undefined> {
  try {
    const m = JSON.parse(await readFile(join(dir, BUNDLE_FILES.manifest), "utf8")) as BundleManifest;
    return { ...m, dir, files: { workspace: 0, reference: 0, grader: 0 } };
  } catch {
    return undefined;
  }
}

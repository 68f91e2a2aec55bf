import type { BundleInfo } from "../bundle/index.js";
import type { ResolvedTask } from "../manifest/types.js";
import { OracleServer } from "../runner/oracle-server.js";
import type { RunTarget } from "../runner/run-target.js";
import { committedPlanFor } from "../verify/server-plan.js";
import { readVerification } from "../verify/verify-task.js";

/**
 * The oracles' servers of one `lmr eval` (runner/oracle-server.ts): one per task that has at
 * least two samples left to grade, started at its first sample and closed after its last, so
 * at most a few are alive at once (jobs are planned task by task). A task's server imports
 * what its committed record's plan says the tests import, where that record was made of this
 * grader on this target; else pytest alone. A server that cannot start leaves that task's
 * samples to fresh oracles.
 */
export class OraclePool {
  private readonly servers = new Map<string, Promise<OracleServer | undefined>>();
  private readonly left: Map<string, number>;
  private readonly closing = new Set<Promise<void>>();

  constructor(
    jobs: readonly { task: ResolvedTask }[],
    private readonly scratchParent: string,
  ) {
    this.left = new Map();
    for (const j of jobs) this.left.set(j.task.manifest.id, (this.left.get(j.task.manifest.id) ?? 0) + 1);
  }

  /** The task's server, started on first use; undefined where the task's samples run fresh oracles. */
  acquire(task: ResolvedTask, bundle: BundleInfo, target: RunTarget): Promise<OracleServer | undefined> {
    const id = task.manifest.id;
    let server = this.servers.get(id);
    if (!server) {
      server = (this.left.get(id) ?? 0) >= 2 && task.manifest.tests.runner !== "node-test" ? this.start(task, bundle, target) : Promise.resolve(undefined);
      this.servers.set(id, server);
    }
    return server;
  }

  /** One of the task's samples is graded: after its last, the server goes (closeAll waits for it). */
  release(task: ResolvedTask): void {
    const id = task.manifest.id;
    const left = (this.left.get(id) ?? 1) - 1;
    this.left.set(id, left);
    if (left > 0) return;
    const server = this.servers.get(id);
    this.servers.delete(id);
    if (server) this.close(server);
  }

  async closeAll(): Promise<void> {
    for (const s of this.servers.values()) this.close(s);
    this.servers.clear();
    await Promise.all(this.closing);
  }

  private close(server: Promise<OracleServer | undefined>): void {
    const done: Promise<void> = server
      .then((s) => s?.close())
      .catch(() => undefined)
      .finally(() => this.closing.delete(done));
    this.closing.add(done);
  }

  private async start(task: ResolvedTask, bundle: BundleInfo, target: RunTarget): Promise<OracleServer | undefined> {
    const record = await readVerification(task).catch(() => undefined);
    const plan = record?.inputs?.grader === bundle.hashes.grader ? committedPlanFor(record.environment, target) : undefined;
    return OracleServer.start({
      target,
      scratchParent: this.scratchParent,
      ...(plan
        ? {
            plan: {
              preload: plan.preload,
              ...(plan.blocked ? { blocked: plan.blocked } : {}),
              ...(plan.standIns ? { standIns: plan.standIns } : {}),
              ...(plan.envChanges ? { envChanges: plan.envChanges } : {}),
            },
          }
        : {}),
    });
  }
}

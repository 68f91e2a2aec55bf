import { Queue, QueueEvents } from "bullmq";
import pLimit from "p-limit";
import { LmrError } from "../core/errors.js";
import type { GradeJob } from "../evaluate/grade-sample.js";
import type { DispatchInput, SampleDispatcher } from "../evaluate/run-eval.js";
import type { SandboxChoice } from "../runner/types.js";
import { connectRedis, withTimeout, type QueueConnection } from "./connection.js";
import { encodeGradeJob, makeInfraSample, nameGradeJob, type GradeReturn } from "./grade-payload.js";
import { QUEUE_PREFIX, nameRunQueue, registerQueue, unregisterQueue } from "./registry.js";
import { readQueueStatus, type QueueStatus, type WorkerTally } from "./queue-status.js";

export interface QueueDispatchOptions {
  connection: QueueConnection;
  sandbox: SandboxChoice;
  toolkitVersion: string;
  /** Attempts per job; only infra results are retried (default 3). */
  attempts?: number;
  /** First retry delay, doubled each time (default 2 s). */
  backoffMs?: number;
  /** How long Redis may be unreachable before the run stops with an infra error (default 300 s). */
  outageS?: number;
  /** Called about twice a second with the queue's state (for the TTY). */
  onStatus?: (s: QueueStatus) => void;
  log?: (line: string) => void;
}

export interface QueueDispatcher extends SampleDispatcher {
  /** The state when the run finished (or stopped), for `--json`. */
  finalStatus(): QueueStatus | undefined;
}

const SWEEP_MS = 3_000;
const STATUS_MS = 500;

/**
 * The coordinator's side of `lmr eval --queue`: one job per sample needing a
 * grade, id'd by its key and grading key (nameGradeJob), so adding it again
 * (a restarted coordinator, a Redis that came back empty) is harmless.
 * Results come as QueueEvents and, in case events were missed (reconnects,
 * a coordinator that was down), from a sweep of the pending jobs' states
 * every few seconds; the sweep also re-adds jobs Redis lost. A job that a
 * restarted coordinator finds already graded is taken as it is, except an
 * infra result, which is graded again as a local rerun would.
 */
export function createQueueDispatcher(opts: QueueDispatchOptions): QueueDispatcher {
  let last: QueueStatus | undefined;
  return {
    finalStatus: () => last,
    async dispatch(input: DispatchInput) {
      await runDispatch(opts, input, (s) => {
        last = s;
      });
    },
  };
}

async function runDispatch(opts: QueueDispatchOptions, input: DispatchInput, keep: (s: QueueStatus) => void): Promise<void> {
  const name = nameRunQueue("eval", input.runId);
  const conn = opts.connection;
  const redis = await connectRedis(conn);
  const queue = new Queue(name, { connection: conn.options, prefix: QUEUE_PREFIX });
  const events = new QueueEvents(name, { connection: conn.options, prefix: QUEUE_PREFIX });
  queue.on("error", () => {});
  events.on("error", () => {});
  const byId = new Map<string, GradeJob>(input.jobs.map((j) => [nameGradeJob(j), j]));
  const pending = new Set(byId.keys());
  const tally = new Map<string, WorkerTally>();
  const started = Date.now();
  let requeued = 0;
  let finish!: () => void;
  let fail!: (err: unknown) => void;
  const finished = new Promise<void>((res, rej) => {
    finish = res;
    fail = rej;
  });
  const take = async (id: string, ret: GradeReturn): Promise<void> => {
    const job = byId.get(id);
    if (!job || !pending.has(id) || !ret?.graded) return;
    if (await input.record(job, ret.graded)) {
      pending.delete(id);
      const t = tally.get(ret.worker) ?? { worker: ret.worker, done: 0 };
      t.done++;
      tally.set(ret.worker, t);
      void queue.remove(id).catch(() => {});
    }
    if (pending.size === 0) finish();
  };
  const takeFailed = async (id: string, reason: string, attempts: number): Promise<void> => {
    const job = byId.get(id);
    if (!job || !pending.has(id)) return;
    const p = {
      key: job.key,
      category: job.task.manifest.category,
      set: job.task.manifest.set ?? "core",
      submission_hash: job.submissionHash,
      grading_key: job.gradingKey,
      toolkit_version: opts.toolkitVersion,
    } as const;
    await take(id, {
      worker: "queue",
      graded: makeInfraSample(p, `the queue gave up on this sample after ${attempts} attempt(s): ${reason}`, performance.now()),
    });
  };
  events.on("completed", ({ jobId, returnvalue }) => {
    void take(jobId, parseReturn(returnvalue)).catch(fail);
  });
  events.on("failed", ({ jobId, failedReason }) => {
    void takeFailed(jobId, failedReason, opts.attempts ?? 3).catch(fail);
  });

  const addJobs = async (ids: string[]): Promise<void> => {
    const limit = pLimit(8);
    const payloads = await Promise.all(
      ids.map((id) => limit(async () => ({ id, data: await encodeGradeJob(byId.get(id)!, input.runId, opts.sandbox, opts.toolkitVersion) }))),
    );
    for (let i = 0; i < payloads.length; i += 200) {
      await queue.addBulk(
        payloads.slice(i, i + 200).map(({ id, data }) => ({
          name: "eval/grade",
          data,
          opts: {
            jobId: id,
            attempts: opts.attempts ?? 3,
            backoff: { type: "exponential", delay: opts.backoffMs ?? 2_000 },
            removeOnComplete: false,
            removeOnFail: false,
          },
        })),
      );
    }
  };

  /**
   * Every pending job's state in Redis, by pipeline. Missing: (re-)added.
   * Completed or failed: taken, except at the start, where an infra result or
   * a failure left by an earlier coordinator is removed and graded again.
   */
  const sweep = async (initial: boolean): Promise<void> => {
    const ids = [...pending];
    const toAdd: string[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const pipe = redis.pipeline();
      for (const id of chunk) pipe.hmget(`${QUEUE_PREFIX}:${name}:${id}`, "timestamp", "finishedOn", "returnvalue", "failedReason", "atm");
      const rows = (await pipe.exec()) ?? [];
      for (const [j, id] of chunk.entries()) {
        const [timestamp, finishedOn, returnvalue, failedReason, atm] = (rows[j]?.[1] ?? []) as (string | null)[];
        if (timestamp === null || timestamp === undefined) toAdd.push(id);
        else if (finishedOn === null) continue;
        else {
          const ret = returnvalue === null ? undefined : parseReturn(returnvalue);
          const stale = initial && (ret === undefined || ret.graded?.result.verdict === "infra");
          if (stale) {
            await queue.remove(id).catch(() => {});
            toAdd.push(id);
          } else if (ret) await take(id, ret);
          else await takeFailed(id, failedReason ?? "no reason given", Number(atm ?? 0));
        }
      }
    }
    if (!initial && toAdd.length > 0) {
      requeued += toAdd.length;
      opts.log?.(`lmr: ${toAdd.length} job(s) were missing from the queue (Redis restarted?); added again`);
    }
    if (toAdd.length > 0) await addJobs(toAdd);
    if (pending.size === 0) finish();
  };

  const status = async (): Promise<void> => {
    const s = await readQueueStatus({
      redis,
      queue,
      name,
      display: conn.display,
      tally,
      started,
      recorded: byId.size - pending.size,
      total: byId.size,
      requeued,
    });
    keep(s);
    opts.onStatus?.(s);
  };

  let downSince: number | undefined;
  let sweeping = false;
  const tick = async (): Promise<void> => {
    if (redis.status !== "ready") {
      downSince ??= Date.now();
      const outage = opts.outageS ?? 300;
      if (Date.now() - downSince > outage * 1000) {
        fail(
          new LmrError({
            code: "queue/redis-lost",
            file: input.outDir,
            pointer: "--queue",
            message: `Redis at ${conn.display} has not answered for ${outage} s; ${byId.size - pending.size} of ${byId.size} sample(s) were graded and written, ${pending.size} were not`,
            hint: "bring Redis back and run the same command again: the run resumes, grading only the samples without a result",
          }),
        );
      }
      return;
    }
    const wasDown = downSince !== undefined;
    downSince = undefined;
    await registerQueue(redis, name);
    if (sweeping) return;
    sweeping = true;
    try {
      if (wasDown || Date.now() - lastSweep >= SWEEP_MS) {
        lastSweep = Date.now();
        await sweep(false);
      }
    } finally {
      sweeping = false;
    }
  };
  let lastSweep = Date.now();
  const timers: NodeJS.Timeout[] = [];
  try {
    await events.waitUntilReady();
    await registerQueue(redis, name);
    await dropStaleJobs(queue, byId);
    await sweep(true);
    await registerQueue(redis, name, true);
    timers.push(setInterval(() => void tick().catch(() => {}), 1_000));
    if (opts.onStatus) timers.push(setInterval(() => void status().catch(() => {}), STATUS_MS));
    await finished;
    await withTimeout(status(), 5_000).catch(() => {});
    await unregisterQueue(redis, name);
    await queue.obliterate({ force: true }).catch(() => {});
  } finally {
    for (const t of timers) clearInterval(t);
    await Promise.allSettled([withTimeout(events.close(), 5_000), withTimeout(queue.close(), 5_000)]);
    redis.disconnect();
  }
}

/** Waiting jobs of an earlier plan of this run (a submission changed since): nobody will take their results. */
async function dropStaleJobs(queue: Queue, byId: Map<string, GradeJob>): Promise<void> {
  const waiting = await queue.getJobs(["waiting", "delayed", "prioritized", "paused"]);
  await Promise.all(waiting.filter((j) => j.id !== undefined && !byId.has(j.id)).map((j) => j.remove().catch(() => {})));
}

function parseReturn(v: unknown): GradeReturn {
  if (typeof v === "string") {
    try {
      return JSON.parse(v) as GradeReturn;
    } catch {
      return undefined as unknown as GradeReturn;
    }
  }
  return v as GradeReturn;
}

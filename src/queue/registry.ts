import type { Redis } from "ioredis";

/**
 * Redis names lmr uses, one place. BullMQ keys live under `lmr:<queue>:…`;
 * lmr's own under `lmr:queues`, `lmr:queue-alive:<queue>`, `lmr:worker:<id>`.
 *
 * Job kinds: `eval/grade` (lmr eval), `generate/sample` (lmr generate: one
 * chat request) and `agent/run` (lmr agent run: one agent on one sample),
 * each with a queue per run of its own: a coordinator registers the queue
 * (registerQueue), enqueues jobs of its kind, and a worker picks a handler
 * by job kind (serve-worker.ts, JOB_HANDLERS), so one worker fleet serves
 * all of them.
 */
export const QUEUE_PREFIX = "lmr";
export type JobKind = "eval/grade" | "generate/sample" | "agent/run";
const REGISTRY_KEY = `${QUEUE_PREFIX}:queues`;
const ALIVE_MS = 30_000;

/** The queue of one run: `eval-<run_id>` or `generate-<run_id>` (run ids are hex, so no ':' that BullMQ would split on). */
export function nameRunQueue(kind: "eval" | "generate" | "agent", runId: string): string {
  return `${kind}-${runId}`;
}

/**
 * Says a queue has a coordinator: workers serve a queue while its alive key
 * lasts. Called every few seconds, so a Redis that restarted empty learns it
 * again; a coordinator killed for good stops being served after ALIVE_MS.
 */
export async function registerQueue(redis: Redis, queue: string, announce = false): Promise<void> {
  const m = redis.multi().sadd(REGISTRY_KEY, queue).set(`${QUEUE_PREFIX}:queue-alive:${queue}`, String(Date.now()), "PX", ALIVE_MS);
  // Idle workers wake on this instead of at their next poll: a run's first job starts in milliseconds.
  if (announce) m.publish(ANNOUNCE_CHANNEL, queue);
  await m.exec();
}

/** The channel a coordinator announces a new queue on. */
export const ANNOUNCE_CHANNEL = `${QUEUE_PREFIX}:queue-announced`;

export async function unregisterQueue(redis: Redis, queue: string): Promise<void> {
  await redis.multi().srem(REGISTRY_KEY, queue).del(`${QUEUE_PREFIX}:queue-alive:${queue}`).exec();
}

/** Queues whose coordinator is alive; registry entries of dead ones are dropped. */
export async function listLiveQueues(redis: Redis): Promise<string[]> {
  const names = (await redis.smembers(REGISTRY_KEY)).sort();
  if (names.length === 0) return [];
  const alive = await redis.mget(...names.map((n) => `${QUEUE_PREFIX}:queue-alive:${n}`));
  const dead = names.filter((_, i) => alive[i] === null);
  if (dead.length > 0) await redis.srem(REGISTRY_KEY, ...dead);
  return names.filter((_, i) => alive[i] !== null);
}

/** What a worker says about itself every few seconds; it expires when the worker goes. */
export interface WorkerBeat {
  id: string;
  host: string;
  pid: number;
  started_at: string;
  concurrency: number;
  active: number;
  done: number;
  queues: string[];
}

const WORKER_TTL_MS = 15_000;

export async function beatWorker(redis: Redis, beat: WorkerBeat): Promise<void> {
  await redis.set(`${QUEUE_PREFIX}:worker:${beat.id}`, JSON.stringify(beat), "PX", WORKER_TTL_MS);
}

export async function removeWorkerBeat(redis: Redis, id: string): Promise<void> {
  await redis.del(`${QUEUE_PREFIX}:worker:${id}`);
}

/** Workers alive now (SCAN: a handful of keys, read every half second on a TTY at most). */
export async function listWorkers(redis: Redis): Promise<WorkerBeat[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${QUEUE_PREFIX}:worker:*`, "COUNT", 200);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  if (keys.length === 0) return [];
  const values = await redis.mget(...keys);
  return values
    .flatMap((v) => {
      try {
        return v === null ? [] : [JSON.parse(v) as WorkerBeat];
      } catch {
        return [];
      }
    })
    .sort((a, b) => a.id.localeCompare(b.id));
}

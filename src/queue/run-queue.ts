import { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { connectRedis, withTimeout, type QueueConnection } from "./connection.js";
import { QUEUE_PREFIX, nameRunQueue, registerQueue, unregisterQueue } from "./registry.js";

/** A coordinator's queue for one run of a command, registered so workers serve it while it is open. */
export interface OpenRunQueue {
  name: string;
  redis: Redis;
  queue: Queue;
  events: QueueEvents;
  /** Unregisters the queue, removes its jobs and closes the connections. */
  close(): Promise<void>;
}

const ALIVE_EVERY_MS = 5_000;

/**
 * The queue `<kind>-<runId>` with its events, announced to idle workers and
 * kept alive in the registry every few seconds (a Redis that restarted empty
 * learns it again) until `close`.
 */
export async function openRunQueue(connection: QueueConnection, kind: "generate" | "agent", runId: string): Promise<OpenRunQueue> {
  const name = nameRunQueue(kind, runId);
  const redis = await connectRedis(connection);
  const queue = new Queue(name, { connection: connection.options, prefix: QUEUE_PREFIX });
  const events = new QueueEvents(name, { connection: connection.options, prefix: QUEUE_PREFIX });
  queue.on("error", () => {});
  events.on("error", () => {});
  await events.waitUntilReady();
  await registerQueue(redis, name, true);
  const alive = setInterval(() => void registerQueue(redis, name).catch(() => {}), ALIVE_EVERY_MS);
  return {
    name,
    redis,
    queue,
    events,
    async close() {
      clearInterval(alive);
      await withTimeout(unregisterQueue(redis, name), 5_000).catch(() => {});
      await withTimeout(queue.obliterate({ force: true }), 5_000).catch(() => {});
      await Promise.allSettled([withTimeout(events.close(), 5_000), withTimeout(queue.close(), 5_000)]);
      redis.disconnect();
    },
  };
}

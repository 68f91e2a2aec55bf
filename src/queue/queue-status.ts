import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { listWorkers } from "./registry.js";

/** Samples one worker graded for this run (counted by the coordinator from the results it wrote). */
export interface WorkerTally {
  worker: string;
  done: number;
}

/** The coordinator's view of its queue: what the TTY line shows and `--json` ends with. */
export interface QueueStatus {
  queue: string;
  redis: string;
  elapsed_s: number;
  total: number;
  /** Samples whose result the coordinator has written. */
  recorded: number;
  /** Jobs added again because Redis had lost them. */
  requeued: number;
  jobs: { waiting: number; active: number; delayed: number; completed: number; failed: number };
  /** Workers alive now (any run's), and every worker that graded for this run, with its rate. */
  workers: { id: string; connected: boolean; active: number; done: number; per_min: number }[];
}

export interface StatusInput {
  redis: Redis;
  queue: Queue;
  name: string;
  display: string;
  tally: Map<string, WorkerTally>;
  started: number;
  recorded: number;
  total: number;
  requeued: number;
}

export async function readQueueStatus(s: StatusInput): Promise<QueueStatus> {
  const [counts, alive] = await Promise.all([s.queue.getJobCounts("waiting", "active", "delayed", "completed", "failed", "prioritized"), listWorkers(s.redis)]);
  const elapsed = (Date.now() - s.started) / 1000;
  const ids = [...new Set([...alive.filter((w) => w.queues.includes(s.name)).map((w) => w.id), ...s.tally.keys()])].filter((id) => id !== "queue").sort();
  return {
    queue: s.name,
    redis: s.display,
    elapsed_s: Math.round(elapsed * 10) / 10,
    total: s.total,
    recorded: s.recorded,
    requeued: s.requeued,
    jobs: {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      completed: counts.completed ?? 0,
      failed: counts.failed ?? 0,
    },
    workers: ids.map((id) => {
      const w = alive.find((a) => a.id === id);
      const done = s.tally.get(id)?.done ?? 0;
      return { id, connected: w !== undefined, active: w?.active ?? 0, done, per_min: elapsed > 0 ? Math.round((done / elapsed) * 600) / 10 : 0 };
    }),
  };
}

/** One line for the TTY: workers, job states, then each worker's share and rate. */
export function formatQueueStatus(s: QueueStatus): string {
  const connected = s.workers.filter((w) => w.connected).length;
  const j = s.jobs;
  const per = s.workers.map((w) => `${w.id}${w.connected ? "" : " (gone)"} ${w.done} @ ${w.per_min}/min`).join(", ");
  return `queue ${s.queue}: ${connected} worker(s) · ${s.recorded}/${s.total} written · waiting ${j.waiting + j.delayed} active ${j.active} done ${j.completed} failed ${j.failed}${per ? ` · ${per}` : ""}`;
}

import { mkdtemp, rm } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker, type Job } from "bullmq";
import { createTargetResolver, TOOLKIT_VERSION } from "../evaluate/run-eval.js";
import type { ChatCall } from "../llm/client.js";
import type { ResolvedTask } from "../manifest/types.js";
import type { RunTarget } from "../runner/run-target.js";
import type { SandboxChoice } from "../runner/types.js";
import { connectRedis, withTimeout, type QueueConnection } from "./connection.js";
import { leaveAgentSignalsToCaller } from "../agent/run-agent.js";
import { runQueuedAgent, type AgentPayload } from "./agent-job.js";
import { serveChatJob, type ChatPayload } from "./chat-job.js";
import { gradeQueuedJob } from "./grade-job.js";
import type { GradePayload } from "./grade-payload.js";
import { ANNOUNCE_CHANNEL, QUEUE_PREFIX, beatWorker, listLiveQueues, removeWorkerBeat, type JobKind, type WorkerBeat } from "./registry.js";
import { WorkerTasks } from "./worker-tasks.js";

export interface ServeOptions {
  connection: QueueConnection;
  tasksDir: string;
  bundlesDir: string;
  mirror?: string;
  cacheDir?: string;
  python?: string;
  /** Jobs graded at once by this process. */
  concurrency: number;
  /** Chat requests (`lmr generate --queue`) made at once per generation run (I/O, not CPU: default 8). */
  requests?: number;
  /** Agents (`lmr agent run --queue`) run at once per agent run (default 1). */
  agents?: number;
  /** How long a job's lock lasts without renewal: a killed worker's job is graded again after about this long. */
  lockS: number;
  /** Serve only this run's queue (default: every live queue). */
  runId?: string;
  /** Exit after this many seconds with nothing to do. */
  idleExitS?: number;
  log: (line: string) => void;
  /** Resolves when the worker should stop taking jobs (SIGTERM); the current ones finish. */
  stop: Promise<void>;
}

export interface ServeOutcome {
  id: string;
  done: number;
  reason: "stopped" | "idle";
}

const POLL_MS = 1_000;
/** A queue gone from the registry this long is let go (a Redis restart empties the registry for a moment). */
const LET_GO_MS = 10_000;

/**
 * `lmr worker`: serves every live run queue (or one run's) until stopped.
 * Each queue gets a BullMQ Worker; a job is handed to the handler of its kind.
 * Infra results are thrown while attempts remain, so BullMQ retries them with
 * backoff (perhaps on another worker); the last attempt returns the infra
 * result so the coordinator writes it. A worker killed mid-job leaves its lock
 * to expire: another worker's stalled check puts the job back.
 */
export async function serveWorker(opts: ServeOptions): Promise<ServeOutcome> {
  const id = `${hostname()}:${process.pid}`;
  // SIGTERM lets the jobs in progress finish, agent runs included (their own --timeout still applies)
  leaveAgentSignalsToCaller();
  const redis = await connectRedis(opts.connection);
  const scratch = await mkdtemp(join(tmpdir(), `lmr-worker-${process.pid}-`));
  const tasks = new WorkerTasks({
    tasksDir: opts.tasksDir,
    bundlesDir: opts.bundlesDir,
    workerId: id,
    ...(opts.mirror ? { mirror: opts.mirror } : {}),
    ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
  });
  const resolvers = new Map<SandboxChoice, ReturnType<typeof createTargetResolver>>();
  const targetFor = (task: ResolvedTask, sandbox: SandboxChoice): Promise<RunTarget> => {
    if (!resolvers.has(sandbox))
      resolvers.set(
        sandbox,
        createTargetResolver({ sandbox, ...(opts.python ? { python: opts.python } : {}), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) }),
      );
    return resolvers.get(sandbox)!(task);
  };
  const env = { workerId: id, tasks, scratch, toolkitVersion: TOOLKIT_VERSION, targetFor };
  const chatClients = new Map<string, ChatCall>();
  const handlers: Record<JobKind, (job: Job) => Promise<unknown>> = {
    // One try of one request; a failed try is returned, not thrown: the coordinator's retry loop decides.
    "generate/sample": (job) => serveChatJob(job.data as ChatPayload, id, process.env, chatClients),
    "agent/run": async (job) => {
      const ret = await runQueuedAgent(job.data as AgentPayload, {
        workerId: id,
        tasks,
        tasksDir: opts.tasksDir,
        bundlesDir: opts.bundlesDir,
        scratch,
        toolkitVersion: TOOLKIT_VERSION,
      });
      const attempts = job.opts.attempts ?? 1;
      if (ret.record.status === "infra" && job.attemptsMade + 1 < attempts) {
        opts.log(`lmr worker: ${describeJob(job)}: infra (${ret.record.reason ?? "no reason"}); attempt ${job.attemptsMade + 1} of ${attempts}, retried`);
        throw new Error(ret.record.reason ?? "infra");
      }
      return ret;
    },
    "eval/grade": async (job) => {
      const graded = await gradeQueuedJob(job.data as GradePayload, env);
      const attempts = job.opts.attempts ?? 1;
      if (graded.result.verdict === "infra" && job.attemptsMade + 1 < attempts) {
        opts.log(`lmr worker: ${describeJob(job)}: infra (${graded.result.reason ?? "no reason"}); attempt ${job.attemptsMade + 1} of ${attempts}, retried`);
        throw new Error(graded.result.reason ?? "infra");
      }
      return { worker: id, graded };
    },
  };
  const started = new Date().toISOString();
  const served = new Map<string, { worker: Worker; seen: number }>();
  let done = 0;
  let active = 0;
  let lastBusy = Date.now();
  const serveQueue = (name: string): Worker => {
    const worker = new Worker(
      name,
      async (job): Promise<unknown> => {
        active++;
        lastBusy = Date.now();
        try {
          const handler = handlers[job.name as JobKind];
          if (!handler) throw new Error(`worker ${id} has no handler for jobs of kind '${job.name}'; upgrade lmr on this worker`);
          const out = await handler(job);
          done++;
          return out;
        } finally {
          active--;
          lastBusy = Date.now();
        }
      },
      {
        connection: opts.connection.options,
        prefix: QUEUE_PREFIX,
        concurrency: name.startsWith("generate-") ? (opts.requests ?? 8) : name.startsWith("agent-") ? (opts.agents ?? 1) : opts.concurrency,
        lockDuration: opts.lockS * 1000,
        stalledInterval: opts.lockS * 1000,
        maxStalledCount: 2,
        name: id,
      },
    );
    worker.on("error", () => {}); // connection errors: ioredis reconnects; BullMQ retries its loop
    return worker;
  };

  const beat = (): WorkerBeat => ({
    id,
    host: hostname(),
    pid: process.pid,
    started_at: started,
    concurrency: opts.concurrency,
    active,
    done,
    queues: [...served.keys()],
  });
  let stopping = false;
  let reason: ServeOutcome["reason"] = "stopped";
  const stopped = opts.stop.then(() => {
    stopping = true;
  });
  let wasDown = false;
  // A coordinator announces its queue: wake the loop at once rather than at the next poll.
  let wake: (() => void) | undefined;
  const sub = redis.duplicate();
  sub.on("error", () => {});
  sub.on("message", () => wake?.());
  void sub.subscribe(ANNOUNCE_CHANNEL).catch(() => {});
  opts.log(
    `lmr worker ${id}: serving ${opts.runId ? `run ${opts.runId}` : "every run"} at ${opts.connection.display} (concurrency ${opts.concurrency}, tasks ${opts.tasksDir})`,
  );
  try {
    while (!stopping) {
      try {
        const live = await withTimeout(listLiveQueues(redis), 5_000);
        if (wasDown) opts.log(`lmr worker ${id}: Redis at ${opts.connection.display} answers again`);
        wasDown = false;
        const now = Date.now();
        for (const name of live) {
          if (opts.runId !== undefined && ![`eval-${opts.runId}`, `generate-${opts.runId}`, `agent-${opts.runId}`].includes(name)) continue;
          const s = served.get(name);
          if (s) s.seen = now;
          else served.set(name, { worker: serveQueue(name), seen: now });
        }
        for (const [name, s] of served) {
          if (now - s.seen > LET_GO_MS && s.worker.isRunning()) {
            served.delete(name);
            void s.worker.close();
          }
        }
        await beatWorker(redis, beat());
      } catch {
        if (!wasDown) opts.log(`lmr worker ${id}: Redis at ${opts.connection.display} does not answer; retrying`);
        wasDown = true;
        lastBusy = Date.now(); // an outage is not idleness
      }
      if (opts.idleExitS !== undefined && active === 0 && Date.now() - lastBusy > opts.idleExitS * 1000) {
        reason = "idle";
        break;
      }
      await Promise.race([
        stopped,
        new Promise<void>((r) => {
          const t = setTimeout(r, POLL_MS);
          wake = () => {
            clearTimeout(t);
            r();
          };
        }),
      ]);
      wake = undefined;
    }
    if (active > 0) opts.log(`lmr worker ${id}: stopping after the ${active} job(s) in progress`);
    // close() waits for the jobs in progress and takes no new ones.
    await Promise.all([...served.values()].map((s) => s.worker.close()));
    return { id, done, reason };
  } finally {
    await withTimeout(removeWorkerBeat(redis, id), 2_000).catch(() => {});
    sub.disconnect();
    redis.disconnect();
    await rm(scratch, { recursive: true, force: true });
  }
}

function describeJob(job: Job): string {
  if (job.name === "generate/sample") return `chat request of run ${(job.data as ChatPayload).run_id}`;
  if (job.name === "agent/run") {
    const i = (job.data as AgentPayload).input;
    return `agent run of task '${i.task_id}', model '${i.model}', sample '${i.sample}'`;
  }
  const k = (job.data as GradePayload).key;
  return `task '${k.task_id}', model '${k.model}', sample '${k.sample}'`;
}

import { LmrError } from "../core/errors.js";
import { sha256 } from "../core/hash.js";
import { RemoteCallError, type ChatCall, type ChatReply, type ChatRequest } from "../llm/client.js";
import type { ChatPayload, ChatReturn } from "./chat-job.js";
import type { QueueConnection } from "./connection.js";
import { openRunQueue } from "./run-queue.js";

export interface QueueChatOptions {
  connection: QueueConnection;
  runId: string;
  baseUrl: string;
  apiKeyEnv: string;
  timeoutMs: number;
  /** How long a request may wait for a free worker before the try counts as timed out (default 600 s). */
  queueWaitMs?: number;
}

export interface QueueChat {
  chat: ChatCall;
  /** Jobs this coordinator added, and which worker answered how many. */
  stats(): { jobs: number; workers: Record<string, number> };
  close(): Promise<void>;
}

/**
 * The ChatCall seam of `lmr generate` over a Redis queue: every try is one
 * `generate/sample` job that some `lmr worker` makes against the API with its
 * own key. A failed try comes back as a RemoteCallError carrying the worker's
 * classification, so the coordinator's retry loop treats it exactly as a
 * local failure (429 with Retry-After, 5xx, timeout). Jobs are id'd by the
 * request's hash and the try number: a restarted coordinator finds the
 * replies of its first tries waiting in Redis instead of asking again.
 */
export async function openQueueChat(opts: QueueChatOptions): Promise<QueueChat> {
  const run = await openRunQueue(opts.connection, "generate", opts.runId);
  const { queue, events } = run;
  const tries = new Map<string, number>();
  const workers: Record<string, number> = {};
  let jobs = 0;
  const wait = opts.queueWaitMs ?? 600_000;

  const chat: ChatCall = async (request: ChatRequest): Promise<ChatReply> => {
    const h = sha256(JSON.stringify([opts.baseUrl, request])).slice(0, 32);
    const n = (tries.get(h) ?? 0) + 1;
    tries.set(h, n);
    const jobId = `c-${h}-${n}`;
    const data: ChatPayload = { v: 1, run_id: opts.runId, base_url: opts.baseUrl, api_key_env: opts.apiKeyEnv, timeout_ms: opts.timeoutMs, request };
    const job = await queue.add("generate/sample", data, {
      jobId,
      attempts: 3,
      backoff: { type: "exponential", delay: 1_000 },
      removeOnComplete: false,
      removeOnFail: false,
    });
    jobs++;
    let ret: ChatReturn;
    try {
      ret = parse(await job.waitUntilFinished(events, opts.timeoutMs + wait));
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      if (/timed out|TTL/i.test(msg)) {
        await job.remove().catch(() => {});
        throw new RemoteCallError({
          kind: "timeout",
          retryable: true,
          message: `no worker answered within ${Math.round((opts.timeoutMs + wait) / 1000)} s (is \`lmr worker --queue …\` running?)`,
        });
      }
      throw new RemoteCallError({ kind: "connection", retryable: true, message: `the queue's job failed: ${msg}` });
    }
    await queue.remove(jobId).catch(() => {});
    workers[ret.worker] = (workers[ret.worker] ?? 0) + 1;
    if (ret.ok) return ret.reply;
    throw new RemoteCallError(ret.failure);
  };

  return {
    chat,
    stats: () => ({ jobs, workers: { ...workers } }),
    close: () => run.close(),
  };
}

function parse(v: unknown): ChatReturn {
  const r = (typeof v === "string" ? JSON.parse(v) : v) as ChatReturn | undefined;
  if (!r || typeof r !== "object" || typeof r.worker !== "string") {
    throw new LmrError({
      code: "queue/bad-return",
      message: "a worker returned something that is not a chat result",
      hint: "run the same lmr version on the coordinator and the workers",
    });
  }
  return r;
}

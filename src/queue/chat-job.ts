import { hostname } from "node:os";
import { classifyApiError, createChatCall, type ChatCall, type ChatReply, type ChatRequest } from "../llm/client.js";
import type { TryFailure } from "../llm/retry.js";

/**
 * One `generate/sample` job: a single chat request that a worker makes for
 * a coordinator (`lmr generate --queue`). The API key never travels: the job
 * names the environment variable, and each worker reads its own. Retries
 * stay with the coordinator (its backoff, its Retry-After, its counts), so a
 * worker makes exactly one try per job and returns the failure as data.
 */
export interface ChatPayload {
  v: 1;
  run_id: string;
  base_url: string;
  api_key_env: string;
  timeout_ms: number;
  request: ChatRequest;
}

export type ChatReturn = { worker: string; ok: true; reply: ChatReply } | { worker: string; ok: false; failure: TryFailure };

/** One try of the request in a job, on this worker; never throws for an API failure. */
export async function serveChatJob(
  data: ChatPayload,
  workerId: string,
  env: NodeJS.ProcessEnv = process.env,
  clients = new Map<string, ChatCall>(),
): Promise<ChatReturn> {
  const key = env[data.api_key_env];
  if (key === undefined || key === "") {
    return {
      worker: workerId,
      ok: false,
      failure: {
        kind: "client",
        retryable: false,
        message: `worker ${workerId} (${hostname()}) has no $${data.api_key_env} set: export it where \`lmr worker\` runs (the key never travels through the queue)`,
      },
    };
  }
  const id = `${data.base_url}\n${data.timeout_ms}\n${data.api_key_env}`;
  let chat = clients.get(id);
  if (!chat) {
    chat = createChatCall({ baseUrl: data.base_url, apiKey: key, timeoutMs: data.timeout_ms });
    clients.set(id, chat);
  }
  try {
    return { worker: workerId, ok: true, reply: await chat(data.request) };
  } catch (err) {
    return { worker: workerId, ok: false, failure: classifyApiError(err) };
  }
}

import OpenAI from "openai";
import { LmrError } from "../core/errors.js";
import { createHttpFetch } from "./http-fetch.js";
import { readRetryAfter, type TryFailure } from "./retry.js";

/** One chat request, the parameters that decide the reply (and so the cache key). */
export interface ChatRequest {
  model: string;
  messages: { role: "system" | "user" | "assistant"; content: string }[];
  temperature: number;
  top_p?: number;
  max_tokens?: number;
  seed?: number;
  /** OpenAI structured outputs: a JSON Schema the reply must follow (servers that ignore it are validated after). */
  response_format?: { type: "json_schema"; json_schema: { name: string; schema: object; strict: boolean } };
}

interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ChatReply {
  text: string;
  finish_reason: string | null;
  /** What the server counted; absent when it did not say. */
  usage?: ChatUsage;
  /** The model the server says answered. */
  model?: string;
}

/** The seam the generator and the judge call: a real client, or a script in tests. */
export type ChatCall = (req: ChatRequest) => Promise<ChatReply>;

export interface ClientOptions {
  baseUrl: string;
  /** Read from the environment by the CLI; never logged or written. */
  apiKey: string;
  timeoutMs: number;
}

/**
 * A ChatCall over any OpenAI-compatible API with the official SDK. The SDK's
 * own retries are off: callWithRetry decides, so every try is counted and its
 * wait recorded. A reply without choices or text is thrown as malformed.
 * Requests go over node:http with keep-alive (http-fetch.ts), not the global fetch.
 */
export function createChatCall(opts: ClientOptions): ChatCall {
  const client = new OpenAI({ baseURL: opts.baseUrl, apiKey: opts.apiKey, maxRetries: 0, timeout: opts.timeoutMs, fetch: createHttpFetch() });
  return async (req) => {
    const raw: unknown = await client.chat.completions.create({ ...req, stream: false } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    return readReply(raw);
  };
}

class MalformedReply extends Error {}

/** A try that failed elsewhere (a queue worker), already classified there. */
export class RemoteCallError extends Error {
  constructor(readonly failure: TryFailure) {
    super(failure.message);
  }
}

/** The text of a chat completion, or a MalformedReply naming what is missing. */
export function readReply(raw: unknown): ChatReply {
  if (typeof raw !== "object" || raw === null) throw new MalformedReply(`the reply is not a JSON object (${typeof raw})`);
  const r = raw as { choices?: unknown; usage?: unknown; model?: unknown };
  if (!Array.isArray(r.choices) || r.choices.length === 0) throw new MalformedReply("the reply has no choices");
  const choice = r.choices[0] as { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown };
  if (typeof choice !== "object" || choice === null || typeof choice.message !== "object" || choice.message === null)
    throw new MalformedReply("choices[0].message is missing");
  // A message with no text (a refusal, a reply cut before any text) is an answer, not a broken reply: it holds no code.
  const content = choice.message.content ?? (typeof choice.message.refusal === "string" ? choice.message.refusal : "");
  if (typeof content !== "string") throw new MalformedReply("choices[0].message.content is not a string");
  const text = content;
  const u = r.usage as { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined;
  const usage =
    u && typeof u.prompt_tokens === "number" && typeof u.completion_tokens === "number"
      ? { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens }
      : undefined;
  return {
    text,
    finish_reason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
    ...(usage ? { usage } : {}),
    ...(typeof r.model === "string" ? { model: r.model } : {}),
  };
}

/** What one failed call means for the retry loop; the message never holds the key. */
export function classifyApiError(err: unknown): TryFailure {
  if (err instanceof RemoteCallError) return err.failure;
  if (err instanceof MalformedReply || err instanceof SyntaxError) return { kind: "malformed", message: `malformed reply: ${err.message}`, retryable: true };
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { kind: "timeout", message: "the request timed out", retryable: true };
  if (err instanceof OpenAI.APIConnectionError) return { kind: "connection", message: `connection failed: ${err.message}`, retryable: true };
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    const headers = err.headers as Headers | undefined;
    const retryAfterMs = headers ? readRetryAfter((n) => headers.get(n)) : undefined;
    const base = { status, message: `HTTP ${status}: ${err.message}`, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    if (status === 429) return { kind: "rate-limit", retryable: true, ...base };
    if (status >= 500 || status === 408 || status === 409) return { kind: "server", retryable: true, ...base };
    return { kind: "client", retryable: false, ...base };
  }
  return { kind: "connection", message: err instanceof Error ? err.message : String(err), retryable: true };
}

/** The API key from the variable `--api-key-env` names; a missing one is a usage error naming the variable. */
export function readApiKey(envName: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = env[envName];
  if (key === undefined || key === "") {
    throw new LmrError({
      code: "llm/no-api-key",
      pointer: "--api-key-env",
      message: `the environment variable ${envName} is not set`,
      hint: `export ${envName}=… (or name another variable with --api-key-env; a local server that needs no key takes any value)`,
    });
  }
  return key;
}

/** The base URL with any user:password part removed, for summaries and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(unparsable URL)";
  }
}

/**
 * Retries for calls to a model's API. What is worth another try: 429, any
 * 5xx, a timeout, a dropped connection, a reply that is not the JSON the API
 * promises. What is not: other 4xx (a wrong model name or key does not get
 * better by asking again). The delay honours the server's Retry-After
 * (seconds or an HTTP date) and OpenAI's retry-after-ms; otherwise it is
 * exponential with equal jitter (half fixed, half random), so many workers
 * hitting one limit spread out but none retries at once.
 */

export interface RetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** First backoff step, ms; doubles each try. */
  baseDelayMs: number;
  /** No single wait is longer than this, whatever the server asks. */
  maxDelayMs: number;
  /** Random source in [0, 1) (tests pin it). */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Why one try failed, as data: `retryable` decides whether another comes. */
export interface TryFailure {
  kind: "rate-limit" | "server" | "timeout" | "connection" | "malformed" | "client";
  status?: number;
  message: string;
  retryable: boolean;
  /** Milliseconds the server asked us to wait, when it said. */
  retryAfterMs?: number;
}

export interface AttemptRecord {
  attempt: number;
  failure?: TryFailure;
  waited_ms?: number;
}

export type RetryOutcome<T> = { ok: true; value: T; attempts: AttemptRecord[] } | { ok: false; failure: TryFailure; attempts: AttemptRecord[] };

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Runs `call` until it succeeds, fails for good, or the tries run out; never throws for a failed try. */
export async function callWithRetry<T>(call: () => Promise<T>, classify: (err: unknown) => TryFailure, policy: RetryPolicy): Promise<RetryOutcome<T>> {
  const attempts: AttemptRecord[] = [];
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      const value = await call();
      attempts.push({ attempt });
      return { ok: true, value, attempts };
    } catch (err) {
      const failure = classify(err);
      const record: AttemptRecord = { attempt, failure };
      attempts.push(record);
      if (!failure.retryable || attempt >= policy.attempts) return { ok: false, failure, attempts };
      const wait = computeDelay(attempt, failure, policy);
      record.waited_ms = wait;
      await sleep(wait);
    }
  }
}

/** The wait before try `attempt + 1`: the server's word where it gave one, else exponential backoff with equal jitter. */
export function computeDelay(attempt: number, failure: Pick<TryFailure, "retryAfterMs">, policy: RetryPolicy): number {
  if (failure.retryAfterMs !== undefined && failure.retryAfterMs >= 0) return Math.min(failure.retryAfterMs, policy.maxDelayMs);
  const random = policy.random ?? Math.random;
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(cap / 2 + (random() * cap) / 2);
}

/** Retry-After (delta-seconds or an HTTP date) or retry-after-ms, in ms; undefined when absent or unreadable. */
export function readRetryAfter(get: (name: string) => string | null | undefined, now: number = Date.now()): number | undefined {
  const ms = get("retry-after-ms");
  if (ms != null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = get("retry-after");
  if (value == null || value.trim() === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

import { readFileSync } from "node:fs";
import { Redis, type RedisOptions } from "ioredis";
import { LmrError } from "../core/errors.js";

/** A parsed `--queue` URL: what ioredis needs, and a form safe to print (no password). */
export interface QueueConnection {
  options: RedisOptions;
  /** redis://user:***@host:port/db: for messages and progress lines. */
  display: string;
}

/**
 * Parses `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS).
 * The password may also come from $LMR_REDIS_PASSWORD, so it need not sit in
 * a process list or a Job spec; $LMR_REDIS_CA names a PEM file to trust for
 * rediss:// (a private CA). Every connection retries for ever with a capped
 * backoff: a Redis restart is waited out, and the coordinator decides how long
 * an outage may last (see dispatchToQueue).
 */
export function parseQueueUrl(value: string, flag = "--queue"): QueueConnection {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badUrl(value, flag, "is not a URL");
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") throw badUrl(value, flag, `has scheme '${url.protocol.replace(/:$/, "")}'`);
  if (url.hostname === "") throw badUrl(value, flag, "names no host");
  const port = url.port === "" ? 6379 : Number(url.port);
  const path = url.pathname.replace(/^\//, "");
  const db = path === "" ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0) throw badUrl(value, flag, `has database '${path}', not a whole number`);
  const password = url.password !== "" ? decodeURIComponent(url.password) : process.env.LMR_REDIS_PASSWORD || undefined;
  const username = url.username !== "" ? decodeURIComponent(url.username) : undefined;
  const options: RedisOptions = {
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port,
    db,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    // BullMQ's blocking commands need this; a command waits for a reconnect instead of failing.
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    connectTimeout: 10_000,
    retryStrategy: (times: number) => Math.min(100 * times, 2_000),
    ...(url.protocol === "rediss:" ? { tls: tlsOptions(url.hostname) } : {}),
  };
  const who = username || password ? `${username ?? ""}${password ? ":***" : ""}@` : "";
  return { options, display: `${url.protocol}//${who}${url.hostname}:${port}/${db}` };
}

function tlsOptions(servername: string): NonNullable<RedisOptions["tls"]> {
  const caFile = process.env.LMR_REDIS_CA;
  if (!caFile) return { servername };
  try {
    return { servername, ca: readFileSync(caFile, "utf8") };
  } catch (err) {
    throw new LmrError({
      code: "queue/bad-ca",
      file: caFile,
      pointer: "$LMR_REDIS_CA",
      message: `cannot read the CA file: ${(err as Error).message}`,
      hint: "point LMR_REDIS_CA at a PEM file, or unset it to trust the system's CAs",
    });
  }
}

function badUrl(value: string, flag: string, why: string): LmrError {
  const shown = value.replace(/\/\/([^@/]*):[^@/]*@/, "//$1:***@");
  return new LmrError({
    code: "queue/bad-url",
    pointer: flag,
    message: `${flag} '${shown}' ${why}`,
    hint: "give redis://[user:password@]host[:port][/db], or rediss://… for TLS (password also from $LMR_REDIS_PASSWORD)",
  });
}

/** Why a first connection failed, in words and with the fix: refused, unreachable, or refused credentials. */
function describeConnectError(conn: QueueConnection, err: unknown, flag = "--queue"): LmrError {
  const msg = err instanceof Error ? err.message : String(err);
  const auth = /NOAUTH|WRONGPASS|invalid password|invalid username/i.test(msg);
  return new LmrError({
    code: auth ? "queue/auth" : "queue/unreachable",
    pointer: flag,
    message: auth ? `Redis at ${conn.display} refused the credentials: ${msg}` : `cannot reach Redis at ${conn.display}: ${msg}`,
    hint: auth
      ? "put the right password in the URL (redis://:PASSWORD@host) or $LMR_REDIS_PASSWORD"
      : "start redis-server there (or check host, port, and rediss:// for TLS), then run the same command again",
    cause: err,
  });
}

/** `p`, or a rejection after `ms`: a command must not wait out a whole Redis outage where the caller has a deadline. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * A connected client, or the LmrError saying why not. ioredis reports a
 * refused password as a closed connection; the error event before it says
 * what happened, so that is the one kept.
 */
export async function connectRedis(conn: QueueConnection, flag = "--queue"): Promise<Redis> {
  const redis = new Redis({ ...conn.options, lazyConnect: true });
  let lastError: unknown;
  const onError = (err: unknown): void => {
    lastError = err;
  };
  redis.on("error", onError);
  try {
    await withTimeout(redis.connect(), 15_000);
    await withTimeout(redis.ping(), 15_000);
  } catch (err) {
    redis.disconnect();
    throw describeConnectError(conn, lastError ?? err, flag);
  }
  redis.off("error", onError);
  redis.on("error", () => {}); // later outages: ioredis reconnects; callers watch redis.status
  return redis;
}

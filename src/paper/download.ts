import { mkdir, open, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { fileSize } from "./paper-cache.js";

/*
 * HTTP download into a `.part` file that survives interruption: the next
 * attempt (in this run or a later one) asks for the rest with a Range request
 * and appends. The caller checks the hash and renames the file into place.
 */

export interface DownloadOptions {
  /** Expected size when the manifest pins it: a part of that size is complete; a longer one is started over. */
  bytes?: number;
  /** Attempts in this run, each resuming the last (default 3). */
  attempts?: number;
  /** Give up on a connection that sends nothing for this long (default 60 s). */
  idleTimeoutMs?: number;
  userAgent?: string;
}

export interface DownloadResult {
  bytes: number;
  requests: number;
  /** Offset of the first Range request, when some bytes were there already. */
  resumedFrom?: number;
}

/** Why a download stopped, for the caller to turn into an LmrError naming the task. */
export class DownloadError extends Error {
  constructor(
    message: string,
    /** "http": the server answered with an error status; "network": no answer or a broken one. */
    readonly reason: "http" | "network",
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Downloads `url` into `part`, continuing what is already there. */
export async function downloadResumable(url: string, part: string, opts: DownloadOptions = {}): Promise<DownloadResult> {
  const attempts = Math.max(1, opts.attempts ?? 3);
  await mkdir(dirname(part), { recursive: true });
  let requests = 0;
  let resumedFrom: number | undefined;
  let lastError: DownloadError | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    let have = (await fileSize(part)) ?? 0;
    if (opts.bytes !== undefined && have === opts.bytes) return finish(have);
    if (opts.bytes !== undefined && have > opts.bytes) {
      await rm(part, { force: true });
      have = 0;
    }
    if (have > 0) resumedFrom ??= have;
    requests++;
    try {
      const done = await fetchOnce(url, part, have, opts);
      if (done) return finish((await fileSize(part)) ?? 0);
    } catch (err) {
      if (err instanceof DownloadError && err.reason === "http") throw err;
      lastError = err instanceof DownloadError ? err : new DownloadError(messageOf(err), "network");
    }
  }
  throw lastError ?? new DownloadError("the download did not complete", "network");

  function finish(bytes: number): DownloadResult {
    return { bytes, requests, ...(resumedFrom !== undefined ? { resumedFrom } : {}) };
  }
}

/** One request; true when the part file now holds the whole body. Throws DownloadError. */
async function fetchOnce(url: string, part: string, have: number, opts: DownloadOptions): Promise<boolean> {
  const controller = new AbortController();
  const idle = opts.idleTimeoutMs ?? 60_000;
  let timer = setTimeout(() => controller.abort(), idle);
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(), idle);
  };
  try {
    const headers: Record<string, string> = { "user-agent": opts.userAgent ?? "lmr" };
    if (have > 0) headers.range = `bytes=${have}-`;
    let res: Response;
    try {
      res = await fetch(url, { headers, redirect: "follow", signal: controller.signal });
    } catch (err) {
      throw new DownloadError(controller.signal.aborted ? `no answer within ${idle / 1000} s` : messageOf(err), "network");
    }
    if (res.status === 416 && have > 0) {
      // the server has nothing past our bytes: the part is whole if its size is the file's
      await res.body?.cancel();
      const total = /\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1];
      if (total !== undefined && Number(total) === have) return true;
      await rm(part, { force: true });
      return false;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new DownloadError(
        `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`,
        res.status >= 500 || res.status === 429 ? "network" : "http",
        res.status,
      );
    }
    // 206 continues our bytes only when it starts where they end; anything else is the whole file
    const append = res.status === 206 && new RegExp(`^bytes ${have}-`).test(res.headers.get("content-range") ?? "");
    const expected = res.headers.get("content-length");
    const file = await open(part, append ? "a" : "w");
    let written = 0;
    try {
      if (res.body) {
        for await (const chunk of res.body) {
          touch();
          await file.write(chunk);
          written += chunk.length;
        }
      }
    } catch (err) {
      throw new DownloadError(
        controller.signal.aborted ? `the connection stalled for ${idle / 1000} s` : `the connection broke (${messageOf(err)})`,
        "network",
      );
    } finally {
      await file.close();
    }
    if (expected !== null && Number(expected) !== written) {
      throw new DownloadError(`the server sent ${written} of ${expected} bytes`, "network");
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}

function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: unknown }).cause;
    return cause instanceof Error && cause.message !== "" ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

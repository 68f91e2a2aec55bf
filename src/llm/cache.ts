import { mkdir, readFile } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import type { ChatReply, ChatRequest } from "./client.js";

/** Version of a cache entry's layout; an entry of another version is a miss. */
const RESPONSE_CACHE_VERSION = 1;

/**
 * What decides a reply: the prompt (by hash), the model, every sampling
 * parameter, and the sample index (samples 0..K-1 of one prompt are K
 * separate draws). The base URL is not part of it: the same model behind
 * another address (a mirror, a proxy) is the same model.
 */
export interface ResponseKey {
  prompt_sha256: string;
  model: string;
  parameters: Record<string, unknown>;
  sample: number;
}

export interface CachedResponse {
  version: number;
  key: ResponseKey;
  reply: ChatReply;
  /** Tries the request took when it was made (1 = first try). */
  attempts: number;
  created_at: string;
}

/** The prompt's hash: the messages exactly as sent. */
export function hashPrompt(messages: ChatRequest["messages"]): string {
  return sha256(JSON.stringify(messages.map((m) => [m.role, m.content])));
}

export function hashResponseKey(key: ResponseKey): string {
  return sha256(JSON.stringify([key.prompt_sha256, key.model, sortKeys(key.parameters), key.sample]));
}

function sortKeys(o: Record<string, unknown>): [string, unknown][] {
  return Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => [k, o[k]]);
}

/**
 * Replies on disk, one JSON file per key (`DIR/ab/abcdef….json`), each
 * written atomically as soon as it arrives: a run killed half-way keeps
 * every reply it got, and the rerun asks only for the rest. Only successful
 * replies are stored; a failed request is asked again next time.
 */
export class ResponseCache {
  /** Shard folders known to exist: a put makes each one once, not once per reply. */
  private readonly madeDirs = new Set<string>();

  constructor(readonly dir: string) {}

  private pathOf(key: ResponseKey): string {
    const h = hashResponseKey(key);
    return join(this.dir, h.slice(0, 2), `${h}.json`);
  }

  async get(key: ResponseKey): Promise<CachedResponse | undefined> {
    let raw: string;
    try {
      raw = await readFileAsync(this.pathOf(key), "utf8");
    } catch {
      return undefined;
    }
    try {
      const entry = JSON.parse(raw) as CachedResponse;
      if (entry.version !== RESPONSE_CACHE_VERSION || typeof entry.reply?.text !== "string") return undefined;
      return entry;
    } catch {
      // a torn or foreign file: asked again and overwritten
      return undefined;
    }
  }

  async put(key: ResponseKey, reply: ChatReply, attempts: number, now: Date = new Date()): Promise<void> {
    const entry: CachedResponse = { version: RESPONSE_CACHE_VERSION, key, reply, attempts, created_at: now.toISOString() };
    const path = this.pathOf(key);
    const text = JSON.stringify(entry, null, 2) + "\n";
    try {
      await this.write(path, text);
    } catch (err) {
      // the folder went away under a running process (removed by hand): make it again, once
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      this.madeDirs.delete(dirname(path));
      await this.write(path, text);
    }
  }

  /** The entry written atomically, its shard folder made once per cache rather than once per reply. */
  private async write(path: string, text: string): Promise<void> {
    const dir = dirname(path);
    if (!this.madeDirs.has(dir)) {
      await mkdirAsync(dir, { recursive: true });
      this.madeDirs.add(dir);
    }
    await writeFileAtomic(path, text, { parentExists: true });
  }
}

const readFileAsync = promisify(readFile);
const mkdirAsync = promisify(mkdir);

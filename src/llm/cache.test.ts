import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ResponseCache, hashResponseKey, type ResponseKey } from "./cache.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "lmr-cache-"));
  dirs.push(d);
  return d;
}
const key = (sample: number): ResponseKey => ({ prompt_sha256: "p".repeat(64), model: "m", parameters: { temperature: 0.5, seed: sample }, sample });
const reply = (text: string) => ({ text, finish_reason: "stop", usage: { prompt_tokens: 1, completion_tokens: 2 } });

describe("ResponseCache", () => {
  it("keeps each reply under its key, in a folder it makes, with no temp file left", async () => {
    const root = join(await tempDir(), "not", "yet");
    const cache = new ResponseCache(root);
    expect(await cache.get(key(0))).toBeUndefined();
    await cache.put(key(0), reply("a"), 1);
    await cache.put(key(1), reply("b"), 3);
    expect(await cache.get(key(0))).toMatchObject({ version: 1, reply: { text: "a" }, attempts: 1, key: key(0) });
    expect(await cache.get(key(1))).toMatchObject({ reply: { text: "b" }, attempts: 3 });
    const h = hashResponseKey(key(0));
    expect(await readdir(join(root, h.slice(0, 2)))).toContain(`${h}.json`);
    const all = (await readdir(root, { recursive: true })).map(String);
    expect(all.filter((n) => n.includes(".tmp-"))).toEqual([]);
    // another process (a second cache over the same folder) sees it
    expect(await new ResponseCache(root).get(key(1))).toMatchObject({ reply: { text: "b" } });
  });

  it("makes its folder again when it was removed under a running cache", async () => {
    const root = join(await tempDir(), "c");
    const cache = new ResponseCache(root);
    await cache.put(key(0), reply("a"), 1);
    await rm(root, { recursive: true });
    await cache.put(key(0), reply("again"), 1);
    expect(await cache.get(key(0))).toMatchObject({ reply: { text: "again" } });
  });

  it("treats a torn or foreign entry as a miss, and a put replaces it", async () => {
    const root = await tempDir();
    const cache = new ResponseCache(root);
    await cache.put(key(2), reply("x"), 1);
    const h = hashResponseKey(key(2));
    const path = join(root, h.slice(0, 2), `${h}.json`);
    await writeFile(path, '{"version": 1, "reply": {"te');
    expect(await cache.get(key(2))).toBeUndefined();
    await cache.put(key(2), reply("y"), 1);
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ reply: { text: "y" } });
    expect(dirname(path)).toBe(join(root, h.slice(0, 2)));
  });
});

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GenerateSummary } from "../../src/generate/run-generate.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { explainNoRedis, startRedis, type RedisHandle } from "../helpers/redis-server.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { startScriptedServer, taskOf, type ScriptedServer } from "../generate/scripted-server.js";
import { spawnCli, stopGracefully, type Spawned } from "./helpers.js";

/**
 * `lmr generate --queue`: the requests are made by `lmr worker` processes
 * with the key in their own environment; the coordinator (which has no key)
 * retries, caches and writes the same submission a local run writes.
 */
const noRedis = explainNoRedis();
if (noRedis) console.warn(noRedis);
afterAll(removeTempDirs);

const KEY = "sk-queue-test-4e1f9a";
const BY_TARGET = { preference_loss: "pref-loss", "OpenLoopMCTS.find_best_action": "mcts-best-action" };
const GOOD =
  "```python\ndef preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps, beta, label_smoothing=0.0, ipo=False, reference_free=False):\n    raise ValueError('scripted')\n```";

function coordinator(server: ScriptedServer, out: string, url: string, ...extra: string[]) {
  // No LMR_QT_KEY here: with --queue the coordinator must not need it.
  return runCli(
    [
      "generate",
      "--tasks-dir",
      "examples/tasks",
      "--tasks",
      "pref-loss",
      "mcts-best-action",
      "--base-url",
      server.baseUrl,
      "--model",
      "scripted/q",
      "--api-key-env",
      "LMR_QT_KEY",
      "--out",
      out,
      "-n",
      "2",
      "--temperature",
      "0.5",
      "--seed",
      "3",
      "--json",
      ...extra,
      ...(url ? ["--queue", url] : []),
    ],
    { env: url ? {} : { LMR_QT_KEY: KEY } },
  );
}

function worker(url: string, env: Record<string, string>): Spawned {
  return spawnCli(["worker", "--queue", url, "--tasks-dir", "examples/tasks", "--lock-s", "2"], env);
}

describe.skipIf(noRedis !== undefined)("lmr generate --queue", () => {
  let redis: RedisHandle;
  let work: string;
  beforeAll(async () => {
    redis = await startRedis({});
    work = await makeTempDir("queue-generate");
  });
  afterAll(async () => redis?.stop());

  const script = () => {
    let rateLimited = false;
    return startScriptedServer((req) => {
      const task = taskOf(req, BY_TARGET);
      if (task === "pref-loss" && !rateLimited) {
        rateLimited = true;
        return { kind: "status", status: 429, headers: { "retry-after": "1" } };
      }
      return task === "pref-loss" ? { kind: "reply", text: GOOD } : { kind: "reply", text: "No code from me." };
    });
  };

  it("workers make the requests with their own key; the coordinator retries a 429 after Retry-After and writes what a local run writes", async () => {
    const server = await script();
    const w = worker(redis.url, { LMR_QT_KEY: KEY });
    const out = join(work, "queued");
    const r = await coordinator(server, out, redis.url);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/5 request\(s\) went through the queue .* answered by \S+ \(5\)/);
    const s = jsonData(r.stdout) as GenerateSummary;
    expect(s.totals).toMatchObject({ samples: 4, ok: 2, invalid: 2, failed: 0, requests: 5, retries: 1 });
    const fail = s.tasks.find((t) => t.task_id === "pref-loss")!.samples.flatMap((x) => x.failures);
    expect(fail).toEqual([expect.objectContaining({ kind: "rate-limit", status: 429, waited_ms: 1000 })]);
    expect(server.requests).toHaveLength(5);
    expect(server.requests.every((q) => q.authorization === `Bearer ${KEY}`)).toBe(true);
    const queued = await readFile(join(out, "submissions.jsonl"), "utf8");
    expect(queued).not.toContain(KEY);

    // The same generation made locally writes the same rows.
    const local = await script();
    const l = await coordinator(local, join(work, "local"), "");
    expect(l.exitCode, l.stderr).toBe(0);
    expect(await readFile(join(work, "local", "submissions.jsonl"), "utf8")).toBe(queued);

    // A rerun takes every reply from the cache: no job, no request.
    const again = await coordinator(server, out, redis.url);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((jsonData(again.stdout) as GenerateSummary).totals).toMatchObject({ requests: 0, cached: 4 });
    expect(again.stderr).toMatch(/0 request\(s\) went through the queue/);
    expect(server.requests).toHaveLength(5);
    expect(await stopGracefully(w)).toBe(0);
    await Promise.all([server.close(), local.close()]);
  });

  it("a worker without the key answers with an error naming the variable; nothing is written as a submission", async () => {
    const server = await script();
    const w = worker(redis.url, {});
    const out = join(work, "nokey");
    const r = await coordinator(server, out, redis.url);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/has no \$LMR_QT_KEY set/);
    expect(server.requests).toHaveLength(0);
    const s = jsonData(r.stdout) as GenerateSummary;
    expect(s.totals).toMatchObject({ failed: 4, requests: 4 });
    await expect(readFile(join(out, "submissions.jsonl"), "utf8")).rejects.toThrow(/ENOENT/);
    expect(await stopGracefully(w)).toBe(0);
    await server.close();
  });
});

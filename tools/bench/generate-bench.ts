import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { runGenerate, type GenerateOptions } from "../../dist/generate/run-generate.js";
import { createHttpFetch } from "../../dist/llm/http-fetch.js";
import { DEFAULT_RETRY } from "../../dist/llm/retry.js";
import { loadPytestTasks } from "./example-tasks.js";
import type { BenchContext, BenchResult } from "./types.js";

/**
 * `lmr generate` throughput against a local OpenAI-compatible server that
 * answers every request after a fixed delay (50 ms), at -j 8: the ideal is
 * 8 / 0.05 = 160 requests/s. Measured: the request phase of runGenerate
 * (prompts ready, bundles built beforehand), each reply spliced into its
 * masked file and cached on disk as it arrives. Baseline in the same script:
 * 8 bare fetch loops against the same server (what the machine allows with no
 * SDK, no splicing, no cache), the same loops over the node:http fetch that
 * lmr generate sends with (src/llm/http-fetch.ts); and runGenerate with its request seam
 * answering in-process after the same delay (splicing and cache, no HTTP), to
 * tell our cost from the HTTP stack's. Goal: generate / ideal >= 0.9.
 */
export interface GenerateBenchFigures {
  requests: number;
  jobs: number;
  delay_ms: number;
  ideal_rps: number;
  generate_rps: number[];
  bare_rps: number[];
  /** The bare loops over createHttpFetch, the transport runGenerate uses. */
  bare_http_rps: number[];
  /** runGenerate with the request seam answering after the same delay in-process: our own cost without HTTP and the SDK. */
  no_http_rps: number[];
  median_generate_rps: number;
  median_bare_rps: number;
  median_bare_http_rps: number;
  median_no_http_rps: number;
  ratio_to_ideal: number;
  ratio_to_bare: number;
  /** The same run again, every reply from the cache. */
  cached_rerun_s: number;
}

const JOBS = 8;
const DELAY_MS = 50;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The server, in its own process as a real one would be: replies after
 * DELAY_MS with a fenced definition of the first target the prompt names
 * (so every reply is spliced); GET /count says how many replies it sent.
 */
const SERVER_SCRIPT = `
import { createServer } from "node:http";
let count = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    if (req.method === "GET") { res.end(String(count)); return; }
    count++;
    let symbol = "f", isClass = false;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const user = (body.messages ?? []).find((m) => m.role === "user")?.content ?? "";
      const m = /# What to write\\s+- (the class )?\`([^\`]+)\`/.exec(user);
      if (m) { symbol = m[2].split(".").pop(); isClass = m[1] !== undefined; }
    } catch {}
    const def = isClass ? "class " + symbol + ":\\n    pass" : "def " + symbol + "(*args, **kwargs):\\n    return None";
    const text = "Here it is:\\n\\n\\\`\\\`\\\`python\\n" + def + "\\n\\\`\\\`\\\`\\n";
    setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "b" + count, object: "chat.completion", created: 0, model: "bench", choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }], usage: { prompt_tokens: 1000, completion_tokens: 20 } }));
    }, ${DELAY_MS});
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => process.stdout.write(server.address().port + "\\n"));
`;

async function startDelayServer(): Promise<{ url: string; count: () => Promise<number>; close: () => Promise<void> }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", SERVER_SCRIPT], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolvePort, reject) => {
    child.once("exit", (code) => reject(new Error(`generate bench: the server exited (${code})`)));
    child.stdout.once("data", (d: Buffer) => resolvePort(Number(String(d).trim())));
  });
  const root = `http://127.0.0.1:${port}`;
  return {
    url: `${root}/v1`,
    count: async () => Number(await (await fetch(`${root}/count`)).text()),
    close: async () => {
      child.kill();
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
    },
  };
}

async function bareFetch(url: string, requests: number, f: typeof fetch = fetch): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: JOBS }, async () => {
      while (next++ < requests) {
        const r = await f(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        await r.json();
      }
    }),
  );
  return requests / ((performance.now() - start) / 1000);
}

export async function runGenerateBench(ctx: BenchContext): Promise<BenchResult & { generate: GenerateBenchFigures }> {
  const tasks = await loadPytestTasks();
  const samples = ctx.quick ? 8 : 40;
  const repeats = ctx.quick ? 1 : 3;
  const requests = tasks.length * samples;
  const server = await startDelayServer();
  const work = await mkdtemp(join(tmpdir(), "lmr-generate-bench-"));
  const notes: string[] = [
    `load average before: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} on ${availableParallelism()} cores`,
  ];
  try {
    const base: Omit<GenerateOptions, "outDir" | "cacheDir"> = {
      tasks,
      baseUrl: server.url,
      model: "bench",
      apiKey: "bench",
      samples,
      parameters: { temperature: 0.8 },
      maxPromptTokens: 16_000,
      jobs: JOBS,
      timeoutMs: 30_000,
      retry: DEFAULT_RETRY,
    };
    // Bundles once, outside the clock: every repeat reuses them and starts with an empty reply cache.
    const out = join(work, "gen");
    await runGenerate({ ...base, samples: 1, outDir: out, cacheDir: join(work, "warm-cache") });
    const generateRps: number[] = [];
    const bareRps: number[] = [];
    const bareHttpRps: number[] = [];
    const httpFetch = createHttpFetch();
    const noHttpRps: number[] = [];
    const seam: GenerateOptions["chat"] = (req) =>
      new Promise((r) => {
        const m = /# What to write\s+- (the class )?`([^`]+)`/.exec(req.messages.find((x) => x.role === "user")?.content ?? "");
        const symbol = m?.[2]?.split(".").pop() ?? "f";
        const def = m?.[1] !== undefined ? `class ${symbol}:\n    pass` : `def ${symbol}(*args, **kwargs):\n    return None`;
        setTimeout(
          () => r({ text: `Here it is:\n\n\`\`\`python\n${def}\n\`\`\`\n`, finish_reason: "stop", usage: { prompt_tokens: 1000, completion_tokens: 20 } }),
          DELAY_MS,
        );
      });
    let cachedRerun = 0;
    for (let i = 0; i < repeats; i++) {
      ctx.log(`generate: repeat ${i + 1}/${repeats}: ${requests} requests at -j ${JOBS}, ${DELAY_MS} ms per reply`);
      bareRps.push(await bareFetch(server.url, requests));
      bareHttpRps.push(await bareFetch(server.url, requests, httpFetch));
      const before = await server.count();
      const cacheDir = join(work, `cache-${i}`);
      const r = await runGenerate({ ...base, outDir: out, cacheDir });
      if (r.dryRun) throw new Error("unreachable");
      const sent = (await server.count()) - before;
      if (sent !== requests || r.summary.totals.ok !== requests)
        throw new Error(`generate bench: ${sent} requests and ${r.summary.totals.ok} spliced replies, expected ${requests}`);
      generateRps.push(requests / r.summary.request_phase_s);
      const n = await runGenerate({ ...base, outDir: out, cacheDir: join(work, `seam-cache-${i}`), chat: seam });
      if (n.dryRun || n.summary.totals.ok !== requests) throw new Error("generate bench: the in-process run did not splice every reply");
      noHttpRps.push(requests / n.summary.request_phase_s);
      if (i === 0) {
        const again = await runGenerate({ ...base, outDir: out, cacheDir });
        if (again.dryRun || again.summary.totals.requests !== 0) throw new Error("generate bench: the cached rerun made requests");
        cachedRerun = again.summary.request_phase_s;
      }
    }
    const ideal = JOBS / (DELAY_MS / 1000);
    const figures: GenerateBenchFigures = {
      requests,
      jobs: JOBS,
      delay_ms: DELAY_MS,
      ideal_rps: ideal,
      generate_rps: generateRps.map((x) => Math.round(x * 10) / 10),
      bare_rps: bareRps.map((x) => Math.round(x * 10) / 10),
      bare_http_rps: bareHttpRps.map((x) => Math.round(x * 10) / 10),
      median_bare_http_rps: Math.round(median(bareHttpRps) * 10) / 10,
      median_generate_rps: Math.round(median(generateRps) * 10) / 10,
      median_bare_rps: Math.round(median(bareRps) * 10) / 10,
      no_http_rps: noHttpRps.map((x) => Math.round(x * 10) / 10),
      median_no_http_rps: Math.round(median(noHttpRps) * 10) / 10,
      ratio_to_ideal: Math.round((median(generateRps) / ideal) * 1000) / 1000,
      ratio_to_bare: Math.round((median(generateRps) / median(bareRps)) * 1000) / 1000,
      cached_rerun_s: cachedRerun,
    };
    notes.push(
      `lmr generate -j ${JOBS}, ${requests} requests, ${DELAY_MS} ms per reply (median of ${repeats}): ${figures.median_generate_rps} requests/s = ${figures.ratio_to_ideal.toFixed(3)} of the ideal ${ideal} (goal >= 0.9)`,
      `baseline, ${JOBS} bare fetch loops: ${figures.median_bare_rps} requests/s = ${(figures.median_bare_rps / ideal).toFixed(3)} of the ideal; generate/bare = ${figures.ratio_to_bare.toFixed(3)}`,
      `the same loops over node:http (the transport lmr generate uses): ${figures.median_bare_http_rps} requests/s = ${(figures.median_bare_http_rps / ideal).toFixed(3)} of the ideal`,
      `without HTTP (the request seam answering in-process after ${DELAY_MS} ms; splicing and cache as above): ${figures.median_no_http_rps} requests/s = ${(figures.median_no_http_rps / ideal).toFixed(3)} of the ideal`,
      `rerun from the cache: ${requests} samples in ${cachedRerun.toFixed(3)} s, no request`,
    );
    return { name: "generate", rows: [], notes, generate: figures };
  } finally {
    await server.close();
    await rm(work, { recursive: true, force: true });
  }
}

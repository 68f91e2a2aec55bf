import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pLimit, { type LimitFunction } from "p-limit";
import { buildBundle, hashTaskInputs, BUNDLE_FILES, type BundleInfo, type BundleManifest } from "../bundle/index.js";
import { writeFileAtomic, writeJsonAtomic } from "../core/fs-atomic.js";
import { TOOLKIT_VERSION } from "../evaluate/run-eval.js";
import { ResponseCache, hashPrompt, type ResponseKey } from "../llm/cache.js";
import { classifyApiError, createChatCall, redactUrl, type ChatCall, type ChatReply, type ChatRequest } from "../llm/client.js";
import { callWithRetry, type AttemptRecord, type RetryPolicy, type TryFailure } from "../llm/retry.js";
import { TOKENIZER_NAME } from "../llm/tokenizer.js";
import type { ResolvedTask } from "../manifest/types.js";
import { buildPrompt, loadTemplates, type BuiltPrompt } from "./prompt.js";
import { DEFAULT_LEVEL, requireLevel, type InstructionLevel } from "../manifest/level.js";
import { spliceReply } from "./splice-targets.js";

/** Files of a generation folder (`lmr generate --out DIR`). */
export const GENERATE_FILES = {
  submissions: "submissions.jsonl",
  summary: "generate.json",
  responses: "responses",
  bundles: "bundles",
} as const;

const GENERATE_SUMMARY_VERSION = 1;

interface SamplingParameters {
  temperature: number;
  top_p?: number;
  max_tokens?: number;
  /** Sample i is sent with seed + i (servers that honour a seed then give K different, repeatable draws). */
  seed?: number;
}

export interface GenerateOptions {
  tasks: ResolvedTask[];
  /** The generation folder; unused (a temp folder is used and removed) with dryRun. */
  outDir?: string;
  baseUrl: string;
  model: string;
  /** Read from the environment by the caller; only ever handed to the SDK. */
  apiKey?: string;
  samples: number;
  parameters: SamplingParameters;
  maxPromptTokens: number;
  jobs: number;
  timeoutMs: number;
  retry: RetryPolicy;
  templatesDir?: string;
  /** Reply cache (default OUT/responses). */
  cacheDir?: string;
  dryRun?: boolean;
  /** US dollars per million tokens, for the cost in the summary. */
  price?: { prompt: number; completion: number };
  mirror?: string;
  /** The instruction the prompt carries (default "paper"); generate.json records it and lmr eval reads it there. */
  level?: InstructionLevel;
  /** The request seam; default: the OpenAI SDK over baseUrl. */
  chat?: ChatCall;
  onProgress?: (p: { done: number; total: number; last: SampleRecord }) => void;
}

type SampleStatus = "ok" | "invalid" | "failed";

interface SampleRecord {
  task_id: string;
  sample: number;
  status: SampleStatus;
  /** Why a sample is invalid (the reply holds no usable code) or failed (the API never answered). */
  reason?: string;
  cached: boolean;
  /** HTTP tries this run made for it (0 when cached). */
  requests: number;
  /** Every failed try: why, and how long we waited before the next (none after the last). */
  failures: { kind: TryFailure["kind"]; status?: number; message: string; waited_ms?: number }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
  finish_reason?: string | null;
  found?: string[];
  missing?: string[];
  helpers?: string[];
  notes?: string[];
}

interface TaskRecord {
  task_id: string;
  /** Our count of the prompt (TOKENIZER_NAME). */
  prompt_tokens: number;
  paper?: BuiltPrompt["paper"];
  missing_context?: string[];
  /** What the server counted, summed over this task's samples (cached replies included). */
  usage: { prompt_tokens: number; completion_tokens: number };
  cost_usd?: number;
  samples: SampleRecord[];
}

export interface GenerateSummary {
  version: number;
  toolkit_version: string;
  model: string;
  base_url: string;
  /** The instruction level of the prompts. */
  level: InstructionLevel;
  parameters: SamplingParameters;
  samples: number;
  max_prompt_tokens: number;
  tokenizer: string;
  templates: string;
  started_at: string;
  finished_at: string;
  /** Whether every sample has a row in submissions.jsonl (no request failed for good). */
  complete: boolean;
  totals: {
    tasks: number;
    samples: number;
    ok: number;
    invalid: number;
    failed: number;
    cached: number;
    /** HTTP requests this run made, retries included. */
    requests: number;
    /** Requests after a sample's first. */
    retries: number;
    prompt_tokens: number;
    completion_tokens: number;
    cost_usd?: number;
  };
  /** Wall time of the request phase (after bundles and prompts were ready). */
  request_phase_s: number;
  tasks: TaskRecord[];
}

interface DryRunTask {
  task_id: string;
  prompt_tokens: number;
  paper?: BuiltPrompt["paper"];
  missing_context?: string[];
  messages: ChatRequest["messages"];
  /** Samples whose reply is already cached (they would make no request). */
  cached: number;
}

export type GenerateOutcome =
  { dryRun: false; summary: GenerateSummary; submissionsPath?: string; summaryPath: string } | { dryRun: true; tasks: DryRunTask[] };

/**
 * The no-agent baseline: one prompt per task, K samples each, replies
 * spliced into the masked files and written as a files-JSONL submission.
 * Bad input (a template, a prompt over budget) throws before any request
 * and leaves no generation folder behind that was not there before.
 * Replies are cached as they arrive; a request that fails for good is
 * recorded in the summary, gets no row, and leaves `complete: false`
 * (submissions.jsonl is then not written: rerun to ask again).
 */
export async function runGenerate(opts: GenerateOptions): Promise<GenerateOutcome> {
  const level = opts.level ?? DEFAULT_LEVEL;
  const started = new Date();
  const templates = await loadTemplates(opts.templatesDir);
  // A dry run writes nothing: bundles it lacks go to a temp folder; it reads the generation folder's bundles and cache when there is one.
  const given = opts.outDir !== undefined ? resolve(opts.outDir) : undefined;
  const outDir = opts.dryRun ? await mkdtemp(join(tmpdir(), "lmr-generate-dry-")) : given!;
  const existedBefore = opts.dryRun
    ? true
    : await stat(outDir).then(
        () => true,
        () => false,
      );
  const cache = new ResponseCache(opts.cacheDir ? resolve(opts.cacheDir) : join(given ?? outDir, GENERATE_FILES.responses));
  let prompts: { task: ResolvedTask; bundle: BundleInfo; prompt: BuiltPrompt }[];
  try {
    const bundles = await prepareBundles(
      opts.tasks,
      join(outDir, GENERATE_FILES.bundles),
      opts.mirror,
      level,
      opts.dryRun && given ? join(given, GENERATE_FILES.bundles) : undefined,
    );
    prompts = [];
    for (const task of opts.tasks) {
      const bundle = bundles.get(task.manifest.id)!;
      const prompt = await buildPrompt({
        taskId: task.manifest.id,
        workspace: join(bundle.dir, BUNDLE_FILES.workspace),
        targets: bundle.targets.map((t) => ({ file: t.file, symbol: t.symbol, mode: t.mode })),
        contextFiles: task.manifest.context_files ?? [],
        maxPromptTokens: opts.maxPromptTokens,
        templates,
      });
      prompts.push({ task, bundle, prompt });
    }
  } catch (err) {
    if (!existedBefore || opts.dryRun) await rm(outDir, { recursive: true, force: true });
    throw err;
  }

  const promptHashes = new Map(prompts.map(({ prompt }) => [prompt, hashPrompt(prompt.messages)]));
  const keyOf = (prompt: BuiltPrompt, sample: number): ResponseKey => ({
    prompt_sha256: promptHashes.get(prompt)!,
    model: opts.model,
    parameters: requestParameters(opts.parameters, sample),
    sample,
  });

  if (opts.dryRun) {
    try {
      const tasks: DryRunTask[] = [];
      for (const { task, prompt } of prompts) {
        let cached = 0;
        for (let s = 0; s < opts.samples; s++) if (await cache.get(keyOf(prompt, s))) cached++;
        tasks.push({
          task_id: task.manifest.id,
          prompt_tokens: prompt.tokens,
          ...(prompt.paper ? { paper: prompt.paper } : {}),
          ...(prompt.missingContext.length > 0 ? { missing_context: prompt.missingContext } : {}),
          messages: prompt.messages,
          cached,
        });
      }
      return { dryRun: true, tasks };
    } finally {
      await rm(outDir, { recursive: true, force: true });
    }
  }

  const chat = opts.chat ?? createChatCall({ baseUrl: opts.baseUrl, apiKey: opts.apiKey ?? "", timeoutMs: opts.timeoutMs });
  const limit = pLimit(opts.jobs);
  const total = prompts.length * opts.samples;
  let done = 0;
  const requestStart = performance.now();
  const results = await Promise.all(
    prompts.flatMap(({ task, prompt }) =>
      Array.from({ length: opts.samples }, (_, sample) =>
        // The -j slot covers the request (and its retries) only: caching and splicing a reply happen after it is freed.
        (async () => {
          const key = keyOf(prompt, sample);
          const got = await fetchReply(key, prompt, cache, chat, opts, limit);
          // The freed -j slot's next request is sent first (its SDK and socket work runs in
          // microtasks and nextTicks); caching and splicing this reply wait for the next turn.
          if (got.ok && got.fresh) await new Promise((r) => setImmediate(r));
          const r: { record: SampleRecord; row?: SubmissionRow } = got.ok
            ? await finish({ task_id: task.manifest.id, sample }, got, prompt, cache, key, opts)
            : { record: { task_id: task.manifest.id, sample, ...got.record } };
          done++;
          opts.onProgress?.({ done, total, last: r.record });
          return r;
        })(),
      ),
    ),
  );
  const requestPhase = (performance.now() - requestStart) / 1000;

  const rows: string[] = [];
  const tasks: TaskRecord[] = prompts.map(({ task, prompt }) => {
    const mine = results.filter((r) => r.record.task_id === task.manifest.id);
    const usage = mine.reduce(
      (a, r) => ({
        prompt_tokens: a.prompt_tokens + (r.record.usage?.prompt_tokens ?? 0),
        completion_tokens: a.completion_tokens + (r.record.usage?.completion_tokens ?? 0),
      }),
      { prompt_tokens: 0, completion_tokens: 0 },
    );
    for (const r of mine) if (r.row) rows.push(JSON.stringify(r.row));
    return {
      task_id: task.manifest.id,
      prompt_tokens: prompt.tokens,
      ...(prompt.paper ? { paper: prompt.paper } : {}),
      ...(prompt.missingContext.length > 0 ? { missing_context: prompt.missingContext } : {}),
      usage,
      ...(opts.price ? { cost_usd: costOf(usage, opts.price) } : {}),
      samples: mine.map((r) => r.record),
    };
  });
  const records = results.map((r) => r.record);
  const sum = (f: (r: SampleRecord) => number): number => records.reduce((a, r) => a + f(r), 0);
  const promptTokens = tasks.reduce((a, t) => a + t.usage.prompt_tokens, 0);
  const completionTokens = tasks.reduce((a, t) => a + t.usage.completion_tokens, 0);
  const failed = records.filter((r) => r.status === "failed").length;
  const summary: GenerateSummary = {
    version: GENERATE_SUMMARY_VERSION,
    toolkit_version: TOOLKIT_VERSION,
    model: opts.model,
    base_url: redactUrl(opts.baseUrl),
    level,
    parameters: opts.parameters,
    samples: opts.samples,
    max_prompt_tokens: opts.maxPromptTokens,
    tokenizer: TOKENIZER_NAME,
    templates: templates.dir,
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    complete: failed === 0,
    totals: {
      tasks: tasks.length,
      samples: records.length,
      ok: records.filter((r) => r.status === "ok").length,
      invalid: records.filter((r) => r.status === "invalid").length,
      failed,
      cached: records.filter((r) => r.cached).length,
      requests: sum((r) => r.requests),
      retries: sum((r) => Math.max(0, r.requests - 1)),
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      ...(opts.price ? { cost_usd: costOf({ prompt_tokens: promptTokens, completion_tokens: completionTokens }, opts.price) } : {}),
    },
    request_phase_s: Math.round(requestPhase * 1000) / 1000,
    tasks,
  };
  const submissionsPath = join(outDir, GENERATE_FILES.submissions);
  if (failed === 0) await writeFileAtomic(submissionsPath, rows.join("\n") + (rows.length > 0 ? "\n" : ""));
  else await rm(submissionsPath, { force: true });
  const summaryPath = join(outDir, GENERATE_FILES.summary);
  await writeJsonAtomic(summaryPath, summary);
  return { dryRun: false, summary, ...(failed === 0 ? { submissionsPath } : {}), summaryPath };
}

function costOf(u: { prompt_tokens: number; completion_tokens: number }, price: { prompt: number; completion: number }): number {
  return Math.round(((u.prompt_tokens * price.prompt + u.completion_tokens * price.completion) / 1e6) * 1e6) / 1e6;
}

/** The parameters sent for sample `i` (and so part of its cache key). */
function requestParameters(p: SamplingParameters, sample: number): Record<string, unknown> {
  return {
    temperature: p.temperature,
    ...(p.top_p !== undefined ? { top_p: p.top_p } : {}),
    ...(p.max_tokens !== undefined ? { max_tokens: p.max_tokens } : {}),
    ...(p.seed !== undefined ? { seed: p.seed + sample } : {}),
  };
}

/** A files-JSONL row (`lmr eval --submissions`), or one that eval grades as invalid. */
type SubmissionRow = Record<string, unknown>;

type Fetched =
  | { ok: true; reply: ChatReply; fresh: boolean; attempts: number; meta: Pick<SampleRecord, "cached" | "requests" | "failures"> }
  | { ok: false; record: Omit<SampleRecord, "task_id" | "sample"> };

/** The reply for one sample: from the cache, else asked for (with retries) inside a -j slot. */
async function fetchReply(
  key: ResponseKey,
  prompt: BuiltPrompt,
  cache: ResponseCache,
  chat: ChatCall,
  opts: GenerateOptions,
  limit: LimitFunction,
): Promise<Fetched> {
  const hit = await cache.get(key);
  if (hit) return { ok: true, reply: hit.reply, fresh: false, attempts: 0, meta: { cached: true, requests: 0, failures: [] } };
  const req: ChatRequest = { model: opts.model, messages: prompt.messages, ...(key.parameters as Pick<ChatRequest, "temperature">) };
  const outcome = await limit(() => callWithRetry(() => chat(req), classifyApiError, opts.retry));
  const attempts: AttemptRecord[] = outcome.attempts;
  const failures = attempts.flatMap((a) =>
    a.failure
      ? [
          {
            kind: a.failure.kind,
            ...(a.failure.status !== undefined ? { status: a.failure.status } : {}),
            message: a.failure.message,
            ...(a.waited_ms !== undefined ? { waited_ms: a.waited_ms } : {}),
          },
        ]
      : [],
  );
  if (!outcome.ok) {
    return {
      ok: false,
      record: {
        status: "failed",
        reason: `${outcome.failure.message} (${attempts.length} tr${attempts.length === 1 ? "y" : "ies"}${outcome.failure.retryable ? "" : "; not retried"})`,
        cached: false,
        requests: attempts.length,
        failures,
      },
    };
  }
  return { ok: true, reply: outcome.value, fresh: true, attempts: attempts.length, meta: { cached: false, requests: attempts.length, failures } };
}

/** Caches a fresh reply (before anything else, so a kill after this keeps it), then splices it into a row. */
async function finish(
  base: { task_id: string; sample: number },
  got: Extract<Fetched, { ok: true }>,
  prompt: BuiltPrompt,
  cache: ResponseCache,
  cacheKey: ResponseKey,
  opts: GenerateOptions,
): Promise<{ record: SampleRecord; row: SubmissionRow }> {
  const { reply, meta: r } = got;
  if (got.fresh) await cache.put(cacheKey, reply, got.attempts);
  const meta = { ...r, ...(reply.usage ? { usage: reply.usage } : {}), finish_reason: reply.finish_reason };
  const spliced = await spliceReply(reply.text, prompt.targets, prompt.masked);
  const key = { task_id: base.task_id, model: opts.model, sample: String(base.sample) };
  if (!spliced.ok) {
    const reason = reply.finish_reason === "length" ? `${spliced.reason} (the reply was cut at max_tokens)` : spliced.reason;
    // An empty patch is what lmr eval grades as `invalid` today; "invalid" says why for a reader of the file.
    return { record: { ...base, status: "invalid", reason, ...meta }, row: { ...key, patch: "", invalid: reason } };
  }
  const record: SampleRecord = {
    ...base,
    status: "ok",
    ...meta,
    found: spliced.found,
    ...(spliced.missing.length > 0 ? { missing: spliced.missing } : {}),
    ...(spliced.helpers.length > 0 ? { helpers: spliced.helpers } : {}),
    ...(spliced.notes.length > 0 ? { notes: spliced.notes } : {}),
  };
  return { record, row: { ...key, files: spliced.files } };
}

/** Bundles in OUT/bundles, rebuilt only when the task's inputs or the toolkit changed (as lmr eval does). */
async function prepareBundles(
  tasks: ResolvedTask[],
  root: string,
  mirror: string | undefined,
  level: InstructionLevel,
  readOnlyRoot?: string,
): Promise<Map<string, BundleInfo>> {
  requireLevel(tasks, level);
  const out = new Map<string, BundleInfo>();
  for (const task of tasks) {
    const reusable = (await findBuilt(task, readOnlyRoot, level)) ?? (await findBuilt(task, root, level));
    out.set(task.manifest.id, reusable ?? (await buildBundle(task, root, { ...(mirror ? { mirror } : {}), level })));
  }
  return out;
}

async function findBuilt(task: ResolvedTask, root: string | undefined, level: InstructionLevel): Promise<BundleInfo | undefined> {
  if (root === undefined) return undefined;
  const dir = join(root, task.manifest.id);
  try {
    const prev = JSON.parse(await readFile(join(dir, BUNDLE_FILES.manifest), "utf8")) as BundleManifest;
    if (prev.hashes.task === (await hashTaskInputs(task)) && prev.toolkit_version === TOOLKIT_VERSION && (prev.level ?? DEFAULT_LEVEL) === level)
      return { ...prev, dir, files: { workspace: 0, reference: 0, grader: 0 } };
  } catch {
    // not built yet
  }
  return undefined;
}

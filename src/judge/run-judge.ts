import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import pLimit from "p-limit";
import { LmrError, type Problem } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { lockRunDir } from "../evaluate/run-dir.js";
import { TOOLKIT_VERSION } from "../evaluate/run-eval.js";
import { loadTemplates } from "../generate/prompt.js";
import { ResponseCache, hashResponseKey, type ResponseKey } from "../llm/cache.js";
import { createChatCall, redactUrl, type ChatCall, type ChatRequest } from "../llm/client.js";
import type { RetryPolicy } from "../llm/retry.js";
import { loadTask } from "../manifest/load.js";
import { DEFAULT_LEVEL, instructionPath, type InstructionLevel } from "../manifest/level.js";
import { loadRun } from "../report/read-run.js";
import { JUDGE_FILE, JUDGE_FILE_VERSION, readSampleJudgement, type JudgeVote, type SampleJudgement } from "../run-folder/index.js";
import { askVote } from "./ask-vote.js";
import { majorityOf } from "./majority.js";
import { judgeReplySchema } from "./parse-verdict.js";
import { checkRunDir, planJudgements, type JudgePlan, type Planned } from "./plan.js";
import { DEFAULT_JUDGE_TEMPLATES_DIR, JUDGE_TEMPLATE_VARIABLES } from "./prompt.js";

/** RUN_DIR/judge-responses: the judge's reply cache, unless --cache-dir says otherwise. */
export const JUDGE_CACHE_DIR = "judge-responses";

interface JudgeParameters {
  temperature: number;
  max_tokens?: number;
  /** Vote i is sent with seed + i. */
  seed?: number;
}

export interface JudgeOptions {
  runDir: string;
  baseUrl: string;
  model: string;
  /** Read from the environment by the caller; only ever handed to the SDK. */
  apiKey?: string;
  /** Judge calls per sample (`--samples N`); the majority decides. */
  votes: number;
  parameters: JudgeParameters;
  maxPromptTokens: number;
  jobs: number;
  timeoutMs: number;
  retry: RetryPolicy;
  /** Further asks after a reply that does not parse, per vote. */
  parseRetries: number;
  /** Send the reply schema as response_format (default true; some local servers refuse it). */
  structured?: boolean;
  templatesDir?: string;
  cacheDir?: string;
  dryRun?: boolean;
  price?: { prompt: number; completion: number };
  /** The instruction level the judge reads (default: the run's, which its bundles hold). */
  level?: InstructionLevel;
  /** Where the tasks are, for an instruction at another level than the run's (default "tasks"). */
  tasksDir?: string;
  chat?: ChatCall;
  onProgress?: (p: { done: number; total: number; last: SampleJudgement }) => void;
}

/** One sample as this invocation saw it. */
interface JudgedSampleRecord {
  task_id: string;
  model: string;
  sample: string;
  /** judged/no-code/infra as in judge.json; reused: judge.json was already there for the same key. */
  status: SampleJudgement["status"];
  reused: boolean;
  majority: SampleJudgement["majority"];
  agreement: number | null;
  requests: number;
  parse_failures: number;
}

export interface JudgeSummary {
  judge_model: string;
  /** The instruction level the judge read. */
  level: InstructionLevel;
  base_url: string;
  votes: number;
  parameters: JudgeParameters;
  totals: {
    /** Samples with a result.json. */
    samples: number;
    judged: number;
    no_code: number;
    infra: number;
    /** Samples whose judge.json was kept from an earlier run (same judge key). */
    reused: number;
    /** infra results of lmr eval: not graded, so not judged. */
    not_graded: number;
    /** Samples that could not be judged at all (problems says why). */
    unjudgeable: number;
    requests: number;
    parse_failures: number;
    cached_votes: number;
    prompt_tokens: number;
    completion_tokens: number;
    cost_usd?: number;
  };
  /** Whether every graded sample has a judgement that is not infra. */
  complete: boolean;
  samples: JudgedSampleRecord[];
  problems: Problem[];
}

interface DryRunSample {
  task_id: string;
  model: string;
  sample: string;
  prompt_tokens: number;
  messages: ChatRequest["messages"];
  cached_votes: number;
}

export type JudgeOutcome = { dryRun: false; summary: JudgeSummary } | { dryRun: true; samples: DryRunSample[]; problems: Problem[] };

const REPLY_FORMAT = "lmr-judge-reply-1";

/**
 * The LLM judge over a graded run folder: per sample with code, N judge
 * calls on the submission's targets against the reference (with the
 * instruction and the paper), each classified into JUDGE_CLASSES with a
 * rationale and checked against schema/judge-reply.schema.json. A reply that
 * does not parse is asked again (up to parseRetries) and counted; a vote that
 * never parses, or whose request fails for good, is an infra vote, and a
 * sample with no classified vote is an infra judgement that the next run asks
 * again. Replies are cached as they arrive and judge.json is written beside
 * result.json, atomically, per sample: a rerun reuses both and makes no request.
 */
export async function runJudge(opts: JudgeOptions): Promise<JudgeOutcome> {
  const runDir = resolve(opts.runDir);
  // lmr eval and lmr judge take turns in a run folder: a regrade under a running judge would leave judgements of replaced submissions
  const lock = opts.dryRun ? undefined : await lockRunDir(await checkRunDir(runDir), "lmr judge");
  try {
    return await judgeRun(runDir, opts);
  } finally {
    await lock?.release();
  }
}

async function judgeRun(runDir: string, opts: JudgeOptions): Promise<JudgeOutcome> {
  const loaded = await loadRun(runDir);
  const templates = await loadTemplates(opts.templatesDir ?? DEFAULT_JUDGE_TEMPLATES_DIR, JUDGE_TEMPLATE_VARIABLES);
  const cache = new ResponseCache(opts.cacheDir ? resolve(opts.cacheDir) : join(runDir, JUDGE_CACHE_DIR));
  const structured = opts.structured ?? true;
  const parameters = (vote: number): Record<string, unknown> => ({
    temperature: opts.parameters.temperature,
    ...(opts.parameters.max_tokens !== undefined ? { max_tokens: opts.parameters.max_tokens } : {}),
    ...(opts.parameters.seed !== undefined ? { seed: opts.parameters.seed + vote } : {}),
    ...(structured ? { response_format: REPLY_FORMAT } : {}),
  });

  const runLevel = loaded.run.level ?? DEFAULT_LEVEL;
  const level = opts.level ?? runLevel;
  const instructionFor =
    level === runLevel ? undefined : await instructionsAt(level, opts.tasksDir ?? "tasks", [...new Set(loaded.results.map((r) => r.task_id))]);
  const plan = await planJudgements(runDir, loaded, {
    model: opts.model,
    votes: opts.votes,
    maxPromptTokens: opts.maxPromptTokens,
    templates,
    parameters,
    ...(instructionFor ? { instructionFor } : {}),
  });
  const problems: Problem[] = [...loaded.problems.map((p) => ({ ...p, file: p.file === undefined ? undefined : join(runDir, p.file) })), ...plan.problems];
  const keyOf = (p: Planned, vote: number): ResponseKey => ({ prompt_sha256: p.promptHash!, model: opts.model, parameters: parameters(vote), sample: vote });

  if (opts.dryRun) {
    const samples: DryRunSample[] = [];
    for (const p of plan.planned.filter((x) => x.kind === "judge")) {
      let cached = 0;
      for (let v = 0; v < opts.votes; v++) if (await cache.get(keyOf(p, v))) cached++;
      samples.push({
        task_id: p.result.task_id,
        model: p.result.model,
        sample: p.result.sample,
        prompt_tokens: p.prompt!.tokens,
        messages: p.prompt!.messages,
        cached_votes: cached,
      });
    }
    return { dryRun: true, samples, problems };
  }

  return { dryRun: false, summary: await judgeAll(runDir, plan, problems, keyOf, parameters, cache, { ...opts, level }) };
}

async function judgeAll(
  runDir: string,
  plan: JudgePlan,
  problems: Problem[],
  keyOf: (p: Planned, vote: number) => ResponseKey,
  parameters: (vote: number) => Record<string, unknown>,
  cache: ResponseCache,
  opts: JudgeOptions,
): Promise<JudgeSummary> {
  const { planned } = plan;
  const structured = opts.structured ?? true;
  const chat = opts.chat ?? createChatCall({ baseUrl: opts.baseUrl, apiKey: opts.apiKey ?? "", timeoutMs: opts.timeoutMs });
  const limit = pLimit(opts.jobs);
  const responseFormat = structured
    ? { type: "json_schema" as const, json_schema: { name: "judge_verdict", schema: judgeReplySchema().schema, strict: true } }
    : undefined;
  let done = 0;
  let cachedVotes = 0;
  // Samples whose code is the same get the same prompt: one request per (prompt, vote), shared.
  const inFlight = new Map<string, Promise<JudgeVote>>();
  const voteOnce = (key: ResponseKey, ask: () => Promise<JudgeVote>): Promise<JudgeVote> => {
    const id = hashResponseKey(key);
    const first = inFlight.get(id);
    // the tries were the first sample's: counted once
    if (first) return first.then(({ usage: _usage, ...v }) => ({ ...v, cached: v.class !== undefined, requests: 0, parse_failures: 0 }));
    const p = ask();
    inFlight.set(id, p);
    return p;
  };
  // Every earlier judgement is read first, so the samples below reach voteOnce in plan order: the
  // sample that owns a shared vote (and is counted its tries) is then the first planned, not the
  // one whose read happened to finish first.
  const earlier = await Promise.all(planned.map((p) => readSampleJudgement(runDir, p.rel, p.result)));
  const records = await Promise.all(
    planned.map(async (p, i): Promise<{ record: JudgedSampleRecord; judgement: SampleJudgement }> => {
      const previous = earlier[i]!;
      let judgement: SampleJudgement;
      let reused = false;
      if (previous.ok && previous.judgement.judge_key === p.judgeKey && previous.judgement.status !== "infra") {
        judgement = previous.judgement;
        reused = true;
      } else if (p.kind === "no-code") {
        judgement = compose(p, opts, [], "no-code", `nothing to judge: ${p.result.reason ?? "the submission gives no code"}`);
        await writeJsonAtomic(join(runDir, p.rel, JUDGE_FILE), judgement);
      } else {
        const votes = await Promise.all(
          Array.from({ length: opts.votes }, async (_, vote) => {
            const key = keyOf(p, vote);
            const v = await voteOnce(key, () =>
              askVote(
                vote,
                key,
                {
                  model: opts.model,
                  messages: p.prompt!.messages,
                  ...(parameters(vote) as Pick<ChatRequest, "temperature">),
                  ...(responseFormat ? { response_format: responseFormat } : {}),
                },
                cache,
                chat,
                limit,
                opts,
              ),
            );
            if (v.cached) cachedVotes++;
            return v;
          }),
        );
        const classified = votes.some((v) => v.class !== undefined);
        judgement = compose(
          p,
          opts,
          votes,
          classified ? "judged" : "infra",
          classified
            ? undefined
            : `no vote got a class: ${votes
                .map((v) => v.error)
                .filter(Boolean)
                .join("; ")}`,
        );
        await writeJsonAtomic(join(runDir, p.rel, JUDGE_FILE), judgement);
      }
      const record: JudgedSampleRecord = {
        task_id: p.result.task_id,
        model: p.result.model,
        sample: p.result.sample,
        status: judgement.status,
        reused,
        majority: judgement.majority,
        agreement: judgement.agreement,
        requests: reused ? 0 : judgement.requests,
        parse_failures: reused ? 0 : judgement.parse_failures,
      };
      done++;
      opts.onProgress?.({ done, total: planned.length, last: judgement });
      return { record, judgement };
    }),
  );

  const count = (s: SampleJudgement["status"]): number => records.filter((r) => r.judgement.status === s).length;
  const fresh = records.filter((r) => !r.record.reused);
  const promptTokens = fresh.reduce((a, r) => a + r.judgement.usage.prompt_tokens, 0);
  const completionTokens = fresh.reduce((a, r) => a + r.judgement.usage.completion_tokens, 0);
  const infra = count("infra");
  const summary: JudgeSummary = {
    judge_model: opts.model,
    level: opts.level ?? DEFAULT_LEVEL,
    base_url: redactUrl(opts.baseUrl),
    votes: opts.votes,
    parameters: opts.parameters,
    totals: {
      samples: plan.samples,
      judged: count("judged"),
      no_code: count("no-code"),
      infra,
      reused: records.length - fresh.length,
      not_graded: plan.notGraded,
      unjudgeable: plan.unjudgeable,
      requests: fresh.reduce((a, r) => a + r.record.requests, 0),
      parse_failures: fresh.reduce((a, r) => a + r.record.parse_failures, 0),
      cached_votes: cachedVotes,
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      ...(opts.price ? { cost_usd: costOf({ prompt_tokens: promptTokens, completion_tokens: completionTokens }, opts.price) } : {}),
    },
    complete: infra === 0 && plan.unjudgeable === 0,
    samples: records.map((r) => r.record),
    problems,
  };
  return summary;
}

function compose(
  p: Planned,
  opts: Pick<JudgeOptions, "model" | "price">,
  votes: JudgeVote[],
  status: SampleJudgement["status"],
  reason: string | undefined,
): SampleJudgement {
  const model = opts.model;
  const m = status === "judged" ? majorityOf(votes.flatMap((v) => (v.class ? [v.class] : []))) : undefined;
  const tokens = votes.reduce(
    (a, v) => ({ prompt_tokens: a.prompt_tokens + (v.usage?.prompt_tokens ?? 0), completion_tokens: a.completion_tokens + (v.usage?.completion_tokens ?? 0) }),
    { prompt_tokens: 0, completion_tokens: 0 },
  );
  const usage = opts.price ? { ...tokens, cost_usd: costOf(tokens, opts.price) } : tokens;
  return {
    schema_version: JUDGE_FILE_VERSION,
    task_id: p.result.task_id,
    model: p.result.model,
    sample: p.result.sample,
    judge_model: model,
    submission_hash: p.result.submission_hash,
    judge_key: p.judgeKey,
    status,
    ...(reason !== undefined ? { reason } : {}),
    votes,
    majority: m?.majority ?? null,
    agreement: m ? Math.round(m.agreement * 1e6) / 1e6 : null,
    requests: votes.reduce((a, v) => a + v.requests, 0),
    parse_failures: votes.reduce((a, v) => a + v.parse_failures, 0),
    infra_votes: votes.filter((v) => v.class === undefined).length,
    usage,
    finished_at: new Date().toISOString(),
    toolkit_version: TOOLKIT_VERSION,
  };
}

function costOf(u: { prompt_tokens: number; completion_tokens: number }, price: { prompt: number; completion: number }): number {
  return Math.round(((u.prompt_tokens * price.prompt + u.completion_tokens * price.completion) / 1e6) * 1e6) / 1e6;
}

/**
 * Each task's instruction at `level`, read from its folder under tasksDir: the run's bundles hold
 * only the run's level. Every task is checked before any request (a task without the level, or not
 * under tasksDir, stops the judge naming it).
 */
async function instructionsAt(level: InstructionLevel, tasksDir: string, taskIds: string[]): Promise<(taskId: string) => Promise<string>> {
  const texts = new Map<string, string>();
  for (const id of taskIds) {
    const dir = join(tasksDir, id);
    const task = await loadTask(dir).catch((err: unknown) => {
      throw new LmrError({
        code: "judge/no-task",
        file: dir,
        message: `the judge reads task '${id}' at level '${level}' from its folder, and it does not load: ${(err as Error).message}`,
        hint: "point --tasks-dir at the tasks the run graded, or judge at the run's own level (drop --level)",
        cause: err,
      });
    });
    texts.set(id, await readFile(instructionPath(task, level), "utf8"));
  }
  return async (id) => texts.get(id)!;
}

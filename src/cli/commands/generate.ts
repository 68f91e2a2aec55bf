import type { Command } from "commander";
import { resolve } from "node:path";
import { loadChosenTasks } from "../choose-tasks.js";
import { EXIT, LmrError } from "../../core/errors.js";
import { GENERATE_FILES, runGenerate, type GenerateSummary } from "../../generate/run-generate.js";
import { sha256 } from "../../core/hash.js";
import { readApiKey, redactUrl } from "../../llm/client.js";
import { openQueueChat } from "../../queue/chat-queue.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { DEFAULT_RETRY } from "../../llm/retry.js";
import type { TaskSetChoice } from "../../run-folder/index.js";
import { action } from "../action.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { checkKeyEnvName, levelOption, int, num, parseBaseUrl, parsePrice, usage } from "../api-flags.js";
import { addQueue, addTaskSelection } from "../option-groups.js";
import { printJsonFailed, printJsonOk, progress, progressDone } from "../output.js";

interface GenerateFlags {
  baseUrl?: string;
  model?: string;
  apiKeyEnv: string;
  out?: string;
  tasks?: string[];
  tasksDir: string;
  set?: TaskSetChoice;
  samples: string;
  temperature: string;
  topP?: string;
  maxTokens: string;
  seed?: string;
  maxPromptTokens: string;
  jobs: string;
  timeout: string;
  retries: string;
  templates?: string;
  cacheDir?: string;
  price?: string;
  mirror?: string;
  dryRun?: boolean;
  level?: InstructionLevel;
  queue?: string;
  json?: boolean;
}

export function registerGenerate(program: Command): void {
  const cmd = program
    .command("generate")
    .description("the no-agent baseline: prompt a model over an OpenAI-compatible API and write its replies as a submission for lmr eval")
    .option("--base-url <URL>", "the API's base URL, e.g. https://api.openai.com/v1 or http://localhost:8000/v1 (vLLM, llama.cpp, Ollama)")
    .option("--model <NAME>", "model name sent to the API; also the model of the submission rows")
    .option("--api-key-env <VAR>", "name of the environment variable that holds the API key (the key itself is never written anywhere)", "OPENAI_API_KEY")
    .option("--out <DIR>", "generation folder: submissions.jsonl, generate.json (summary), responses/ (reply cache), bundles/; rerun to resume");
  addTaskSelection(cmd)
    .option("-n, --samples <K>", "samples per task (for pass@k)", "1")
    .option("--temperature <T>", "sampling temperature", "0")
    .option("--top-p <P>", "nucleus sampling")
    .option("--max-tokens <N>", "most tokens per reply", "4096")
    .option("--seed <S>", "send seed S+i with sample i (servers that honour it give repeatable, distinct draws)")
    .option("--max-prompt-tokens <N>", "prompt budget (gpt-tokenizer o200k_base); the paper is trimmed by section to fit", "16000")
    .option("-j, --jobs <N>", "requests in flight at once", "4")
    .option("--timeout <S>", "seconds per request before it counts as timed out (and is retried)", "300")
    .option("--retries <N>", "retries per request on 429, 5xx, timeouts, dropped connections and malformed replies", String(DEFAULT_RETRY.attempts - 1))
    .option("--templates <DIR>", "prompt templates folder (system.md, user.md); default templates/prompts/")
    .option("--cache-dir <DIR>", "reply cache (default OUT/responses); share one between runs to reuse replies")
    .option("--price <IN,OUT>", "US dollars per million prompt and completion tokens, for the cost in the summary")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .addOption(levelOption("of the prompts (default paper); generate.json records it and lmr eval grades at it"))
    .option("--dry-run", "print each task's prompt and token counts; no request, nothing written");
  addQueue(cmd, "make the requests (each worker with the API key in its own environment)");
  cmd
    .option("--json", "print generate.json (with --dry-run: the prompts) to stdout")
    .addHelpText(
      "after",
      `
Per task, one prompt (templates/prompts/system.md and user.md): the instruction,
the targets, the masked target files, the manifest's context_files, and the
paper (paper.md of the bundle) trimmed by section to --max-prompt-tokens. Each
of the K samples is one request; the reply's fenced code blocks are searched for
the target definitions (by name, with the masker), which replace the masked ones.
A reply with no usable code becomes an invalid row naming why.
Requests are retried with exponential backoff and jitter, honouring Retry-After.
Every reply is cached under (prompt hash, model, parameters, sample): a rerun
makes no request for what it already has, so an interrupted run resumes.
A request that fails for good (a 4xx other than 429, or retries used up) is
listed in generate.json and no submissions.jsonl is written (exit 3): rerun.
Exit codes: 0 written, 2 bad input (nothing written), 3 the API failed.

Examples:
  $ export OPENAI_API_KEY=…
  $ lmr generate --base-url https://api.openai.com/v1 --model gpt-4o-mini -n 3 --temperature 0.8 --out gen/4o-mini
  $ lmr eval --submissions gen/4o-mini/${GENERATE_FILES.submissions} --out runs/4o-mini
  $ lmr generate --base-url http://localhost:8000/v1 --model qwen --api-key-env VLLM_KEY --tasks-dir examples/tasks --set all --out gen/q -j 16
  $ lmr generate --model gpt-4o --base-url https://api.openai.com/v1 --tasks pref-loss --dry-run
  $ lmr generate --queue redis://queue.internal:6379 --base-url http://vllm.internal:8000/v1 --model qwen --api-key-env VLLM_KEY --out gen/q -j 32`,
    )
    .action(action(runGenerateCommand));
}

async function runGenerateCommand(flags: GenerateFlags): Promise<number> {
  // Every flag is read before anything is built or written.
  const baseUrl = parseBaseUrl(flags.baseUrl);
  if (flags.model === undefined || flags.model.trim() === "")
    throw usage("--model", "--model is required", "the model name the API knows, e.g. --model gpt-4o-mini");
  if (!flags.dryRun && flags.out === undefined) throw usage("--out", "--out is required (unless --dry-run)", "e.g. --out gen/my-model");
  checkKeyEnvName(flags.apiKeyEnv);
  const samples = int(flags.samples, "--samples", 1);
  const temperature = num(flags.temperature, "--temperature", 0, 2);
  const parameters = {
    temperature,
    ...(flags.topP !== undefined ? { top_p: num(flags.topP, "--top-p", 0, 1) } : {}),
    max_tokens: int(flags.maxTokens, "--max-tokens", 1),
    ...(flags.seed !== undefined ? { seed: int(flags.seed, "--seed", 0) } : {}),
  };
  const maxPromptTokens = int(flags.maxPromptTokens, "--max-prompt-tokens", 256);
  const jobs = int(flags.jobs, "--jobs", 1);
  const timeoutS = num(flags.timeout, "--timeout", 0.001, 86_400);
  const retries = int(flags.retries, "--retries", 0);
  const price = flags.price !== undefined ? parsePrice(flags.price) : undefined;
  const connection = flags.queue !== undefined && !flags.dryRun ? parseQueueUrl(flags.queue) : undefined;
  // With --queue the workers hold the key; the coordinator never needs it.
  const apiKey = flags.dryRun || connection ? undefined : readApiKey(flags.apiKeyEnv);
  if (samples > 1 && temperature === 0 && flags.seed === undefined)
    process.stderr.write(`lmr: note: ${samples} samples at temperature 0 are likely the same reply; pass --temperature (and --seed) for pass@k\n`);

  const { tasks } = await loadChosenTasks(flags, "generate");
  const timeoutMs = Math.round(timeoutS * 1000);
  const queued = connection
    ? await openQueueChat({ connection, runId: sha256(`${resolve(flags.out!)}\n${flags.model}`).slice(0, 16), baseUrl, apiKeyEnv: flags.apiKeyEnv, timeoutMs })
    : undefined;
  const outcome = await runGenerate({
    tasks,
    ...(flags.out !== undefined ? { outDir: flags.out } : {}),
    baseUrl,
    model: flags.model,
    ...(apiKey !== undefined ? { apiKey } : {}),
    samples,
    parameters,
    maxPromptTokens,
    jobs,
    timeoutMs,
    ...(queued ? { chat: queued.chat } : {}),
    retry: { ...DEFAULT_RETRY, attempts: retries + 1 },
    ...(flags.templates ? { templatesDir: flags.templates } : {}),
    ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(flags.level ? { level: flags.level } : {}),
    ...(price ? { price } : {}),
    ...((flags.mirror ?? process.env.LMR_MIRROR) ? { mirror: (flags.mirror ?? process.env.LMR_MIRROR)! } : {}),
    onProgress: (p) => progress(`generating ${p.done}/${p.total} — ${p.last.task_id}#${p.last.sample}: ${p.last.status}${p.last.cached ? " (cached)" : ""}`),
  }).finally(() => queued?.close());
  progressDone();
  if (queued && !outcome.dryRun) {
    const st = queued.stats();
    process.stderr.write(
      `lmr: ${st.jobs} request(s) went through the queue at ${connection!.display}; answered by ${
        Object.entries(st.workers)
          .map(([w, n]) => `${w} (${n})`)
          .join(", ") || "no worker"
      }\n`,
    );
  }
  if (outcome.dryRun) {
    if (flags.json)
      printJsonOk("generate", {
        dry_run: true,
        model: flags.model,
        base_url: redactUrl(baseUrl),
        samples,
        max_prompt_tokens: maxPromptTokens,
        tasks: outcome.tasks,
      });
    else {
      for (const t of outcome.tasks) {
        process.stdout.write(
          `===== ${t.task_id}: ${t.prompt_tokens} prompt tokens${t.paper ? `, paper ${t.paper.tokens} tokens (${t.paper.kept}/${t.paper.sections} sections${t.paper.omitted.length > 0 ? `; left out: ${t.paper.omitted.join("; ")}` : ""})` : ", no paper"}; ${t.cached}/${samples} samples cached\n`,
        );
        for (const m of t.messages) process.stdout.write(`----- ${m.role}\n${m.content}\n`);
      }
      const total = outcome.tasks.reduce((a, t) => a + t.prompt_tokens, 0);
      process.stdout.write(`${outcome.tasks.length} tasks, ${total} prompt tokens per sample round (${total * samples} for -n ${samples}); no request made\n`);
    }
    return EXIT.ok;
  }
  const s = outcome.summary;
  if (flags.json) {
    if (s.complete) printJsonOk("generate", s);
    else
      printJsonFailed(
        "generate",
        new LmrError({
          code: "generate/incomplete",
          message: "some requests failed; the samples they were for are missing",
          hint: "run the same command again: what is cached is kept",
        }),
        s,
      );
  } else process.stdout.write(describe(s, flags.out!));
  for (const t of s.tasks)
    for (const r of t.samples) if (r.status === "failed") process.stderr.write(`lmr: ${t.task_id}#${r.sample}: request failed: ${r.reason}\n`);
  return s.complete ? EXIT.ok : EXIT.infra;
}

function describe(s: GenerateSummary, out: string): string {
  const t = s.totals;
  const lines = [
    `${t.samples} samples over ${t.tasks} tasks: ${t.ok} with code, ${t.invalid} invalid, ${t.failed} failed; ${t.requests} requests (${t.retries} retries), ${t.cached} cached; ${t.prompt_tokens} prompt + ${t.completion_tokens} completion tokens${t.cost_usd !== undefined ? `, $${t.cost_usd.toFixed(4)}` : ""}`,
    s.complete
      ? `submissions: ${out}/${GENERATE_FILES.submissions} — grade with: lmr eval --submissions ${out}/${GENERATE_FILES.submissions} --out RUN_DIR`
      : `no submissions written: ${t.failed} request(s) failed for good (see ${out}/${GENERATE_FILES.summary}); rerun the same command to ask again (cached replies are reused)`,
  ];
  return lines.join("\n") + "\n";
}

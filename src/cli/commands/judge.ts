import type { Command } from "commander";
import { formatProblem, LmrError } from "../../core/errors.js";
import { JUDGE_CACHE_DIR, runJudge, type JudgeSummary } from "../../judge/run-judge.js";
import { readApiKey, redactUrl } from "../../llm/client.js";
import { DEFAULT_RETRY } from "../../llm/retry.js";
import { JUDGE_CLASSES, JUDGE_FILE } from "../../run-folder/index.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { action, EXIT } from "../action.js";
import { checkKeyEnvName, int, num, parseBaseUrl, parsePrice, usage, levelOption } from "../api-flags.js";
import { printJsonFailed, printJsonOk, progress, progressDone } from "../output.js";

interface JudgeFlags {
  level?: InstructionLevel;
  tasksDir: string;
  baseUrl?: string;
  model?: string;
  apiKeyEnv: string;
  samples: string;
  temperature: string;
  maxTokens: string;
  seed?: string;
  maxPromptTokens: string;
  jobs: string;
  timeout: string;
  retries: string;
  parseRetries: string;
  structured: boolean;
  templates?: string;
  cacheDir?: string;
  price?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function registerJudge(program: Command): void {
  program
    .command("judge")
    .description(
      "the LLM judge: classify each graded sample's code against the reference (incorrect logic / implementation errors / fully correct), judge.json beside result.json",
    )
    .argument("<RUN_DIR>", "run folder graded by `lmr eval`")
    .option("--base-url <URL>", "the judge API's base URL (OpenAI-compatible), e.g. https://api.openai.com/v1")
    .option("--model <NAME>", "judge model name sent to the API")
    .option("--api-key-env <VAR>", "name of the environment variable that holds the API key (the key itself is never written anywhere)", "OPENAI_API_KEY")
    .option("-n, --samples <N>", "judge calls per sample; the majority class decides and its share is the agreement", "1")
    .option("--temperature <T>", "sampling temperature of the judge", "0")
    .option("--max-tokens <N>", "most tokens per judge reply", "1024")
    .option("--seed <S>", "send seed S+i with judge call i")
    .option("--max-prompt-tokens <N>", "prompt budget (gpt-tokenizer o200k_base); the paper is trimmed by section to fit", "16000")
    .option("-j, --jobs <N>", "requests in flight at once", "4")
    .option("--timeout <S>", "seconds per request before it counts as timed out (and is retried)", "300")
    .option("--retries <N>", "retries per request on 429, 5xx, timeouts, dropped connections and malformed HTTP replies", String(DEFAULT_RETRY.attempts - 1))
    .option("--parse-retries <N>", "asks again, per judge call, after a reply that is not the JSON object schema/judge-reply.schema.json asks for", "2")
    .option("--no-structured", "do not send the reply schema as response_format (for servers that refuse it); replies are still checked against it")
    .option("--templates <DIR>", "judge prompt templates folder (system.md, user.md); default templates/judge/")
    .option("--cache-dir <DIR>", `reply cache (default RUN_DIR/${JUDGE_CACHE_DIR})`)
    .option("--price <IN,OUT>", "US dollars per million prompt and completion tokens, for the cost")
    .addOption(levelOption("the judge reads (default: the run's, which its bundles hold; another level is read from --tasks-dir)"))
    .option("--tasks-dir <DIR>", "folder of the run's tasks, for --level other than the run's", "tasks")
    .option("--dry-run", "print each sample's judge prompt and token count; no request, nothing written")
    .option("--json", "print the judge summary as JSON")
    .addHelpText(
      "after",
      `
Per sample that lmr eval graded with code (RUN_DIR/results/<model>/<task>/<sample>/
submission.diff), the judge sees the instruction, each target's definition in the
reference and in the submission, and the paper trimmed to --max-prompt-tokens
(templates/judge/). It answers one JSON object {"class", "rationale"} with class one
of ${JUDGE_CLASSES.join(", ")}.
With -n N it is asked N times: judge.json keeps every vote's class and rationale,
the majority (a tie goes to the worse class) and the agreement (the majority's share).
A reply that does not parse or does not match the schema is asked again
(--parse-retries) and counted in judge.json; a call that never gets a parsable
reply, or whose request fails for good, is an infra vote, and a sample with no
classified vote is an infra judgement, asked again by the next run. Samples
without code (invalid) get a no-code judge.json and no request; infra results are
not judged. Replies are cached and ${JUDGE_FILE} is written per sample as it is done:
a rerun makes no request for what it has. lmr report then shows the judge's
classes and how they agree with the tests (confusion matrix, Cohen's kappa).
Exit codes: 0 every graded sample judged, 2 bad input, 3 some judgement is infra
or a sample could not be judged (rerun).

Examples:
  $ export OPENAI_API_KEY=…
  $ lmr judge runs/4o-mini --base-url https://api.openai.com/v1 --model gpt-4o -n 3 --temperature 0.7 --seed 1
  $ lmr judge runs/q --base-url http://localhost:8000/v1 --model qwen --api-key-env VLLM_KEY --no-structured -j 16
  $ lmr judge runs/4o-mini --base-url https://api.openai.com/v1 --model gpt-4o --dry-run
  $ lmr report runs/4o-mini --format html --out report.html`,
    )
    .action(action(runJudgeCommand));
}

async function runJudgeCommand(runDir: string, flags: JudgeFlags): Promise<number> {
  const baseUrl = parseBaseUrl(flags.baseUrl);
  if (flags.model === undefined || flags.model.trim() === "") throw usage("--model", "--model is required", "the judge model's name, e.g. --model gpt-4o");
  checkKeyEnvName(flags.apiKeyEnv);
  const votes = int(flags.samples, "--samples", 1);
  const temperature = num(flags.temperature, "--temperature", 0, 2);
  const parameters = {
    temperature,
    max_tokens: int(flags.maxTokens, "--max-tokens", 1),
    ...(flags.seed !== undefined ? { seed: int(flags.seed, "--seed", 0) } : {}),
  };
  const maxPromptTokens = int(flags.maxPromptTokens, "--max-prompt-tokens", 256);
  const jobs = int(flags.jobs, "--jobs", 1);
  const timeoutS = num(flags.timeout, "--timeout", 0.001, 86_400);
  const retries = int(flags.retries, "--retries", 0);
  const parseRetries = int(flags.parseRetries, "--parse-retries", 0);
  const price = flags.price !== undefined ? parsePrice(flags.price) : undefined;
  const apiKey = flags.dryRun ? undefined : readApiKey(flags.apiKeyEnv);
  if (votes > 1 && temperature === 0 && flags.seed === undefined)
    process.stderr.write(
      `lmr: note: ${votes} judge calls at temperature 0 are likely the same reply; pass --temperature (and --seed) for votes that can differ\n`,
    );

  const outcome = await runJudge({
    runDir,
    baseUrl,
    model: flags.model,
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(flags.level ? { level: flags.level, tasksDir: flags.tasksDir } : {}),
    votes,
    parameters,
    maxPromptTokens,
    jobs,
    timeoutMs: Math.round(timeoutS * 1000),
    retry: { ...DEFAULT_RETRY, attempts: retries + 1 },
    parseRetries,
    structured: flags.structured,
    ...(flags.templates ? { templatesDir: flags.templates } : {}),
    ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
    ...(flags.dryRun ? { dryRun: true } : {}),
    ...(price ? { price } : {}),
    onProgress: (p) => progress(`judging ${p.done}/${p.total} — ${p.last.task_id}#${p.last.sample} (${p.last.model}): ${p.last.majority ?? p.last.status}`),
  });
  progressDone();
  for (const p of outcome.dryRun ? outcome.problems : outcome.summary.problems) process.stderr.write(`lmr: warning: ${formatProblem(p)}\n`);
  if (outcome.dryRun) {
    if (flags.json) printJsonOk("judge", { dry_run: true, judge_model: flags.model, base_url: redactUrl(baseUrl), votes, samples: outcome.samples });
    else {
      for (const s of outcome.samples) {
        process.stdout.write(`===== ${s.task_id}#${s.sample} (${s.model}): ${s.prompt_tokens} prompt tokens; ${s.cached_votes}/${votes} votes cached\n`);
        for (const m of s.messages) process.stdout.write(`----- ${m.role}\n${m.content}\n`);
      }
      process.stdout.write(
        `${outcome.samples.length} samples to judge, ${outcome.samples.reduce((a, s) => a + s.prompt_tokens, 0) * votes} prompt tokens for -n ${votes}; no request made\n`,
      );
    }
    return EXIT.ok;
  }
  const s = outcome.summary;
  if (flags.json) {
    if (s.complete) printJsonOk("judge", s);
    else
      printJsonFailed(
        "judge",
        new LmrError({ code: "judge/incomplete", message: "some samples got no vote with a class", hint: "run the same command again to ask for them" }),
        s,
      );
  } else process.stdout.write(describe(s));
  for (const r of s.samples)
    if (r.status === "infra")
      process.stderr.write(`lmr: ${r.task_id}#${r.sample} (${r.model}): no vote got a class; see its ${JUDGE_FILE}, rerun to ask again\n`);
  return s.complete ? EXIT.ok : EXIT.infra;
}

function describe(s: JudgeSummary): string {
  const t = s.totals;
  const classes = JUDGE_CLASSES.map((c) => `${s.samples.filter((r) => r.majority === c).length} ${c}`).join(", ");
  return (
    `${t.samples} samples: ${t.judged} judged (${classes}), ${t.no_code} without code, ${t.infra} infra, ${t.not_graded} not graded${t.unjudgeable > 0 ? `, ${t.unjudgeable} could not be judged` : ""}; ` +
    `${t.reused} kept from an earlier run; ${t.requests} requests, ${t.parse_failures} unparsable replies asked again, ${t.cached_votes} votes cached; ` +
    `${t.prompt_tokens} prompt + ${t.completion_tokens} completion tokens${t.cost_usd !== undefined ? `, $${t.cost_usd.toFixed(4)}` : ""}\n`
  );
}

import type { LimitFunction } from "p-limit";
import type { ResponseCache, ResponseKey } from "../llm/cache.js";
import { classifyApiError, type ChatCall, type ChatRequest } from "../llm/client.js";
import { callWithRetry, type RetryPolicy } from "../llm/retry.js";
import type { JudgeVote } from "../run-folder/index.js";
import { parseVerdict } from "./parse-verdict.js";

/** One vote: from the cache, else asked (with retries; re-asked after a reply that does not parse) inside a -j slot. */
export async function askVote(
  vote: number,
  key: ResponseKey,
  req: ChatRequest,
  cache: ResponseCache,
  chat: ChatCall,
  limit: LimitFunction,
  opts: { retry: RetryPolicy; parseRetries: number },
): Promise<JudgeVote> {
  const hit = await cache.get(key);
  if (hit) {
    const parsed = parseVerdict(hit.reply.text);
    if (parsed.ok)
      return {
        vote,
        class: parsed.class,
        rationale: parsed.rationale,
        cached: true,
        requests: 0,
        parse_failures: 0,
        ...(hit.reply.usage ? { usage: hit.reply.usage } : {}),
      };
  }
  let requests = 0;
  let parseFailures = 0;
  const usage = { prompt_tokens: 0, completion_tokens: 0 };
  const unparsed: string[] = [];
  for (let ask = 0; ask <= opts.parseRetries; ask++) {
    const outcome = await limit(() => callWithRetry(() => chat(req), classifyApiError, opts.retry));
    requests += outcome.attempts.length;
    if (!outcome.ok) {
      const n = outcome.attempts.length;
      return {
        vote,
        error: `request failed: ${outcome.failure.message} (${n} tr${n === 1 ? "y" : "ies"}${outcome.failure.retryable ? "" : "; not retried"})`,
        cached: false,
        requests,
        parse_failures: parseFailures,
        usage,
      };
    }
    const reply = outcome.value;
    usage.prompt_tokens += reply.usage?.prompt_tokens ?? 0;
    usage.completion_tokens += reply.usage?.completion_tokens ?? 0;
    const parsed = parseVerdict(reply.text);
    if (parsed.ok) {
      await cache.put(key, reply, requests);
      return { vote, class: parsed.class, rationale: parsed.rationale, cached: false, requests, parse_failures: parseFailures, usage };
    }
    parseFailures++;
    unparsed.push(parsed.reason);
  }
  return {
    vote,
    error: `${parseFailures} repl${parseFailures === 1 ? "y" : "ies"} did not parse (last: ${unparsed.at(-1)})`,
    cached: false,
    requests,
    parse_failures: parseFailures,
    usage,
  };
}

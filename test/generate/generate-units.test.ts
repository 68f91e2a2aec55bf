import { execa } from "execa";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LmrError } from "../../src/core/errors.js";
import { excerptPaper } from "../../src/generate/paper-excerpt.js";
import { extractCodeBlocks, selectBlocks } from "../../src/generate/parse-reply.js";
import { countMessageTokens, fitPaper, loadTemplates, renderMessages, renderTemplate } from "../../src/generate/prompt.js";
import { runGenerate } from "../../src/generate/run-generate.js";
import { spliceReply } from "../../src/generate/splice-targets.js";
import { hashResponseKey } from "../../src/llm/cache.js";
import { readReply } from "../../src/llm/client.js";
import { callWithRetry, computeDelay, readRetryAfter, DEFAULT_RETRY } from "../../src/llm/retry.js";
import { countTokens } from "../../src/llm/tokenizer.js";
import { loadTask } from "../../src/manifest/load.js";
import { EXAMPLE_TASKS, makeTempDir, pythonBin, removeTempDirs } from "../helpers/git-fixture.js";

afterAll(removeTempDirs);

const MASKED = `import math


class Tree:
    def __init__(self, children):
        self.children = children

    def best(self, k):
        """The k best children."""
        raise NotImplementedError

    def size(self):
        return len(self.children)
`;

async function runPython(source: string, expr: string): Promise<string> {
  const r = await execa(pythonBin(), ["-c", `${source}\nprint(${expr})`], { reject: false, all: true });
  return String(r.all).trim();
}

describe("splicing a reply into the masked file", () => {
  const targets = [{ file: "tree.py", symbol: "Tree.best", mode: "body" as const }];

  it("takes a method given on its own, re-indents it into its class, and brings its imports and helpers", async () => {
    const reply =
      'Sure:\n\n```python\nfrom __future__ import annotations\nimport heapq\n\n\ndef _score(c):\n    return -abs(c)\n\n\ndef best(self, k):\n    """The k best children."""\n    if k < 0:\n        raise ValueError(k)\n    return heapq.nlargest(k, self.children, key=_score)\n```\n';
    const out = await spliceReply(reply, targets, { "tree.py": MASKED });
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.found).toEqual(["Tree.best"]);
    expect(out.helpers).toEqual(["1 import(s)", "_score"]);
    const src = out.files["tree.py"]!;
    expect(src).toContain('    def best(self, k):\n        """The k best children."""\n        if k < 0:\n            raise ValueError(k)\n');
    expect(src.indexOf("import heapq")).toBeLessThan(src.indexOf("class Tree"));
    expect(src).toContain("    def size(self):\n        return len(self.children)");
    expect(await runPython(src, "Tree([3, -1, 5, 0]).best(2), Tree([1]).size()")).toBe("[0, -1] 1");
  });

  it("prefers the qualified definition (the method inside its class) and ignores what else the reply rewrites", async () => {
    const reply =
      "```py\nclass Tree:\n    def __init__(self, children):\n        self.children = list(reversed(children))\n\n    def best(self, k):\n        return sorted(self.children)[-k:]\n```";
    const out = await spliceReply(reply, targets, { "tree.py": MASKED });
    expect(out.ok && out.files["tree.py"]).toContain("        return sorted(self.children)[-k:]");
    expect(out.ok && out.files["tree.py"]).toContain("self.children = children\n");
  });

  it("takes the code of a reply cut at max_tokens when the definition is whole", async () => {
    const out = await spliceReply("```python\ndef best(self, k):\n    return self.children[:k]\n", targets, { "tree.py": MASKED });
    expect(out.ok).toBe(true);
  });

  it("says why a reply is unusable: empty, no code, or code that defines no target", async () => {
    expect(await spliceReply("  ", targets, { "tree.py": MASKED })).toEqual({ ok: false, reason: "the reply is empty" });
    const prose = await spliceReply("from the paper, the best child is the one with the highest value.\nimport nothing", targets, { "tree.py": MASKED });
    expect(prose.ok === false && prose.reason).toMatch(/holds no code/);
    const other = await spliceReply("```python\ndef pick(xs):\n    return xs[0]\n```", targets, { "tree.py": MASKED });
    expect(other.ok === false && other.reason).toMatch(/defines none of the targets \(Tree\.best\); it defines pick/);
    const broken = await spliceReply("```python\ndef best(self, k):\n    return (1 +\n```", targets, { "tree.py": MASKED });
    expect(broken.ok === false && broken.reason).toMatch(/code block 1 does not parse \(.*syntax error at line 2/);
  });
});

describe("reply parsing", () => {
  it("finds fenced blocks (``` and ~~~, labelled or not) and picks the file's language", () => {
    const blocks = extractCodeBlocks("a\n```text\nnot code\n```\n~~~python\ndef f():\n    pass\n~~~\n````\ndef g(): pass\n````\n");
    expect(blocks.map((b) => b.lang)).toEqual(["text", "python", ""]);
    expect(selectBlocks(blocks, ".py").map((b) => b.index)).toEqual([2, 3]);
    expect(selectBlocks([blocks[0]!], ".py").map((b) => b.index)).toEqual([1]);
  });

  it("reads a chat completion, and names what is missing from one that is not", () => {
    expect(readReply({ choices: [{ message: { content: "hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } })).toEqual({
      text: "hi",
      finish_reason: "stop",
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    });
    expect(() => readReply({ choices: [] })).toThrow(/no choices/);
    expect(readReply({ choices: [{ message: { content: null, refusal: "I can't help with that." }, finish_reason: "stop" }] }).text).toBe(
      "I can't help with that.",
    );
    expect(() => readReply({ choices: [{ finish_reason: "stop" }] })).toThrow(/message is missing/);
    expect(() => readReply({ choices: [{ message: { content: 42 } }] })).toThrow(/not a string/);
    expect(() => readReply("<html>")).toThrow(/not a JSON object/);
  });
});

describe("retries", () => {
  it("honours Retry-After in seconds, as an HTTP date, and retry-after-ms; else backs off with jitter", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(readRetryAfter((n) => (n === "retry-after" ? "3" : null), now)).toBe(3000);
    expect(readRetryAfter((n) => (n === "retry-after" ? "Tue, 01 Dec 2026 12:00:05 GMT" : null), now)).toBe(5000);
    expect(readRetryAfter((n) => (n === "retry-after-ms" ? "250" : "9"), now)).toBe(250);
    expect(readRetryAfter(() => null, now)).toBeUndefined();
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 1000, maxDelayMs: 5000 };
    expect(computeDelay(1, {}, { ...policy, random: () => 0 })).toBe(500);
    expect(computeDelay(3, {}, { ...policy, random: () => 0.999 })).toBe(3998);
    expect(computeDelay(9, {}, { ...policy, random: () => 0 })).toBe(2500);
    expect(computeDelay(1, { retryAfterMs: 60_000 }, policy)).toBe(5000);
  });

  it("stops at a failure that is not retryable, and at the last try", async () => {
    const waits: number[] = [];
    const policy = { attempts: 3, baseDelayMs: 10, maxDelayMs: 100, sleep: async (ms: number) => void waits.push(ms), random: () => 0.5 };
    const fatal = await callWithRetry(
      () => Promise.reject(new Error("x")),
      () => ({ kind: "client", message: "HTTP 400", retryable: false }),
      policy,
    );
    expect(fatal.ok === false && fatal.attempts.length).toBe(1);
    let n = 0;
    const flaky = await callWithRetry(
      async () => (++n < 3 ? Promise.reject(new Error("x")) : "done"),
      () => ({ kind: "server", message: "HTTP 502", retryable: true }),
      policy,
    );
    expect(flaky).toMatchObject({ ok: true, value: "done" });
    expect(waits).toEqual([8, 15]);
  });
});

describe("prompts", () => {
  it("trims the paper by section to the budget: the title first, the sections the instruction names, references last", async () => {
    const filler = (topic: string): string => Array.from({ length: 60 }, (_, i) => `${topic} sentence ${i} about unrelated matters.`).join(" ");
    const paper = [
      "# A Paper\n\nAbstract: we study margins.",
      `## 2 Related work\n\n${filler("related")}`,
      `## 3 Method\n\nThe margin loss uses beta and the logistic margin. ${filler("method")}`,
      `## 4 Experiments\n\n${filler("experiments")}`,
      `## References\n\n${filler("citation")}`,
    ].join("\n\n");
    const ex = await excerptPaper(paper, 900, "Implement margin_loss (Section 3): the logistic margin with beta.");
    expect(ex.tokens).toBeLessThanOrEqual(900);
    expect(ex.text).toContain("# A Paper");
    expect(ex.text).toContain("## 3 Method");
    expect(ex.omitted).toContain("## References");
    expect(ex.text).toMatch(/section\(s\) left out to fit the prompt budget/);
    expect(await countTokens(ex.text)).toBe(ex.tokens);
  });

  it("fits as much of the paper as the whole prompt's budget leaves (generate's and judge's prompts), or none", async () => {
    const filler = (topic: string): string => Array.from({ length: 60 }, (_, i) => `${topic} sentence ${i} about unrelated matters.`).join(" ");
    const paper = ["# A Paper\n\nAbstract: we study margins.", `## 2 Method\n\n${filler("method")}`, `## 3 Experiments\n\n${filler("experiments")}`].join(
      "\n\n",
    );
    const render = (p: string) => renderMessages({ system: "You write code.", user: "Task.\n\n{{paper}}" }, { paper: p });
    const bare = await countMessageTokens(render(""));
    const fit = await fitPaper(render, paper, "margin", bare, bare + 700);
    expect(fit).toBeDefined();
    expect(fit!.tokens).toBeLessThanOrEqual(bare + 700);
    expect(fit!.tokens).toBe(await countMessageTokens(fit!.messages));
    expect(fit!.messages[1]!.content).toContain("# A Paper");
    expect(fit!.paper.omitted.length).toBeGreaterThan(0);
    expect(await fitPaper(render, paper, "margin", bare, bare + 10)).toBeUndefined();
  });

  it("fills templates in one pass: a value holding a placeholder stays as it is; an empty section goes", async () => {
    const t = await loadTemplates();
    const text = renderTemplate(t.user, {
      task_id: "t",
      instruction: "write {{paper}} here",
      targets: "- x",
      fence_lang: "python",
      masked_files: "F",
      context_files: "",
      paper: "",
    });
    expect(text).toContain("write {{paper}} here");
    expect(text).not.toContain("# Other files");
    expect(text).not.toContain("# The paper");
    expect(text).not.toMatch(/\{\{[#/]/);
  });

  it("keys cached replies by prompt, model, parameters and sample", () => {
    const k = { prompt_sha256: "a", model: "m", parameters: { temperature: 0.5, max_tokens: 10 }, sample: 0 };
    expect(hashResponseKey(k)).toBe(hashResponseKey({ ...k, parameters: { max_tokens: 10, temperature: 0.5 } }));
    for (const other of [
      { ...k, sample: 1 },
      { ...k, model: "n" },
      { ...k, prompt_sha256: "b" },
      { ...k, parameters: { temperature: 0.6, max_tokens: 10 } },
    ])
      expect(hashResponseKey(other)).not.toBe(hashResponseKey(k));
  });

  it("a prompt over budget without the paper stops the run before any request, and leaves no folder", async () => {
    const out = join(await makeTempDir("gen-budget"), "gen");
    const task = await loadTask(join(EXAMPLE_TASKS, "pref-loss"));
    let calls = 0;
    const err = await runGenerate({
      tasks: [task],
      outDir: out,
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
      samples: 1,
      parameters: { temperature: 0 },
      maxPromptTokens: 500,
      jobs: 1,
      timeoutMs: 1000,
      retry: DEFAULT_RETRY,
      chat: async () => {
        calls++;
        return { text: "", finish_reason: "stop" };
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LmrError);
    expect((err as LmrError).code).toBe("generate/prompt-too-long");
    expect((err as LmrError).message).toMatch(/pref-loss: the prompt needs \d+ tokens without the paper/);
    expect(calls).toBe(0);
    expect(
      await stat(out).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });
});

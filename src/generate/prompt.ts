import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { LmrError } from "../core/errors.js";
import { toolkitPath } from "../core/paths.js";
import type { ChatRequest } from "../llm/client.js";
import { countTokens } from "../llm/tokenizer.js";
import type { MaskMode } from "../manifest/types.js";
import { excerptPaper, type PaperExcerpt } from "./paper-excerpt.js";

/** The prompt templates shipped with lmr: `system.md` and `user.md`. */
const DEFAULT_TEMPLATES_DIR = toolkitPath("templates", "prompts");

export interface PromptTemplates {
  dir: string;
  system: string;
  user: string;
}

/** Placeholders the templates may use; `{{#name}}…{{/name}}` keeps its text only when `name` is not empty. */
const TEMPLATE_VARIABLES = ["task_id", "instruction", "targets", "fence_lang", "masked_files", "context_files", "paper"] as const;
type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

/** A templates folder's system.md and user.md, every placeholder checked against `variables` (lmr judge has its own). */
export async function loadTemplates(dir: string = DEFAULT_TEMPLATES_DIR, variables: readonly string[] = TEMPLATE_VARIABLES): Promise<PromptTemplates> {
  const read = async (name: string): Promise<string> => {
    const file = join(dir, name);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      throw new LmrError({
        code: "generate/template-missing",
        file,
        pointer: "--templates",
        message: `cannot read the prompt template (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        hint: `a templates folder holds system.md and user.md; the default is ${DEFAULT_TEMPLATES_DIR}`,
      });
    }
    for (const m of text.matchAll(/\{\{\s*[#/]?\s*([^}\s]+)\s*\}\}/g)) {
      if (!variables.includes(m[1]!)) {
        throw new LmrError({ code: "generate/template-variable", file, message: `unknown placeholder {{${m[1]}}}`, hint: `known: ${variables.join(", ")}` });
      }
    }
    return text;
  };
  return { dir, system: await read("system.md"), user: await read("user.md") };
}

/**
 * Fills a template in one pass: sections first (on the template's own text),
 * then every `{{name}}` by its value, so text inside a value (code that holds
 * `{{x}}`) is never expanded.
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  const sections = template.replace(/\{\{#\s*(\w+)\s*\}\}([\s\S]*?)\{\{\/\s*\1\s*\}\}/g, (_, name: string, body: string) =>
    (values[name] ?? "") === "" ? "" : body,
  );
  return sections.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => values[name] ?? "");
}

interface PromptTarget {
  file: string;
  symbol: string;
  mode: MaskMode;
}

export interface PromptInput {
  taskId: string;
  /** The bundle's workspace: the masked files, context files, instruction.md, paper.md. */
  workspace: string;
  targets: PromptTarget[];
  contextFiles: string[];
  /** Whole prompt (system + user) in tokens; the paper gets what the rest leaves. */
  maxPromptTokens: number;
  templates: PromptTemplates;
}

export interface BuiltPrompt {
  messages: ChatRequest["messages"];
  /** Counted with the tokenizer (system + user text; the chat format adds a few per message). */
  tokens: number;
  /** The masked target files as the workspace has them: what replies are spliced into. */
  masked: Record<string, string>;
  targets: PromptTarget[];
  paper?: Omit<PaperExcerpt, "text">;
  /** Context files the manifest names that the workspace lacks. */
  missingContext: string[];
}

export const LANG_BY_EXT: Record<string, string> = { ".py": "python", ".ts": "typescript", ".tsx": "tsx", ".js": "javascript", ".jsx": "jsx" };

/** A fence longer than any run of backticks in `text`, so a file that holds ``` stays one block. */
export function fenced(text: string, lang: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${text.endsWith("\n") ? text : `${text}\n`}${fence}`;
}

function describeTarget(t: PromptTarget): string {
  const where = `in \`${t.file}\``;
  switch (t.mode) {
    case "class":
      return `- the class \`${t.symbol}\` ${where}: the bodies of its methods were removed; write the whole class.`;
    case "region":
      return `- \`${t.symbol}\` ${where}: part of its body was removed (marked with a TODO that raises NotImplementedError); write the whole ${t.symbol.includes(".") ? "method" : "function"} with the missing part filled in.`;
    default:
      return `- \`${t.symbol}\` ${where}: its body was removed; write the whole ${t.symbol.includes(".") ? "method" : "function"}.`;
  }
}

/**
 * One task's prompt: the instruction, the targets, the masked files and the
 * manifest's context files whole, and the paper (paper.md, when the bundle
 * has one) trimmed by section to what `maxPromptTokens` leaves. A prompt
 * that does not fit even without the paper is an error naming the task.
 */
export async function buildPrompt(input: PromptInput): Promise<BuiltPrompt> {
  const ws = input.workspace;
  const instruction = (await readFile(join(ws, "instruction.md"), "utf8")).trim();
  const masked: Record<string, string> = {};
  for (const f of [...new Set(input.targets.map((t) => t.file))]) masked[f] = await readFile(join(ws, f), "utf8");
  const context: string[] = [];
  const missingContext: string[] = [];
  for (const f of input.contextFiles) {
    if (f in masked) continue;
    const text = await readFile(join(ws, f), "utf8").catch(() => undefined);
    if (text === undefined) missingContext.push(f);
    else context.push(`## ${f}\n\n${fenced(text, LANG_BY_EXT[extname(f).toLowerCase()] ?? "")}`);
  }
  const paperMd = await readFile(join(ws, "paper.md"), "utf8").catch(() => undefined);
  const firstExt = extname(input.targets[0]?.file ?? "").toLowerCase();
  const values: Record<TemplateVariable, string> = {
    task_id: input.taskId,
    instruction,
    targets: input.targets.map(describeTarget).join("\n"),
    fence_lang: LANG_BY_EXT[firstExt] ?? "",
    masked_files: Object.entries(masked)
      .map(([f, text]) => `## ${f}\n\n${fenced(text, LANG_BY_EXT[extname(f).toLowerCase()] ?? "")}`)
      .join("\n\n"),
    context_files: context.join("\n\n"),
    paper: "",
  };
  const render = (paper: string): ChatRequest["messages"] => renderMessages(input.templates, { ...values, paper });
  const bare = render("");
  const bareTokens = await countMessageTokens(bare);
  if (bareTokens > input.maxPromptTokens) {
    throw new LmrError({
      code: "generate/prompt-too-long",
      pointer: "--max-prompt-tokens",
      message: `${input.taskId}: the prompt needs ${bareTokens} tokens without the paper (instruction, masked files, context files), over the budget of ${input.maxPromptTokens}`,
      hint: `raise --max-prompt-tokens to at least ${bareTokens + 500}, or use other templates (--templates)`,
    });
  }
  if (paperMd === undefined || paperMd.trim() === "") return { messages: bare, tokens: bareTokens, masked, targets: input.targets, missingContext };

  const focus = `${instruction}\n${input.targets.map((t) => t.symbol).join(" ")}`;
  const fit = await fitPaper(render, paperMd, focus, bareTokens, input.maxPromptTokens);
  if (fit) return { messages: fit.messages, tokens: fit.tokens, masked, targets: input.targets, paper: fit.paper, missingContext };
  // No room for any of the paper.
  const sections = (await excerptPaper(paperMd, Number.MAX_SAFE_INTEGER, focus)).sections;
  return {
    messages: bare,
    tokens: bareTokens,
    masked,
    targets: input.targets,
    paper: { tokens: 0, sections, kept: 0, omitted: ["(all: no room left in --max-prompt-tokens)"] },
    missingContext,
  };
}

/** A prompt with as much of the paper as fits. */
interface PaperFit {
  messages: ChatRequest["messages"];
  tokens: number;
  paper: Omit<PaperExcerpt, "text">;
}

/**
 * The paper trimmed by section (those nearest `focus` kept first) to what `maxTokens` leaves
 * after the prompt without it (`bareTokens`), rendered with `render` (lmr generate's and lmr
 * judge's prompts both). The paper section's own words (its heading) and the joins cost a few
 * tokens, so the paper's share shrinks by the overshoot until the whole fits, four tries at most;
 * undefined when not even a little of it fits.
 */
export async function fitPaper(
  render: (paper: string) => ChatRequest["messages"],
  paperMd: string,
  focus: string,
  bareTokens: number,
  maxTokens: number,
): Promise<PaperFit | undefined> {
  let budget = maxTokens - bareTokens - 16;
  for (let tries = 0; tries < 4 && budget > 0; tries++) {
    const excerpt = await excerptPaper(paperMd, budget, focus);
    const messages = render(excerpt.text.trim());
    const tokens = await countMessageTokens(messages);
    if (tokens <= maxTokens) {
      const { text: _text, ...paper } = excerpt;
      return { messages, tokens, paper };
    }
    budget -= tokens - maxTokens + 16;
  }
  return undefined;
}

/** The system and user messages of a prompt: each template rendered with `values`, trimmed (the judge's prompt too). */
export function renderMessages(templates: { system: string; user: string }, values: Record<string, string>): ChatRequest["messages"] {
  return [
    { role: "system", content: renderTemplate(templates.system, values).trim() },
    { role: "user", content: renderTemplate(templates.user, values).trim() },
  ];
}

/** Our token count of a prompt's messages (TOKENIZER_NAME). */
export async function countMessageTokens(messages: ChatRequest["messages"]): Promise<number> {
  return (await Promise.all(messages.map((m) => countTokens(m.content)))).reduce((a, b) => a + b, 0);
}

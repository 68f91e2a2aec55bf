import { readFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { applyPatch, parsePatch } from "diff";
import { BUNDLE_FILES, type BundleTarget } from "../bundle/index.js";
import { LmrError } from "../core/errors.js";
import { toolkitPath } from "../core/paths.js";
import type { PaperExcerpt } from "../generate/paper-excerpt.js";
import { LANG_BY_EXT, countMessageTokens, fenced, fitPaper, renderMessages, type PromptTemplates } from "../generate/prompt.js";
import type { ChatRequest } from "../llm/client.js";
import { maskerFor } from "../mask/registry.js";

export const DEFAULT_JUDGE_TEMPLATES_DIR = toolkitPath("templates", "judge");
export const JUDGE_TEMPLATE_VARIABLES = ["task_id", "instruction", "targets", "reference_code", "submission_code", "paper"] as const;

export interface JudgePromptInput {
  taskId: string;
  /** RUN_DIR/bundles/<task>: workspace/ (masked files, instruction.md, paper.md) and reference/. */
  bundleDir: string;
  targets: BundleTarget[];
  /** The sample's submission.diff (against the masked target files). */
  diff: string;
  /** The instruction the judge reads, where not the bundle's (lmr judge --level other than the run's). */
  instruction?: string;
  maxPromptTokens: number;
  templates: PromptTemplates;
}

export interface JudgePrompt {
  messages: ChatRequest["messages"];
  tokens: number;
  paper?: Omit<PaperExcerpt, "text">;
  /** Targets the submission has no definition of (shown to the judge as such). */
  missing: string[];
}

/** The submitted target files: the masked ones with the diff applied; a diff that does not apply is an error (the run folder is damaged). */
async function applySampleDiff(workspace: string, diff: string, where: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const p of parsePatch(diff)) {
    const path = (p.newFileName ?? p.oldFileName ?? "").replace(/^[ab]\//, "");
    if (path === "" || p.hunks.length === 0) continue;
    const before = files[path] ?? (await readFile(join(workspace, path), "utf8").catch(() => ""));
    const after = applyPatch(before, p, { fuzzFactor: 0 });
    if (after === false)
      throw new LmrError({
        code: "judge/diff-does-not-apply",
        file: where,
        message: `the diff does not apply to ${path} of the run folder's bundle`,
        hint: "the bundle was rebuilt after grading: run lmr eval on the run folder again, then lmr judge",
      });
    files[path] = after;
  }
  return files;
}

/** The whole definition of `symbol` in `source` (a method's, a class's), or undefined when there is none. */
async function extractDefinition(file: string, source: string, symbol: string): Promise<string | undefined> {
  const symbols = await maskerFor(file)
    .listSymbols(source)
    .catch(() => []);
  const sym = symbols.find((s) => s.name === symbol);
  if (!sym?.bytes) return undefined;
  return Buffer.from(source).subarray(sym.bytes.start, sym.bytes.end).toString("utf8");
}

function describeTarget(t: BundleTarget): string {
  const what = t.mode === "class" ? "the class" : t.mode === "region" ? "a part of the body of" : "the body of";
  return `- ${what} \`${t.symbol}\` in \`${t.file}\``;
}

/**
 * One sample's judge prompt: the instruction, the targets, each target's
 * definition in the reference and in the submission, and the paper trimmed
 * by section to what `maxPromptTokens` leaves (as lmr generate trims it).
 */
export async function buildJudgePrompt(input: JudgePromptInput): Promise<JudgePrompt> {
  const ws = join(input.bundleDir, BUNDLE_FILES.workspace);
  const ref = join(input.bundleDir, BUNDLE_FILES.reference);
  const instruction = (input.instruction ?? (await readFile(join(ws, "instruction.md"), "utf8").catch(() => ""))).trim();
  const submitted = await applySampleDiff(ws, input.diff, input.bundleDir);
  const refParts: string[] = [];
  const subParts: string[] = [];
  const missing: string[] = [];
  for (const t of input.targets) {
    const lang = LANG_BY_EXT[extname(t.file).toLowerCase()] ?? "";
    const refSource = await readFile(join(ref, t.file), "utf8");
    const refDef = (await extractDefinition(t.file, refSource, t.symbol)) ?? refSource;
    refParts.push(`## \`${t.symbol}\` (${t.file})\n\n${fenced(refDef, lang)}`);
    const subSource = submitted[t.file] ?? (await readFile(join(ws, t.file), "utf8"));
    const subDef = await extractDefinition(t.file, subSource, t.symbol);
    if (subDef === undefined) missing.push(t.symbol);
    subParts.push(`## \`${t.symbol}\` (${t.file})\n\n${subDef === undefined ? "(the submission has no definition of it)" : fenced(subDef, lang)}`);
  }
  const values = {
    task_id: input.taskId,
    instruction,
    targets: input.targets.map(describeTarget).join("\n"),
    reference_code: refParts.join("\n\n"),
    submission_code: subParts.join("\n\n"),
    paper: "",
  };
  const render = (paper: string): ChatRequest["messages"] => renderMessages(input.templates, { ...values, paper });
  const bare = render("");
  const bareTokens = await countMessageTokens(bare);
  if (bareTokens > input.maxPromptTokens) {
    throw new LmrError({
      code: "judge/prompt-too-long",
      pointer: "--max-prompt-tokens",
      message: `${input.taskId}: the judge prompt needs ${bareTokens} tokens without the paper, over the budget of ${input.maxPromptTokens}`,
      hint: `raise --max-prompt-tokens to at least ${bareTokens + 500}`,
    });
  }
  const paperMd = await readFile(join(ws, "paper.md"), "utf8").catch(() => undefined);
  if (paperMd === undefined || paperMd.trim() === "") return { messages: bare, tokens: bareTokens, missing };
  const fit = await fitPaper(render, paperMd, `${instruction}\n${input.targets.map((t) => t.symbol).join(" ")}`, bareTokens, input.maxPromptTokens);
  return fit ? { messages: fit.messages, tokens: fit.tokens, paper: fit.paper, missing } : { messages: bare, tokens: bareTokens, missing };
}

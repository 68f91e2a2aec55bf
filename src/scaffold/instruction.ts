import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeFileAtomic } from "../core/fs-atomic.js";
import { toolkitPath } from "../core/paths.js";
import { readManifest } from "../manifest/read.js";
import type { ResolvedTask, TaskManifest } from "../manifest/types.js";
import { checkManifest } from "../manifest/validate.js";
import { readPaperPages } from "../paper/extract.js";
import { pinsPdf } from "../paper/pin.js";
import { papersDirFrom, resolvePaperPdf } from "../paper/resolve.js";
import type { Finding } from "../paper/types.js";
import { applyPrepareSteps } from "../prepare/apply.js";
import { materializeUpstream } from "../source/materialize.js";
import type { SourceOptions } from "../source/types.js";
import { describeTargets, pickSearchTerms, selectPassages, type TargetFacts } from "./instruction-context.js";
import { renderTemplate, type TemplateData } from "../core/template.js";

const INSTRUCTION_TEMPLATE = toolkitPath("templates", "instruction.md.tmpl");

export interface InstructionInput {
  manifest: Pick<TaskManifest, "id" | "paper" | "tests" | "context_files">;
  facts: readonly TargetFacts[];
  /** Paper text by page, when available. */
  pages?: Record<string, string>;
  /** Extra search terms for the paper (the author's). */
  keywords?: readonly string[];
}

/** The values the template sees; pure, so it can be tested without files. */
export function buildInstructionData(input: InstructionInput): TemplateData {
  const { manifest: m, facts } = input;
  const keywords = input.keywords ?? [];
  const terms = pickSearchTerms(facts, keywords);
  const passages: Finding[] = input.pages ? selectPassages(input.pages, terms, keywords) : [];
  const names = facts.map((f) => `\`${f.symbol}\``);
  const optional = [...new Set(facts.flatMap((f) => f.params.filter((p) => p.hasDefault).map((p) => `\`${p.name}\``)))];
  const shownTerms = terms.slice(0, 5).map((t) => `"${t}"`);
  return {
    title: facts.length === 1 ? `Implement \`${facts[0]!.symbol}\`` : `Implement ${joinWords(names)}`,
    paper_title: m.paper.title,
    paper_ref: [m.paper.venue ?? String(m.paper.year), m.paper.url].join(", "),
    // `lmr build` puts paper.md (and paper.pdf for a pinned PDF) at the workspace root
    paper_in_workspace: m.paper.text !== undefined || pinsPdf(m.paper),
    paper_pdf: pinsPdf(m.paper),
    targets: facts.map((f) => ({
      symbol: f.symbol,
      file: f.file,
      kind: f.kind,
      mode_body: f.mode === "body",
      mode_region: f.mode === "region",
      mode_class: f.mode === "class",
      signature: f.signature,
      summary: f.summary ?? "",
      kept: f.summary !== undefined ? "signature and docstring are" : "signature is",
      has_methods: f.methods.length > 0,
      methods: f.methods.map((x) => ({ method_signature: x.signature })),
    })),
    passages: passages.map((p) => ({
      page: p.page,
      section: p.heading ?? "",
      equation_list: (p.equations ?? []).map((e) => `(${e})`).join(", "),
      snippet: p.snippet.replace(/"/g, "'"),
    })),
    has_passages: passages.length > 0,
    paper_searched: input.pages !== undefined,
    search_terms: shownTerms.length > 0 ? joinWords(shownTerms, "or") : "the target's name",
    context_files: [...(m.context_files ?? [])],
    optional_params: optional.length > 0 ? joinWords(optional) : "",
    test_count: `${m.tests.files.length} file${m.tests.files.length === 1 ? "" : "s"}`,
    target_names: joinWords(names),
    timeout_per_test_s: m.tests.timeout_per_test_s,
    timeout_total_s: m.tests.timeout_total_s,
  };
}

function joinWords(items: string[], last = "and"): string {
  if (items.length <= 1) return items.join("");
  return `${items.slice(0, -1).join(", ")} ${last} ${items[items.length - 1]}`;
}

/** instruction.md text for a task, from the toolkit's template (or `templatePath`). */
export async function renderInstruction(input: InstructionInput, templatePath = INSTRUCTION_TEMPLATE): Promise<string> {
  const template = await readFile(templatePath, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw new LmrError({
      code: "instruction/template-missing",
      file: templatePath,
      message: `cannot read the instruction template (${err.code ?? err.message})`,
      hint: "reinstall lmr, or pass an existing --template",
    });
  });
  return renderTemplate(template, buildInstructionData(input), templatePath).replace(/\n{3,}/g, "\n\n");
}

export interface ScaffoldInstructionOptions extends SourceOptions {
  force?: boolean;
  /** A PDF or paper.json to search instead of the task's paper (pinned PDF, else paper.text). */
  paper?: string;
  /** Folder of paper PDFs, as for `lmr build` (default $LMR_PAPERS). */
  papers?: string;
  keywords?: string[];
  template?: string;
}

export interface ScaffoldInstructionResult {
  /** Absolute path of the written instruction. */
  file: string;
  targets: number;
  /** Paper passages cited; undefined when no paper text was available. */
  passages?: number;
  /** TODO markers left for the author. */
  todos: number;
}

/**
 * Writes TASK_DIR/<instruction> (usually instruction.md) from the template:
 * the upstream is checked out at its commit and prepared, so signatures and
 * docstrings are those of the tree the agent will see. Refuses to replace an
 * existing file unless `force`.
 */
export async function scaffoldInstruction(taskDir: string, opts: ScaffoldInstructionOptions = {}): Promise<ScaffoldInstructionResult> {
  const raw = await readManifest(taskDir);
  // the instruction is what we are about to write: its absence is not a problem here
  const findings = (await checkManifest(raw)).filter((f) => f.pointer !== "/instruction" || !/does not exist/.test(f.message));
  if (findings.length > 0) {
    const first = findings[0]!;
    throw new LmrError({
      code: "manifest/invalid",
      file: raw.displayPath,
      pointer: first.pointer,
      message: first.message,
      hint: `${first.hint ?? "fix the manifest"}; \`lmr validate ${raw.dir}\` lists every problem`,
    });
  }
  const manifest = raw.data as TaskManifest;
  const out = resolve(raw.dir, manifest.instruction);
  if (!opts.force && (await stat(out).catch(() => undefined))) {
    throw new LmrError({
      code: "instruction/exists",
      file: out,
      message: "the instruction already exists",
      hint: "pass --force to replace it (your edits would be lost)",
    });
  }
  const task: ResolvedTask = { manifest, dir: raw.dir, manifestPath: raw.manifestPath };
  const facts = await withPreparedTree(task, opts, (tree) => describeTargets(tree, manifest.targets, raw.displayPath));
  // the paper the build puts in the workspace, found the same way: papers folder, cache, then paper.text
  const papersDir = papersDirFrom(opts.papers);
  const pinned =
    opts.paper === undefined
      ? await resolvePaperPdf(
          { id: manifest.id, manifestPath: raw.manifestPath, paper: manifest.paper },
          { ...(papersDir !== undefined ? { papersDir } : {}), ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}) },
        )
      : undefined;
  const paperPath = opts.paper ?? pinned?.path ?? (manifest.paper.text !== undefined ? join(raw.dir, manifest.paper.text) : undefined);
  const pages = paperPath !== undefined ? (await readPaperPages(paperPath)).pages : undefined;
  const input: InstructionInput = { manifest, facts, ...(pages ? { pages } : {}), ...(opts.keywords ? { keywords: opts.keywords } : {}) };
  const text = await renderInstruction(input, opts.template);
  await writeFileAtomic(out, text);
  const passages = pages ? buildInstructionData(input).passages : undefined;
  return {
    file: out,
    targets: facts.length,
    ...(Array.isArray(passages) ? { passages: passages.length } : {}),
    todos: (text.match(/TODO\(author\)/g) ?? []).length,
  };
}

/** Runs `use` on the task's upstream, checked out and prepared in a temp folder that is removed afterwards. */
async function withPreparedTree<T>(task: ResolvedTask, opts: SourceOptions, use: (treeDir: string) => Promise<T>): Promise<T> {
  const tmp = await mkdtemp(join(tmpdir(), "lmr-instruction-"));
  try {
    const tree = join(tmp, "tree");
    await materializeUpstream(task, tree, { ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}), ...(opts.mirror ? { mirror: opts.mirror } : {}) });
    if (task.manifest.prepare && task.manifest.prepare.length > 0) await applyPrepareSteps(tree, task.manifest.prepare, { file: task.manifestPath });
    return await use(tree);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

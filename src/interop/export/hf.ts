import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../core/fs-atomic.js";
import { isRedistributable } from "../../manifest/license.js";
import { instructionPath } from "../../manifest/level.js";
import { isUrlUpstream, type Category, type TaskManifest } from "../../manifest/types.js";
import { readTaskSet } from "../../run-folder/index.js";
import { readVerification } from "../../verify/verify-task.js";
import type { BuiltTask } from "./tasks.js";

/*
 * `lmr export --format hf`: a Hugging Face dataset folder. One row per task in
 * data/test.jsonl (every row has every key, null where a task has nothing, so the
 * JSON loader infers one schema), and README.md, the dataset card, whose YAML
 * header is what the Hub reads (licence, configs → data files, tags).
 *
 * What a row never holds: upstream code (masked or not), the reference, the grader's
 * tests and fixtures, or paper text. It says where each lives (upstream URL and commit,
 * the paper's URL) and what lmr verified; grading happens with lmr on the task folders.
 */

const HF_DATA_FILE = "data/test.jsonl";
const HF_SPLIT = "test";

export interface HfRow {
  id: string;
  paper: { title: string; url: string; year: number; venue: string | null; arxiv: string | null };
  category: Category;
  set: string;
  kind: TaskManifest["kind"] | null;
  upstream: { repo: string | null; commit: string | null; license: string; redistributable: boolean };
  targets: { file: string; symbol: string; mode: string }[];
  context_files: string[];
  /** The paper-level instruction (instruction.md). */
  instruction_paper: string;
  /** The hinted instruction (hints.md), or null when the task has none. */
  instruction_hinted: string | null;
  environment: { python: string; base: string | null; system_packages: string[]; requirements: string[]; gpu: boolean; network: boolean };
  tests: { runner: string; count: number | null; timeout_per_test_s: number; timeout_total_s: number };
  verification: {
    ok: boolean | null;
    verified_at: string | null;
    toolkit_version: string | null;
    mutants_kill_ratio: number | null;
    alternatives: number | null;
    /** The record is of this very grader and workspace (its input hashes equal the build's). */
    current: boolean;
  };
  hashes: { task: string; workspace: string; reference: string; grader: string };
}

/** The row for one built task (nothing of the upstream, the reference, the grader or the paper's text). */
export async function makeHfRow(built: BuiltTask): Promise<HfRow> {
  const { task, bundle } = built;
  const m = task.manifest;
  const record = await readVerification(task).catch(() => undefined);
  const steps = record?.steps as Record<string, Record<string, unknown> | undefined> | undefined;
  const tests = steps?.reference?.tests;
  const alternatives = steps?.alternatives?.alternatives;
  const ratio = steps?.mutants?.kill_ratio;
  const inputs = record?.inputs as { grader?: string; workspace?: string } | undefined;
  return {
    id: m.id,
    paper: { title: m.paper.title, url: m.paper.url, year: m.paper.year, venue: m.paper.venue ?? null, arxiv: m.paper.arxiv ?? null },
    category: m.category,
    set: readTaskSet(m),
    kind: m.kind ?? null,
    // a local upstream's path means nothing on another machine
    upstream: {
      repo: isUrlUpstream(m.upstream) ? m.upstream.repo : null,
      commit: bundle.upstream.commit,
      license: m.upstream.license,
      redistributable: isRedistributable(m.upstream.license),
    },
    targets: m.targets.map((t) => ({ file: t.file, symbol: t.symbol, mode: t.mode })),
    context_files: [...(m.context_files ?? [])],
    instruction_paper: await readFile(instructionPath(task, "paper"), "utf8"),
    instruction_hinted: m.hints !== undefined ? await readFile(instructionPath(task, "hinted"), "utf8") : null,
    environment: {
      python: m.environment.python,
      base: m.environment.base ?? null,
      system_packages: [...(m.environment.system_packages ?? [])],
      requirements: [...m.environment.requirements],
      gpu: m.environment.gpu,
      network: m.environment.network,
    },
    tests: {
      runner: m.tests.runner ?? "pytest",
      count: Array.isArray(tests) ? tests.length : null,
      timeout_per_test_s: m.tests.timeout_per_test_s,
      timeout_total_s: m.tests.timeout_total_s,
    },
    verification: {
      ok: typeof record?.ok === "boolean" ? record.ok : null,
      verified_at: typeof record?.verified_at === "string" ? record.verified_at : null,
      toolkit_version: typeof record?.toolkit_version === "string" ? record.toolkit_version : null,
      mutants_kill_ratio: typeof ratio === "number" ? ratio : null,
      alternatives: Array.isArray(alternatives) ? alternatives.length : null,
      current: inputs?.grader === bundle.hashes.grader && inputs?.workspace === bundle.hashes.workspace,
    },
    hashes: { ...bundle.hashes },
  };
}

/** Writes OUT/data/test.jsonl and OUT/README.md (each atomically); returns the files written. */
export async function writeHfDataset(outDir: string, rows: HfRow[]): Promise<string[]> {
  const data = join(outDir, HF_DATA_FILE);
  const card = join(outDir, "README.md");
  await mkdir(join(outDir, "data"), { recursive: true });
  await writeFileAtomic(data, rows.map((r) => JSON.stringify(r)).join("\n") + (rows.length > 0 ? "\n" : ""));
  await writeFileAtomic(card, renderDatasetCard(rows));
  return [data, card];
}

/** YAML scalars as JSON strings: JSON is YAML 1.2, and a JSON string needs no further quoting. */
const q = (s: string): string => JSON.stringify(s);

function sizeCategory(n: number): string {
  return n < 1000 ? "n<1K" : n < 10000 ? "1K<n<10K" : "10K<n<100K";
}

function bibKey(row: HfRow): string {
  const word =
    row.paper.title
      .toLowerCase()
      .match(/[a-z0-9]+/g)
      ?.find((w) => w.length > 3) ?? "paper";
  return `${row.id.replace(/[^A-Za-z0-9]+/g, "_")}_${word}${row.paper.year}`;
}

function bibtex(row: HfRow): string {
  const fields = [
    `  title = {${row.paper.title.replace(/[{}]/g, "")}}`,
    `  year = {${row.paper.year}}`,
    `  url = {${row.paper.url}}`,
    ...(row.paper.venue ? [`  note = {${row.paper.venue.replace(/[{}]/g, "")}}`] : []),
    ...(row.paper.arxiv ? [`  eprint = {${row.paper.arxiv}}`, "  archivePrefix = {arXiv}"] : []),
  ];
  return `@misc{${bibKey(row)},\n${fields.join(",\n")}\n}`;
}

const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** README.md: the YAML header the Hub reads, then what the data is, how to grade it, licences and citations. */
function renderDatasetCard(rows: HfRow[]): string {
  const licenses = [...new Set(rows.map((r) => r.upstream.license))].sort();
  const yaml = [
    "---",
    "license: other",
    `license_name: ${q("per-task-upstream")}`,
    `pretty_name: ${q("lmr paper-code reproduction tasks")}`,
    "language:",
    "- en",
    "tags:",
    "- code",
    "- benchmark",
    "- research-reproduction",
    "- lmr",
    "task_categories:",
    "- text-generation",
    "size_categories:",
    `- ${sizeCategory(rows.length)}`,
    "configs:",
    "- config_name: default",
    "  data_files:",
    `  - split: ${HF_SPLIT}`,
    `    path: ${q(HF_DATA_FILE)}`,
    "---",
  ];
  const table = [
    "| id | paper | year | category | set | upstream | licence |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${cell(r.id)} | [${cell(r.paper.title)}](${r.paper.url}) | ${r.paper.year} | ${cell(r.category)} | ${r.set} | ${r.upstream.repo ? `${cell(r.upstream.repo)}${r.upstream.commit ? ` @ \`${r.upstream.commit.slice(0, 12)}\`` : ""}` : "(local)"} | ${cell(r.upstream.license)}${r.upstream.redistributable ? "" : " (not redistributable)"} |`,
    ),
  ];
  const body = [
    "",
    "# lmr paper-code reproduction tasks",
    "",
    `${rows.length} task${rows.length === 1 ? "" : "s"}, written by \`lmr export --format hf\`. Each task is a paper, an upstream`,
    "repository pinned at a commit, target functions masked in it, an instruction (at two levels: `paper`",
    "gives the contract and points to the paper, `hinted` also spells out the method) and hidden tests that",
    "lmr verified against the reference.",
    "",
    "## What is here, and what is not",
    "",
    `\`${HF_DATA_FILE}\` (split \`${HF_SPLIT}\`): one row per task with its id, paper (title, URL, year, venue, arXiv id),`,
    "category, set, kind, upstream (repository URL, commit, licence), targets, both instruction levels, the",
    "environment (Python, Debian base, system packages, pip requirements, GPU, network), the test runner, the",
    "number of verified tests and time limits, a verification summary and the content hashes of the built task.",
    "",
    "Not here, on purpose: no upstream code (masked or not), no reference solution, no hidden test or fixture",
    "and no paper text. The tests stay hidden so that the benchmark keeps measuring; the code and the paper stay",
    "with their owners. A row says where each lives: `upstream.repo` at `upstream.commit`, `paper.url`.",
    "",
    "```python",
    "from datasets import load_dataset",
    "",
    `ds = load_dataset("path/to/this/folder", split="${HF_SPLIT}")`,
    'print(ds[0]["id"], ds[0]["targets"])',
    "```",
    "",
    "## How to grade",
    "",
    "Grading needs the task folders (tests, fixtures, verification records), which this dataset does not",
    "carry. With lmr and its task folders:",
    "",
    "```sh",
    "lmr build --tasks-dir tasks --out bundles/          # masked workspaces, from the pinned upstreams",
    "lmr eval --submissions preds.jsonl --out runs/r1  # one {task_id, model, patch} row per sample",
    "lmr report runs/r1 --format md",
    "```",
    "",
    "Rows of `preds.jsonl` name a task by this dataset's `id`. The same tasks run under Harbor",
    "(`lmr export --format harbor`) and Inspect AI (`lmr export --format inspect`): see lmr's docs/harnesses.md.",
    "",
    "## Tasks and licences",
    "",
    "This dataset's rows are metadata and instructions written by the lmr authors. Each upstream repository keeps",
    "its own licence; a task whose upstream has no licence that allows redistribution is marked",
    "`upstream.redistributable: false`, and its code must be fetched from its owner, never re-published.",
    `Upstream licences present: ${licenses.map((l) => `\`${l}\``).join(", ") || "none"}.`,
    "",
    ...table,
    "",
    "## Citation",
    "",
    "The benchmark these tasks re-author:",
    "",
    "```bibtex",
    "@misc{lmrbench2025,",
    "  title = {LMR-BENCH: Evaluating LLM Agent's Ability on Reproducing Language Modeling Research},",
    "  year = {2025},",
    "  url = {https://arxiv.org/abs/2506.17335}",
    "}",
    "```",
    "",
    "And each task's paper:",
    "",
    "```bibtex",
    [...new Map(rows.map((r) => [r.paper.url, bibtex(r)])).values()].join("\n\n"),
    "```",
    "",
  ];
  return [...yaml, ...body].join("\n");
}

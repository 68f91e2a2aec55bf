import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BUNDLE_FILES } from "../../bundle/types.js";
import { LmrError } from "../../core/errors.js";
import { readToolkitPython } from "../../env/images.js";
import { candidateRequest } from "../../runner/candidate.js";
import { writeDirAtomic, writeJsonAtomic, writeFileAtomic } from "../../core/fs-atomic.js";
import { isRedistributable } from "../../manifest/license.js";
import { isUrlUpstream, type ResolvedTask, type Target } from "../../manifest/types.js";
import type { BuiltTask } from "./tasks.js";
import { pathExists } from "../../core/paths.js";

export interface LmrBenchExport {
  /** Absolute folder written: OUT/<n>-<id>. */
  folder: string;
  warnings: string[];
}

/**
 * Writes one built task in LMR-Bench's layout, atomically:
 * OUT/<n>-<id>/{<repo>/ (the masked workspace, grader tests in <repo>/unit_test/),
 * golden_files/ (reference files), info.json, Dockerfile}. info.json keeps
 * LMR-Bench's keys plus an `lmr` block (task id, commit, licence, prepare,
 * environment) and `lmr_target` per implementation, so `lmr import` reads the
 * task back exactly.
 */
export async function exportLmrBenchTask(outDir: string, built: BuiltTask): Promise<LmrBenchExport> {
  const { task, bundle, n } = built;
  const m = task.manifest;
  const folderName = `${n}-${m.id}`;
  const folder = join(resolve(outDir), folderName);
  const repo = repoFolderName(task);
  const workspace = join(bundle.dir, BUNDLE_FILES.workspace);
  const testsDir = (await pathExists(join(workspace, "unit_test"))) ? "lmr_unit_test" : "unit_test";
  const golden = goldenNames(m.targets.map((t) => t.file));
  const instruction = await readFile(join(task.dir, m.instruction), "utf8");
  const firstTest = `${testsDir}/${m.tests.files[0]}`;

  const info = {
    instance_id: n,
    paper_name: m.paper.title,
    paper_url: m.paper.url,
    year: m.paper.year,
    ...(m.paper.venue !== undefined ? { venue: m.paper.venue } : {}),
    folder_name: folderName,
    repo_url: isUrlUpstream(m.upstream) ? m.upstream.repo : pathToFileURL(resolve(task.dir, m.upstream.path)).href,
    repo_folder_name: repo,
    commit: bundle.upstream.commit,
    license: m.upstream.license,
    implementations: m.targets.map((t, i) => ({
      index: i + 1,
      instruction,
      category: m.category,
      goal_file: t.file,
      goal_function: t.mode === "class" ? "" : lastPart(t.symbol),
      class_name: t.mode === "class" ? t.symbol : t.symbol.split(".").slice(0, -1).join("."),
      golden_file: `golden_files/${golden.get(t.file)}`,
      retrieval_context: m.context_files ?? [],
      unit_test_file: firstTest,
      lmr_target: t satisfies Target,
    })),
    lmr: {
      task_id: m.id,
      ...(m.prepare ? { prepare: m.prepare } : {}),
      environment: m.environment,
      unit_test_files: m.tests.files.map((f) => `${testsDir}/${f}`),
    },
  };

  await writeDirAtomic(folder, async (tmp) => {
    await cp(workspace, join(tmp, repo), { recursive: true, verbatimSymlinks: true });
    await cp(join(bundle.dir, BUNDLE_FILES.grader), join(tmp, repo, testsDir), { recursive: true });
    await writeBridge(join(tmp, repo, testsDir), task);
    for (const [file, name] of golden) await cp(join(bundle.dir, BUNDLE_FILES.reference, file), join(tmp, "golden_files", name));
    await writeJsonAtomic(join(tmp, "info.json"), info);
    await writeFileAtomic(join(tmp, "Dockerfile"), renderDockerfile(task, repo, testsDir));
  });

  const warnings: string[] = [];
  if (!isRedistributable(m.upstream.license)) {
    warnings.push(
      `${m.id}: upstream licence ${m.upstream.license} does not allow redistribution; ${folderName}/ holds upstream code (the repository and golden_files/): keep it private`,
    );
  }
  return { folder, warnings };
}

/** Where the exported tests folder keeps lmr's bridge, and the candidate's files. */
const EXPORT_BRIDGE = "_lmr";
const EXPORT_SUPPORT = "_lmr_candidate";

/**
 * lmr's tests call the code under test through the bridge, in a candidate process of their
 * own. An exported folder keeps that under plain `pytest`: it carries the bridge (and the
 * record codec it speaks) and a conftest.py that starts the candidate on the repository
 * before the tests run, with the task's candidate set-up and files, and stops it after.
 */
async function writeBridge(testsRoot: string, task: ResolvedTask): Promise<void> {
  const m = task.manifest;
  if (await pathExists(join(testsRoot, "conftest.py"))) {
    throw new LmrError({
      code: "export/conftest-clash",
      message: `${m.id}: the grader has a conftest.py at its top level, where the export's bridge conftest goes; move it into the tests' folder (e.g. tests/conftest.py) in task.json's tests.files`,
    });
  }
  for (const [name, content] of Object.entries(await readToolkitPython())) {
    const [, pkg, ...rest] = name.split("/");
    if (pkg === "lmr_harness") continue;
    const to = join(testsRoot, EXPORT_BRIDGE, pkg!, ...rest);
    await mkdir(dirname(to), { recursive: true });
    await writeFile(to, content);
  }
  const c = candidateRequest(m);
  for (const rel of c.candidateFiles ?? []) {
    await mkdir(join(testsRoot, EXPORT_SUPPORT), { recursive: true });
    await cp(join(testsRoot, rel), join(testsRoot, EXPORT_SUPPORT, basename(rel)));
  }
  await writeFileAtomic(join(testsRoot, "conftest.py"), renderBridgeConftest(m.id, c.candidateFiles !== undefined, c.candidateSetup, c.warmModules ?? []));
}

function renderBridgeConftest(id: string, support: boolean, setup: string | undefined, warm: string[]): string {
  return [
    `"""Written by lmr export for task ${id}: the tests reach the code under test through lmr's`,
    "bridge, in a candidate process of its own; this starts that process on the repository above",
    '(with the task\'s candidate set-up) before the tests run and stops it after."""',
    "import os",
    "import sys",
    "",
    "_HERE = os.path.dirname(os.path.abspath(__file__))",
    `sys.path.insert(0, os.path.join(_HERE, ${JSON.stringify(EXPORT_BRIDGE)}))`,
    "from lmr_bridge import by_hand  # noqa: E402",
    "",
    "_candidate = None",
    "",
    "",
    "def pytest_configure(config):",
    "    global _candidate",
    "    _candidate = by_hand.start(",
    "        os.path.dirname(_HERE),",
    `        support=${support ? `os.path.join(_HERE, ${JSON.stringify(EXPORT_SUPPORT)})` : "None"},`,
    `        setup=${setup ? `os.path.join(_HERE, ${JSON.stringify(setup)})` : "None"},`,
    `        warm=${JSON.stringify(warm)},`,
    "    )",
    "",
    "",
    "def pytest_unconfigure(config):",
    "    by_hand.stop(_candidate)",
    "",
  ].join("\n");
}

/** python:<version>-slim, the requirements and pytest; only the repository folder goes into the image (the golden files stay out). */
function renderDockerfile(task: ResolvedTask, repo: string, testsDir: string): string {
  const env = task.manifest.environment;
  const pip = ["python", "-m", "pip", "install", "--no-cache-dir", "pytest", ...env.requirements];
  return [
    `# Generated by lmr export for task ${task.manifest.id}: the masked repository and its grader tests.`,
    ...(env.gpu ? ["# The task needs a GPU: use a CUDA base image instead of python:*-slim."] : []),
    `FROM python:${env.python}-slim`,
    `WORKDIR /workspace/${repo}`,
    `COPY ${JSON.stringify([`${repo}/`, `/workspace/${repo}/`])}`,
    `RUN ${JSON.stringify(pip)}`,
    `ENV PYTHONPATH=/workspace/${repo} PYTHONDONTWRITEBYTECODE=1`,
    `CMD ${JSON.stringify(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", testsDir])}`,
    "",
  ].join("\n");
}

/** The repository folder's name: the URL's last segment, or the local upstream folder's name. */
function repoFolderName(task: ResolvedTask): string {
  const up = task.manifest.upstream;
  const raw = isUrlUpstream(up)
    ? (up.repo
        .replace(/\.git$/, "")
        .replace(/\/+$/, "")
        .split(/[/:]/)
        .pop() ?? "")
    : basename(resolve(task.dir, up.path));
  const name = raw.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[.-]+/, "");
  return name === "" || name === "golden_files" ? "repo" : name;
}

/** golden_files/<stem>_golden<ext> per target file; the full path flattened when two stems clash. */
function goldenNames(files: string[]): Map<string, string> {
  const unique = [...new Set(files)];
  const stems = unique.map((f) => basename(f, extname(f)));
  const out = new Map<string, string>();
  unique.forEach((f, i) => {
    const clash = stems.filter((s) => s === stems[i]).length > 1;
    const stem = clash ? f.slice(0, f.length - extname(f).length).replace(/\//g, "__") : stems[i]!;
    out.set(f, `${stem}_golden${extname(f)}`);
  });
  return out;
}

function lastPart(symbol: string): string {
  return symbol.split(".").pop() ?? symbol;
}

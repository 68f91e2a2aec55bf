import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { checkRelativePath } from "../../core/paths.js";
import { SCHEMA_VERSION, type Category, type Environment, type TaskManifest, type Target } from "../../manifest/types.js";
import { readInfo, type InfoImplementation, type InfoPaper, type Report } from "./info.js";
import { checkSymbol, isFile, locateRepoFolder, normalizeRepoPath, readLicense, readRequirements, readSignature } from "./repo.js";
import { deriveTaskId, isTaskId, testFileFor } from "../../manifest/task-id.js";
import { renderPlaceholderInstruction, renderPlaceholderTest, type TargetSignature } from "./task-placeholders.js";
import type { ImportOptions, RepoFacts, SkippedTask } from "../types.js";

/** One task to write: its manifest and the files of its folder. */
export interface TaskPlan {
  id: string;
  /** The implementation pointer the task came from (the first, for grouped ones). */
  pointer: string;
  manifest: TaskManifest;
  files: Record<string, string>;
}

interface Resolved {
  impl: InfoImplementation;
  target: Target;
  category: Category;
  context: string[];
}

const DEFAULT_PYTHON = "3.11";

/**
 * Turns one LMR-Bench paper folder into task plans, reporting every defect.
 * `takenIds` holds ids already planned in this import (and gets the new ones).
 */
export async function planFolder(
  folderDir: string,
  opts: ImportOptions,
  takenIds: Set<string>,
  report: Report,
  skip: (s: Omit<SkippedTask, "folder">) => void,
): Promise<TaskPlan[]> {
  const folderName = basename(folderDir);
  let data: unknown;
  try {
    data = JSON.parse((await readFile(join(folderDir, "info.json"), "utf8")).replace(/^\uFEFF/, ""));
  } catch (err) {
    report("", `info.json is not valid JSON (${(err as Error).message})`, false);
    skip({ reason: "info.json unreadable" });
    return [];
  }
  const info = readInfo(data, report);
  const repoFolder = await locateRepoFolder(folderDir, info.repoFolder, info.repoUrl, report);
  const facts = lookupFacts(info, opts.commitMap ?? {});
  const paper = resolvePaper(info, facts, report);
  const commit = resolveCommit(info, facts, report);
  if (repoFolder === undefined || paper === undefined || commit === undefined || info.repoUrl === undefined || info.implementations.length === 0) {
    skip({ reason: "the folder lacks what every task needs (see its unrepaired defects)" });
    return [];
  }
  const repoDir = join(folderDir, repoFolder);
  const license = await resolveLicense(info, facts, repoDir, repoFolder, report);
  const environment = info.lmr?.environment ?? (await defaultEnvironment(repoDir, repoFolder, report));

  const resolved: Resolved[] = [];
  for (const impl of info.implementations) {
    const r = await resolveImplementation(impl, folderDir, repoDir, repoFolder, opts, report);
    if (r) resolved.push(r);
    else skip({ reason: `${impl.pointer} cannot become a target (see its unrepaired defects)` });
  }

  const groups = groupByTask(resolved, info, folderName, takenIds, report);
  const plans: TaskPlan[] = [];
  for (const [id, members] of groups) {
    const targets = members.map((m) => m.target);
    const signatures: TargetSignature[] = [];
    for (const target of targets) {
      const signature = await readSignature(repoDir, target.file, target.symbol);
      signatures.push(signature === undefined ? { target } : { target, signature });
    }
    const context = [...new Set(members.flatMap((m) => m.context))].filter((c) => !targets.some((t) => t.file === c));
    const notes = [
      `Imported from LMR-Bench folder "${folderName}" (${members.map((m) => m.impl.pointer).join(", ")}) by lmr import.`,
      info.branch !== undefined ? `repo_url named branch "${info.branch}".` : "",
      "The instruction and the grader tests are placeholders: write them before `lmr verify`.",
    ].filter((s) => s !== "");
    const manifest: TaskManifest = {
      schema_version: SCHEMA_VERSION,
      id,
      paper,
      category: members[0]!.category,
      upstream: { repo: info.repoUrl, commit, license },
      ...(info.lmr?.prepare && info.lmr.prepare.length > 0 ? { prepare: info.lmr.prepare } : {}),
      targets,
      instruction: "instruction.md",
      tests: { files: [testFileFor(id)], timeout_per_test_s: 60, timeout_total_s: 600 },
      environment,
      ...(context.length > 0 ? { context_files: context } : {}),
      provenance: { author: opts.author ?? "lmr import", created: (opts.now?.() ?? new Date()).toISOString().slice(0, 10), notes: notes.join(" ") },
    };
    plans.push({
      id,
      pointer: members[0]!.impl.pointer,
      manifest,
      files: {
        "instruction.md": renderPlaceholderInstruction(id, folderName, signatures),
        [testFileFor(id)]: renderPlaceholderTest(id, targets),
      },
    });
  }
  return plans;
}

function lookupFacts(info: InfoPaper, map: Record<string, RepoFacts>): RepoFacts | undefined {
  const keys = [info.repoUrl, info.rawRepoUrl, info.repoUrl && `${info.repoUrl}.git`].filter((k): k is string => k !== undefined);
  for (const k of keys) if (map[k]) return map[k];
  const lower = new Map(Object.entries(map).map(([k, v]) => [k.toLowerCase().replace(/(\.git)?\/*$/, ""), v]));
  return info.repoUrl !== undefined ? lower.get(info.repoUrl.toLowerCase()) : undefined;
}

function resolvePaper(info: InfoPaper, facts: RepoFacts | undefined, report: Report): TaskManifest["paper"] | undefined {
  const url = info.url ?? facts?.paper_url;
  const year = info.year ?? facts?.year;
  if (url === undefined) report("/paper_url", 'paper_url missing: add it to info.json or to the --commit-map entry ({"commit": ..., "paper_url": ...})', false);
  if (year === undefined) report("/year", 'year missing: add it to info.json or to the --commit-map entry ({"commit": ..., "year": ...})', false);
  if (info.title === undefined || url === undefined || year === undefined) return undefined;
  return { title: info.title, url, year, ...(info.venue !== undefined ? { venue: info.venue } : {}) };
}

function resolveCommit(info: InfoPaper, facts: RepoFacts | undefined, report: Report): string | undefined {
  if (info.commit !== undefined) {
    if (/^[0-9a-f]{40}$/.test(info.commit)) return info.commit;
    report("/commit", `commit '${info.commit}' is not a full 40-hex SHA`, false);
    return undefined;
  }
  if (facts) return facts.commit;
  if (info.repoUrl !== undefined) {
    report(
      "/repo_url",
      `no commit known for ${info.repoUrl}: LMR-Bench does not pin commits; add {"${info.repoUrl}": "<40-hex sha>"} to --commit-map FILE`,
      false,
    );
  }
  return undefined;
}

async function resolveLicense(info: InfoPaper, facts: RepoFacts | undefined, repoDir: string, repoFolder: string, report: Report): Promise<string> {
  const given = info.license ?? facts?.license;
  if (given !== undefined) return given;
  const found = await readLicense(repoDir);
  if (found.license !== undefined) return found.license;
  report(
    "/repo_folder_name",
    found.file !== undefined
      ? `licence file ${repoFolder}/${found.file} not recognised; upstream.license set to NOASSERTION (check it by hand)`
      : `no licence file in ${repoFolder}/; upstream.license set to NOASSERTION (the code may be referenced, never redistributed)`,
    true,
  );
  return "NOASSERTION";
}

async function defaultEnvironment(repoDir: string, repoFolder: string, report: Report): Promise<Environment> {
  const { requirements, skipped } = await readRequirements(repoDir);
  if (skipped.length > 0)
    report(
      "/repo_folder_name",
      `${repoFolder}/requirements.txt: ${skipped.length} line(s) that are not plain specifiers left out (${skipped.slice(0, 3).join("; ")})`,
      true,
    );
  return { python: DEFAULT_PYTHON, requirements, gpu: false, network: false };
}

async function resolveImplementation(
  impl: InfoImplementation,
  folderDir: string,
  repoDir: string,
  repoFolder: string,
  opts: ImportOptions,
  report: Report,
): Promise<Resolved | undefined> {
  const p = impl.pointer;
  let category = impl.category;
  if (category === undefined) {
    const what = impl.unknownCategory !== undefined ? `category '${impl.unknownCategory}' is not one of the nine` : "category missing";
    if (opts.defaultCategory !== undefined) {
      category = opts.defaultCategory;
      report(`${p}/category`, `${what}; set to '${category}' (--default-category)`, true);
    } else report(`${p}/category`, `${what}; give --default-category or fix info.json`, false);
  }

  let target: Target | undefined;
  if (impl.lmrTarget) {
    target = { ...impl.lmrTarget };
  } else if (impl.goalFile !== undefined && impl.goalFunction !== undefined) {
    const { path, strippedPrefix } = normalizeRepoPath(impl.goalFile, repoFolder);
    if (strippedPrefix) report(`${p}/goal_file`, `'${impl.goalFile}' starts with the repository folder; read as '${path}'`, true);
    target = { file: path, symbol: impl.className !== undefined ? `${impl.className}.${impl.goalFunction}` : impl.goalFunction, mode: "body" };
  }
  await checkUnitTest(impl, folderDir, repoDir, repoFolder, report);
  if (target === undefined || category === undefined) return undefined;

  const fileKey = impl.lmrTarget ? `${p}/lmr_target/file` : `${p}/goal_file`;
  const why = checkRelativePath(target.file);
  if (why !== undefined || !(await isFile(join(repoDir, target.file)))) {
    report(fileKey, why !== undefined ? `'${target.file}': ${why}` : `'${target.file}' does not exist in ${repoFolder}/`, false);
    return undefined;
  }
  const sym = await checkSymbol(repoDir, target.file, target.symbol, target.line);
  const symKey = impl.lmrTarget ? `${p}/lmr_target/symbol` : `${p}/goal_function`;
  if (!sym.ok) {
    report(symKey, sym.message, false);
    return undefined;
  }
  if (sym.repaired !== undefined) {
    report(`${p}/class_name`, sym.repaired, true);
    target.symbol = sym.symbol;
  }

  const context: string[] = [];
  for (const r of impl.retrieval) {
    const { path } = normalizeRepoPath(r.value, repoFolder);
    if (checkRelativePath(path) === undefined && (await isFile(join(repoDir, path)))) context.push(path);
    else report(r.pointer, `context file '${r.value}' does not exist in ${repoFolder}/; dropped`, true);
  }
  return { impl, target, category, context };
}

/** Unit test paths are relative to the repository folder (newer layout) or the paper folder (older). */
async function checkUnitTest(impl: InfoImplementation, folderDir: string, repoDir: string, repoFolder: string, report: Report): Promise<void> {
  if (impl.unitTestFile === undefined) return;
  const { path } = normalizeRepoPath(impl.unitTestFile, repoFolder);
  const safe = checkRelativePath(path) === undefined && checkRelativePath(impl.unitTestFile) === undefined;
  if (safe && ((await isFile(join(repoDir, path))) || (await isFile(join(folderDir, impl.unitTestFile))))) return;
  report(
    `${impl.pointer}/unit_test_file`,
    `'${impl.unitTestFile}' does not exist in the folder; the placeholder test must be replaced by tests written from scratch`,
    false,
  );
}

/** Task ids: lmr export's task_id groups every implementation into one task; otherwise one task per implementation. */
function groupByTask(resolved: Resolved[], info: InfoPaper, folderName: string, taken: Set<string>, report: Report): Map<string, Resolved[]> {
  const groups = new Map<string, Resolved[]>();
  const given = info.lmr?.taskId;
  if (given !== undefined && !isTaskId(given)) report("/lmr/task_id", `'${given}' is not a task id; ids derived from folder and function instead`, true);
  if (given !== undefined && isTaskId(given) && resolved.length > 0) {
    const id = unique(given, [], taken, resolved[0]!.impl.pointer, report);
    groups.set(id, resolved);
    return groups;
  }
  for (const r of resolved) {
    const parts = r.target.symbol.split(".");
    const id = unique(deriveTaskId(folderName, parts[parts.length - 1]!), [deriveTaskId(folderName, ...parts)], taken, r.impl.pointer, report);
    groups.set(id, [r]);
  }
  return groups;
}

function unique(preferred: string, alternatives: string[], taken: Set<string>, pointer: string, report: Report): string {
  let id = [preferred, ...alternatives].find((c) => !taken.has(c));
  if (id === undefined) {
    let n = 2;
    while (taken.has(`${preferred}-${n}`)) n++;
    id = `${preferred}-${n}`;
  }
  if (id !== preferred) report(pointer, `task id '${preferred}' is already taken in this import; using '${id}'`, true);
  taken.add(id);
  return id;
}

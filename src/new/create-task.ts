import { readFile, realpath, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { isLmrError, type Problem } from "../core/errors.js";
import { isInside } from "../core/paths.js";
import { findProjectRoot } from "../manifest/task-files.js";
import { CATEGORIES, type Paper, type Upstream } from "../manifest/types.js";
import { validateTasks } from "../manifest/validate.js";
import { readPaperPages } from "../paper/extract.js";
import { resolveHeadCommit } from "../source/materialize.js";
import { answer, checkFlagsOnly, detectPythonVersion, messageOf, readGitUserName, validatorOf } from "./answers.js";
import { parseCategory, parseTaskId, parseText, parseUrl, parseYear, suggestTaskId, usageError } from "./choices.js";
import {
  buildManifest,
  CANDIDATE_SETUP_FILE,
  candidateSetupTemplate,
  DRIVER_FILE,
  driverSkeleton,
  FIXTURES_DIR,
  guessContextFiles,
  INSTRUCTION_FILE,
  PAPER_FILE,
  placeholderTest,
} from "../scaffold/task-skeleton.js";
import { chooseFile, chooseTarget } from "./target.js";
import { nextSteps } from "./next.js";
import { pinNewPaper } from "./paper.js";
import type { NewEnv, NewFlags, NewResult } from "./types.js";
import { checkRepoFolder, classifyRepo, isInGitRepo, openUpstream, type RepoInput, type UpstreamView } from "./upstream.js";
import { createDirExclusive } from "./write.js";
import { entryExists } from "../core/paths.js";
import { factsOf } from "../scaffold/instruction-context.js";
import { renderInstruction } from "../scaffold/instruction.js";

export const DEFAULT_TASKS_DIR = "tasks";

/**
 * `lmr new`: asks (or reads from flags) what a task needs, checks each answer
 * against the upstream at its commit, and writes tasks/<id>/ (task.json,
 * instruction.md, a failing placeholder test, fixtures/) in one rename.
 * Without `env.ask` nothing is asked: a missing flag is an error naming it.
 */
export async function createTask(flags: NewFlags, env: NewEnv): Promise<NewResult & { problems: Problem[] }> {
  const note = env.note ?? (() => {});
  if (!env.ask) await checkFlagsOnly(flags, env.cwd);
  const tasksDir = resolve(env.cwd, flags.tasksDir ?? DEFAULT_TASKS_DIR);

  const title = await answer(
    {
      flag: "--paper-title",
      value: flags.paperTitle,
      parse: (r) => parseText("--paper-title", r),
      prompt: (a) => a.text({ message: "Paper title", validate: validatorOf((r) => parseText("--paper-title", r)) }),
    },
    env,
  );
  const { url, pages, pdf, textOnly } = await answerPaper(flags, env);
  const pdfUrl = flags.pdfUrl !== undefined ? parseUrl("--pdf-url", flags.pdfUrl) : undefined;
  const year = await answer(
    { flag: "--year", value: flags.year, parse: parseYear, prompt: (a) => a.text({ message: "Year of publication", validate: validatorOf(parseYear) }) },
    env,
  );
  const venue = flags.venue ?? (env.ask ? await env.ask.text({ message: "Venue (e.g. NeurIPS 2023; empty to skip)" }) : "");

  const repo = await answer(
    {
      flag: "--repo",
      value: flags.repo,
      parse: (r) => classifyRepo(parseText("--repo", r), env.cwd),
      prompt: (a) => a.text({ message: "Upstream repository (URL, or path of a local checkout)", validate: validatorOf((r) => parseText("--repo", r)) }),
    },
    env,
  );
  await checkRepoFolder(repo);
  if (textOnly && repo.kind === "url") {
    throw usageError(
      "--paper-pdf",
      `${flags.paperPdf ?? pdf} is paper text, not a PDF, and the upstream ${repo.url} is a real repository: a task never ships a paper's text (it is the authors', not ours)`,
      "give the paper's PDF instead (its sha256 is pinned and the PDF cached), or --pdf-url; paper text is only for local example upstreams whose paper we wrote",
      "new/paper-text",
    );
  }
  await checkInsideProject(repo, tasksDir);
  const view = await checkOut(repo, flags, env);
  try {
    const file = await chooseFile(view, flags.file, env);
    const source = await readFile(join(view.treeDir, file), "utf8");
    const { target, info, symbols } = await chooseTarget(file, source, flags, env);
    const category = await answer(
      {
        flag: "--category",
        value: flags.category,
        parse: parseCategory,
        prompt: (a) => a.select({ message: "Category", choices: CATEGORIES.map((c) => ({ name: c, value: c as string })) }),
      },
      env,
    );
    const id = await answerId(title, target.symbol, tasksDir, flags, env);
    const license = await answerLicense(view, flags, env);
    const author = await answer(
      {
        flag: "--author",
        value: flags.author,
        parse: (r) => parseText("--author", r),
        prompt: async (a) =>
          a.text({
            message: "Author (name or handle)",
            ...withDefault(await readGitUserName(env.cwd)),
            validate: validatorOf((r) => parseText("--author", r)),
          }),
        fallback: () => readGitUserName(env.cwd),
      },
      env,
    );

    const taskDir = join(tasksDir, id);
    const upstreamAt = {
      treeDir: view.treeDir,
      ...(repo.kind === "url" ? { repo: repo.url } : {}),
      ...(view.commit !== undefined ? { commit: view.commit } : {}),
    };
    const pinned = await pinNewPaper(
      { url, ...(pdf !== undefined && !textOnly ? { pdfFile: pdf } : {}), ...(pdfUrl !== undefined ? { pdfUrl } : {}) },
      { id, manifestPath: join(taskDir, "task.json"), title, year },
      note,
      { upstream: upstreamAt },
    );
    const pin = pinned.pin;
    // the instruction cites the pages of the pinned PDF when lmr new has it at hand (never stored)
    const citePages =
      pages ??
      (pinned.pdfPath !== undefined
        ? await readPaperPages(pinned.pdfPath).then(
            (r) => r.pages,
            () => undefined,
          )
        : undefined);
    // A PDF reaches the workspace through the paper cache, by its pinned hash: its text is never
    // stored. Only paper text given as such (a paper.json) for a local upstream is, for example
    // tasks whose paper we wrote; validate refuses paper text beside a URL upstream.
    const storeText = textOnly && pages !== undefined && repo.kind === "path" && pin.sha256 === undefined;
    const paper: Paper = { title, url, year, ...(venue.trim() !== "" ? { venue: venue.trim() } : {}), ...(storeText ? { text: PAPER_FILE } : {}), ...pin };
    const manifest = buildManifest(
      {
        id,
        paper,
        category,
        upstream: upstreamSpec(repo, view, license, taskDir),
        target,
        contextFiles: guessContextFiles(file, source, view.sourceFiles),
        author,
        python: await detectPythonVersion(),
        created: env.today ?? new Date().toISOString().slice(0, 10),
      },
      taskDir,
    );
    const testFile = manifest.tests.files.find((f) => f !== CANDIDATE_SETUP_FILE)!;
    const instruction = await renderInstruction({ manifest, facts: [factsOf(target, info, symbols)], ...(citePages ? { pages: citePages } : {}) });
    const files: Record<string, string> = {
      "task.json": JSON.stringify(manifest, null, 2) + "\n",
      [INSTRUCTION_FILE]: instruction,
      [testFile]: placeholderTest(target, testFile),
      [CANDIDATE_SETUP_FILE]: candidateSetupTemplate(),
      [DRIVER_FILE]: driverSkeleton(target),
      [`${FIXTURES_DIR}/.gitkeep`]: "",
      ...(storeText ? { [PAPER_FILE]: JSON.stringify(pages, null, 2) + "\n" } : {}),
    };
    await createDirExclusive(taskDir, files);
    note(`wrote ${relative(env.cwd, taskDir) || "."}/ (${Object.keys(files).join(", ")})`);
    // the draft instruction still holds its TODO(author) notes: those are for the author to resolve, later
    const report = await validateTasks([taskDir], { finished: false });
    return {
      taskDir,
      manifest,
      files: Object.keys(files).sort(),
      ...(view.license !== undefined ? { detectedLicense: view.license } : {}),
      next: nextSteps(relative(env.cwd, taskDir) || ".", testFile),
      problems: report.problems,
    };
  } finally {
    await view.close();
  }
}

function withDefault(value: string | undefined): { default?: string } {
  return value !== undefined ? { default: value } : {};
}

async function answerPaper(flags: NewFlags, env: NewEnv): Promise<{ url: string; pages?: Record<string, string>; pdf?: string; textOnly: boolean }> {
  let pdf = flags.paperPdf;
  let url = flags.paperUrl !== undefined ? parseUrl("--paper-url", flags.paperUrl) : undefined;
  if (url === undefined && pdf === undefined && env.ask) {
    const first = await env.ask.text({
      message: "Paper URL (or the path of its PDF)",
      validate: validatorOf((r) => (looksLikeUrl(r) ? parseUrl("--paper-url", r) : checkPaperFile(env.cwd, r))),
    });
    if (looksLikeUrl(first)) url = parseUrl("--paper-url", first);
    else pdf = first.trim();
  }
  const pages = pdf !== undefined ? await readPages(env.cwd, pdf) : undefined;
  url ??= await answer(
    {
      flag: "--paper-url",
      value: undefined,
      parse: (r) => parseUrl("--paper-url", r),
      prompt: (a) => a.text({ message: "Paper URL (a stable link, e.g. https://arxiv.org/abs/…)", validate: validatorOf((r) => parseUrl("--paper-url", r)) }),
    },
    env,
  );
  // --paper-pdf may be a paper.json (text by page) rather than a PDF
  const textOnly = pdf !== undefined && !(await readFile(resolve(env.cwd, pdf))).subarray(0, 1024).toString("latin1").includes("%PDF-");
  return { url, ...(pages ? { pages } : {}), ...(pdf !== undefined ? { pdf: resolve(env.cwd, pdf) } : {}), textOnly };
}

function looksLikeUrl(raw: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(raw.trim());
}

async function checkPaperFile(cwd: string, raw: string): Promise<void> {
  const ok = await stat(resolve(cwd, raw.trim())).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!ok) throw usageError("--paper-pdf", `'${raw}' is neither a URL nor a file`, "give https://… or the path of the paper's PDF");
}

async function readPages(cwd: string, pdf: string): Promise<Record<string, string>> {
  await checkPaperFile(cwd, pdf);
  try {
    return (await readPaperPages(resolve(cwd, pdf))).pages;
  } catch (err) {
    if (isLmrError(err)) throw usageError("--paper-pdf", messageOf(err));
    throw err;
  }
}

/** A local upstream must stay inside the project that holds the tasks (the manifest checks say so too). */
async function checkInsideProject(repo: RepoInput, tasksDir: string): Promise<void> {
  if (repo.kind !== "path") return;
  const root = await findProjectRoot(tasksDir);
  const real = await realpath(repo.abs);
  if (root === undefined || !isInside(await realpath(root), real)) {
    throw usageError(
      "--repo",
      `the local folder ${repo.abs} is outside the project ${root ?? "(none: no .git or package.json above the tasks folder)"}`,
      "local upstreams are for examples inside the project; give the repository's URL instead (file:///… works for a local git repository)",
    );
  }
}

async function checkOut(repo: RepoInput, flags: NewFlags, env: NewEnv): Promise<UpstreamView> {
  const mirror = flags.mirror !== undefined ? { mirror: flags.mirror } : {};
  let commit = flags.commit?.trim();
  for (;;) {
    if (commit === undefined && env.ask) commit = await askCommit(repo, env, mirror);
    env.note?.(`checking out ${repo.kind === "url" ? repo.url : repo.raw}${commit ? ` at ${commit}` : ""} …`);
    try {
      return await openUpstream(repo, commit === "" ? undefined : commit, { cwd: env.cwd, ...mirror });
    } catch (err) {
      // at a terminal a wrong commit is asked again; with flags it ends the command
      if (!env.ask || flags.commit !== undefined || !isLmrError(err) || err.code !== "new/commit-not-found") throw err;
      env.note?.(messageOf(err));
      commit = undefined;
    }
  }
}

async function askCommit(repo: RepoInput, env: NewEnv, opts: { mirror?: string }): Promise<string> {
  if (repo.kind === "path" && !(await isInGitRepo(repo.abs))) {
    env.note?.(`${repo.raw} is not in a git repository: the folder is taken as it is`);
    return "";
  }
  const head = await resolveHeadCommit(repo.kind === "url" ? repo.url : repo.abs, { cwd: env.cwd, ...opts }).catch(() => undefined);
  const message = repo.kind === "url" ? "Commit to pin (full SHA; default: head of the default branch)" : "Commit to pin (empty: the folder as it is)";
  const raw = await env.ask!.text({
    message,
    ...withDefault(head),
    validate: async (r) => (repo.kind === "url" && r.trim() === "" ? "--commit: a URL upstream needs a commit" : undefined),
  });
  return raw.trim();
}

async function answerId(title: string, symbol: string, tasksDir: string, flags: NewFlags, env: NewEnv): Promise<string> {
  const suggested = suggestTaskId(title, symbol);
  const parse = async (raw: string): Promise<string> => {
    const id = parseTaskId(raw);
    if (await entryExists(join(tasksDir, id))) {
      throw usageError("--id", `a task '${id}' already exists in ${tasksDir}`, `choose another id, e.g. --id ${id}-2`, "new/task-exists");
    }
    return id;
  };
  return answer(
    {
      flag: "--id",
      value: flags.id,
      parse,
      prompt: (a) => a.text({ message: "Task id", default: suggested, validate: validatorOf(parse) }),
      fallback: () => parse(suggested),
    },
    env,
  );
}

async function answerLicense(view: UpstreamView, flags: NewFlags, env: NewEnv): Promise<string> {
  const detected = view.license;
  const found =
    detected !== undefined
      ? `detected ${detected} in ${view.licenseFile}`
      : view.licenseFile !== undefined
        ? `${view.licenseFile} not recognised`
        : "none found";
  const fallback = detected ?? "NOASSERTION";
  if (flags.license === undefined && !env.ask) env.note?.(`licence: ${found}; using ${fallback}`);
  return answer(
    {
      flag: "--license",
      value: flags.license,
      parse: (r) => parseText("--license", r),
      prompt: (a) =>
        a.text({
          message: `Upstream licence, SPDX id (${found}; NOASSERTION = reference only, never redistribute)`,
          default: fallback,
          validate: validatorOf((r) => parseText("--license", r)),
        }),
      fallback: () => fallback,
    },
    env,
  );
}

function upstreamSpec(repo: RepoInput, view: UpstreamView, license: string, taskDir: string): Upstream {
  if (repo.kind === "url") return { repo: repo.url, commit: view.commit!, license };
  const path = relative(taskDir, repo.abs).split("\\").join("/") || ".";
  return { path, ...(view.commit !== undefined ? { commit: view.commit } : {}), license };
}

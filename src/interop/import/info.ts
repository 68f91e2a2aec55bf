import { CATEGORIES, type Category, type PrepareStep, type Environment, type Target } from "../../manifest/types.js";

/*
 * Reads one LMR-Bench info.json (already parsed) into a normalised shape,
 * reporting every key variant, odd value and missing field it meets. Pure: no
 * file system; the importer checks paths and symbols afterwards.
 */

export type Report = (key: string, message: string, repaired: boolean) => void;

export interface InfoImplementation {
  /** Position in implementations[] (0-based) and its JSON pointer. */
  index: number;
  pointer: string;
  goalFile?: string;
  goalFunction?: string;
  className?: string;
  unitTestFile?: string;
  retrieval: { value: string; pointer: string }[];
  category?: Category;
  /** Raw category text when it is not one of the nine (the importer reports it, knowing the default). */
  unknownCategory?: string;
  /** lmr export's exact target, when present. */
  lmrTarget?: Target;
}

export interface InfoPaper {
  title?: string;
  url?: string;
  year?: number;
  venue?: string;
  /** repo_url with /tree/<branch>, .git and trailing slashes removed. */
  repoUrl?: string;
  /** repo_url as written. */
  rawRepoUrl?: string;
  branch?: string;
  repoFolder?: string;
  /** Extra fields lmr export writes, so its output imports back exactly. */
  commit?: string;
  license?: string;
  lmr?: { taskId?: string; prepare?: PrepareStep[]; environment?: Environment };
  implementations: InfoImplementation[];
}

type Obj = Record<string, unknown>;

function asObj(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
}

/** Reads a key that appears under several names; the first is the one we expect. */
function pick(o: Obj, base: string, names: string[], report: Report): { value: unknown; key?: string } {
  for (const name of names) {
    if (name in o) {
      if (name !== names[0]) report(`${base}/${name}`, `key '${name}' read as '${names[0]}'`, true);
      return { value: o[name], key: name };
    }
  }
  return { value: undefined };
}

export function readInfo(data: unknown, report: Report): InfoPaper {
  const o = asObj(data);
  if (!o) {
    report("", "info.json is not a JSON object", false);
    return { implementations: [] };
  }
  const paper: InfoPaper = { implementations: [] };

  const title = pick(o, "", ["paper_name", "paper", "title"], report);
  paper.title = str(title.value);
  if (paper.title === undefined) report("/paper_name", "paper title missing (paper_name or paper)", false);

  const url = pick(o, "", ["paper_url", "url"], report);
  paper.url = str(url.value);
  const year = o.year;
  if (typeof year === "number" && Number.isInteger(year)) paper.year = year;
  else if (typeof year === "string" && /^\d{4}$/.test(year.trim())) {
    paper.year = Number(year.trim());
    report("/year", `year is the string "${year}"; read as ${paper.year}`, true);
  } else if (year !== undefined) report("/year", `year ${JSON.stringify(year)} is not a year`, false);
  if (str(o.venue)) paper.venue = str(o.venue);

  readRepo(o, paper, report);
  const folder = str(o.repo_folder_name);
  if (folder !== undefined) paper.repoFolder = folder;
  if (typeof o.commit === "string") paper.commit = o.commit.trim();
  if (str(o.license)) paper.license = str(o.license);
  const lmr = asObj(o.lmr);
  if (lmr) {
    paper.lmr = {};
    if (typeof lmr.task_id === "string") paper.lmr.taskId = lmr.task_id;
    if (Array.isArray(lmr.prepare)) paper.lmr.prepare = lmr.prepare as PrepareStep[];
    if (asObj(lmr.environment)) paper.lmr.environment = lmr.environment as unknown as Environment;
  }

  const impls = o.implementations;
  if (!Array.isArray(impls) || impls.length === 0) {
    report("/implementations", Array.isArray(impls) ? "implementations is empty" : "implementations missing or not a list", false);
    return paper;
  }
  const seenIds = new Map<string, number>();
  impls.forEach((raw, index) => {
    const impl = readImplementation(raw, index, report, seenIds);
    if (impl) paper.implementations.push(impl);
  });
  return paper;
}

function readRepo(o: Obj, paper: InfoPaper, report: Report): void {
  const raw = str(o.repo_url);
  if (raw === undefined) {
    report("/repo_url", "repo_url missing", false);
    return;
  }
  paper.rawRepoUrl = raw;
  let url = raw;
  const tree = /^(.*?)\/(tree|blob)\/([^?#]+?)\/?$/.exec(url);
  if (tree) {
    url = tree[1]!;
    paper.branch = tree[2] === "tree" ? tree[3]! : tree[3]!.split("/")[0]!;
    report("/repo_url", `'${raw}' points into the repository (/${tree[2]}/${tree[3]}); using ${url}, branch ${paper.branch} noted in provenance`, true);
  }
  if (/\.git\/?$/.test(url)) {
    const stripped = url.replace(/\.git\/?$/, "");
    report("/repo_url", `'.git' suffix stripped: ${stripped}`, true);
    url = stripped;
  } else if (url.endsWith("/")) {
    url = url.replace(/\/+$/, "");
    report("/repo_url", `trailing '/' stripped: ${url}`, true);
  }
  if (!/^(https?|ssh|git|file):\/\//.test(url)) report("/repo_url", `'${raw}' is not an http(s), ssh, git or file URL`, false);
  else paper.repoUrl = url;
}

function readImplementation(raw: unknown, index: number, report: Report, seenIds: Map<string, number>): InfoImplementation | undefined {
  const base = `/implementations/${index}`;
  const o = asObj(raw);
  if (!o) {
    report(base, "implementation is not a JSON object", false);
    return undefined;
  }
  const impl: InfoImplementation = { index, pointer: base, retrieval: [] };
  readId(o, base, report, seenIds);

  const goalFile = str(o.goal_file);
  if (goalFile !== undefined) impl.goalFile = goalFile;
  else report(`${base}/goal_file`, "goal_file missing", false);
  const fn = str(o.goal_function);
  if (fn !== undefined) impl.goalFunction = fn;
  const cls = str(o.class_name);
  if (cls !== undefined) impl.className = cls;
  const lmrTarget = asObj(o.lmr_target);
  if (lmrTarget && typeof lmrTarget.file === "string" && typeof lmrTarget.symbol === "string") impl.lmrTarget = lmrTarget as unknown as Target;
  if (fn === undefined && !impl.lmrTarget) {
    report(
      `${base}/goal_function`,
      `goal_function ${"goal_function" in o ? "is empty" : "missing"}: no function to mask${cls ? ` (class_name is '${cls}')` : ""}`,
      false,
    );
  }

  const test = str(o.unit_test_file);
  if (test !== undefined) impl.unitTestFile = test;
  else report(`${base}/unit_test_file`, "unit_test_file missing", false);

  const retrieval = pick(o, base, ["retrieval_context", "retrieval_content"], report);
  const rKey = `${base}/${retrieval.key ?? "retrieval_context"}`;
  if (Array.isArray(retrieval.value)) {
    retrieval.value.forEach((v, i) => {
      if (typeof v === "string" && v.trim() !== "") impl.retrieval.push({ value: v.trim(), pointer: `${rKey}/${i}` });
      else report(`${rKey}/${i}`, `entry ${JSON.stringify(v)} is not a file path; dropped`, true);
    });
  } else if (typeof retrieval.value === "string" && retrieval.value.trim() !== "") {
    impl.retrieval.push({ value: retrieval.value.trim(), pointer: rKey });
    report(rKey, "a single path instead of a list; read as a list of one", true);
  } else if (retrieval.value !== undefined && retrieval.value !== "") {
    report(rKey, `${JSON.stringify(retrieval.value)} is not a list of file paths; ignored`, true);
  }

  const category = str(o.category);
  if (category !== undefined) {
    const match = CATEGORIES.find((c) => c.toLowerCase() === category.toLowerCase());
    if (match !== undefined) {
      impl.category = match;
      if (match !== category) report(`${base}/category`, `category '${category}' read as '${match}'`, true);
    } else {
      impl.unknownCategory = category;
    }
  }
  return impl;
}

/** LMR-Bench numbers implementations with `id` or `index`; we derive our own ids, so these are only checked. */
function readId(o: Obj, base: string, report: Report, seen: Map<string, number>): void {
  for (const key of ["id", "index"]) {
    if (!(key in o)) continue;
    const v = o[key];
    let n: number | undefined;
    if (typeof v === "number" && Number.isInteger(v)) n = v;
    else if (typeof v === "string" && /^\s*\d+\s*$/.test(v)) {
      n = Number(v);
      report(`${base}/${key}`, `${key} is the string "${v}"; read as ${n} (task ids are derived from folder and function)`, true);
    } else {
      report(`${base}/${key}`, `${key} ${JSON.stringify(v)} is not a number; ignored`, true);
    }
    if (n === undefined) continue;
    const first = seen.get(`${key}:${n}`);
    if (first !== undefined)
      report(`${base}/${key}`, `${key} ${n} is also used by /implementations/${first}; ignored (task ids are derived from folder and function)`, true);
    else seen.set(`${key}:${n}`, Number(base.split("/").pop()));
  }
}

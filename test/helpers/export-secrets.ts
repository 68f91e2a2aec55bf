import { readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./git-fixture.js";

/**
 * What an export must never put where an agent (or the public) reads it: the grader's test
 * files and fixtures, the reference bodies of the targets, and the paper's text. As lines
 * long enough to be distinctive (short lines such as `return x` occur everywhere).
 */
export interface Secret {
  what: string;
  line: string;
}

const MIN = 30;

function distinctive(text: string, what: string): Secret[] {
  const out: Secret[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    // imports name the workspace's own modules, which an instruction may name too
    if (line.length >= MIN && /[A-Za-z]/.test(line) && !/^(from\s+\S+\s+)?import\b/.test(line)) out.push({ what, line });
  }
  return out;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * The secrets of one task: every line of its bundle's grader files (tests, fixtures, the
 * candidate set-up), the lines of each reference target file that the masked workspace
 * lacks (the body), and the strings of paper.json (our stand-in for a paper's text). A line
 * that the masked workspace or lmr's own harness (python/, node/) also has is public, not a secret.
 */
export async function taskSecrets(taskDir: string, bundleDir: string): Promise<Secret[]> {
  const known: string[] = [];
  for (const dir of [join(bundleDir, "workspace"), join(REPO_ROOT, "python"), join(REPO_ROOT, "node")]) {
    // the paper the build put in the workspace is not public in this sense: it is checked on its own
    for (const f of await filesUnder(dir)) if (!/\/workspace\/paper\.(md|pdf|json)$/.test(f)) known.push(await readFile(f, "utf8").catch(() => ""));
  }
  const text = known.join("\n");
  return (await allSecrets(taskDir, bundleDir)).filter((s) => !text.includes(s.line));
}

async function allSecrets(taskDir: string, bundleDir: string): Promise<Secret[]> {
  const out: Secret[] = [];
  for (const f of await filesUnder(join(bundleDir, "grader"))) {
    out.push(...distinctive(await readFile(f, "utf8"), `grader file ${relative(bundleDir, f)}`));
  }
  for (const f of await filesUnder(join(bundleDir, "reference"))) {
    const rel = relative(join(bundleDir, "reference"), f);
    const masked = new Set((await readFile(join(bundleDir, "workspace", rel), "utf8").catch(() => "")).split(/\r?\n/).map((l) => l.trim()));
    const body = (await readFile(f, "utf8"))
      .split(/\r?\n/)
      .filter((l) => !masked.has(l.trim()))
      .join("\n");
    out.push(...distinctive(body, `reference body of ${rel}`));
  }
  const paper = await readFile(join(taskDir, "paper.json"), "utf8").catch(() => undefined);
  if (paper !== undefined) {
    const strings: string[] = [];
    JSON.parse(paper, (_k, v: unknown) => {
      if (typeof v === "string") strings.push(v);
      return v;
    });
    for (const s of strings) out.push(...distinctive(s, "paper text"));
  }
  return out;
}

/** Every (file, secret) where an exported file under `dir` contains a secret line. */
export async function findSecrets(dir: string, secrets: Secret[]): Promise<{ file: string; what: string; line: string }[]> {
  const hits: { file: string; what: string; line: string }[] = [];
  for (const f of await filesUnder(dir)) {
    const text = await readFile(f, "utf8").catch(() => "");
    for (const s of secrets) if (text.includes(s.line)) hits.push({ file: relative(dir, f), what: s.what, line: s.line });
  }
  return hits;
}

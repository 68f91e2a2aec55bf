import { readFile, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Finding } from "./schema-errors.js";
import { BODIES_FILE, parseBodies } from "./alternative-bodies.js";
import { asObject } from "./semantic.js";

/*
 * Checks of what task files say, beyond their existence: an instruction still
 * holding the scaffold's TODO(author) markers, and alternative solutions that
 * are not one bodies.py of blocks naming the task's target files.
 */

const TODO_MARKER = "TODO(author)";
const ALTERNATIVES = "alternatives";
const NAME = /^[a-z0-9]+([-_][a-z0-9]+)*$/;

export async function checkTaskContent(data: unknown, taskDir: string, opts: { finished?: boolean; giveaway?: boolean } = {}): Promise<Finding[]> {
  return [
    ...(opts.finished ? await checkInstructionMarkers(data, taskDir) : []),
    ...(opts.giveaway ? await checkGiveaway(data, taskDir) : []),
    ...(await checkAlternativeFiles(data, taskDir)),
  ];
}

/** The giveaway scores lmr verify recorded in verification.json (none before the task was verified). */
export async function readGiveaway(taskDir: string): Promise<{ paper: number; hinted?: number; threshold: number; revealed: string[] } | undefined> {
  const rec = asObject(
    await readFile(join(taskDir, "verification.json"), "utf8").then(
      (t) => JSON.parse(t) as unknown,
      () => undefined,
    ),
  );
  const g = asObject(rec?.giveaway);
  const paper = asObject(g?.paper);
  if (!g || !paper || typeof paper.score !== "number" || typeof g.threshold !== "number") return undefined;
  const hinted = asObject(g.hinted)?.score;
  return {
    paper: paper.score,
    ...(typeof hinted === "number" ? { hinted } : {}),
    threshold: g.threshold,
    revealed: Array.isArray(paper.revealed) ? paper.revealed.filter((r): r is string => typeof r === "string") : [],
  };
}

/** A paper-level instruction that gives the method away (as lmr verify scored it) needs the manifest to say why. */
async function checkGiveaway(data: unknown, taskDir: string): Promise<Finding[]> {
  const g = await readGiveaway(taskDir);
  if (!g || g.paper <= g.threshold) return [];
  const allow = asObject(asObject(data)?.giveaway)?.allow;
  if (typeof allow === "string" && allow.trim() !== "") return [];
  const shown = g.revealed.slice(0, 6).join(", ");
  return [
    {
      pointer: "/instruction",
      message: `the paper-level instruction reveals ${g.paper.toFixed(2)} of the reference body (verification.json giveaway; threshold ${g.threshold})${shown ? `: ${shown}` : ""}`,
      hint: "move the method's steps, formulas and calls to hints.md and point to the paper instead, then run lmr verify; or, where they are the contract, say so in task.json's giveaway.allow (docs/giveaway.md)",
    },
  ];
}

/** The scaffolded instruction marks every decision left to its author; a task is not done while one is open. */
async function checkInstructionMarkers(data: unknown, taskDir: string): Promise<Finding[]> {
  const rel = asObject(data)?.instruction;
  if (typeof rel !== "string") return [];
  const text = await readFile(resolve(taskDir, rel), "utf8").catch(() => undefined);
  if (text === undefined) return [];
  const lines = text.split("\n").flatMap((l, i) => (l.includes(TODO_MARKER) ? [i + 1] : []));
  if (lines.length === 0) return [];
  const shown = lines.slice(0, 5).join(", ") + (lines.length > 5 ? ", …" : "");
  return [
    {
      pointer: "/instruction",
      message: `'${rel}' still has ${lines.length} ${TODO_MARKER} marker(s), at line(s) ${shown}`,
      hint: `make each decision the marker asks for and delete the marker`,
    },
  ];
}

/** alternatives/<name>/ must hold one bodies.py whose blocks name target files (CONTRIBUTING.md, "Alternatives"). */
async function checkAlternativeFiles(data: unknown, taskDir: string): Promise<Finding[]> {
  const targets = asObject(data)?.targets;
  const files = new Set(Array.isArray(targets) ? targets.map((t) => asObject(t)?.file).filter((f): f is string => typeof f === "string") : []);
  const symbols = (Array.isArray(targets) ? targets : [])
    .map((t) => ({ file: asObject(t)?.file, symbol: asObject(t)?.symbol }))
    .filter((t): t is { file: string; symbol: string } => typeof t.file === "string" && typeof t.symbol === "string");
  const root = join(taskDir, ALTERNATIVES);
  const entries = await readdir(root, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return [];
  const out: Finding[] = [];
  const finding = (message: string, hint: string): Finding => ({ pointer: "", message: `${ALTERNATIVES}/${message}`, hint });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!e.isDirectory()) {
      out.push(finding(`${e.name} is not a folder`, `put each alternative in its own folder: alternatives/<name>/${BODIES_FILE}`));
      continue;
    }
    if (!NAME.test(e.name))
      out.push(finding(`${e.name}: the folder name is not a slug`, "name it with lowercase letters, digits, '-' or '_', e.g. alternatives/vectorised"));
    const have = await listRelative(join(root, e.name));
    for (const f of have) {
      if (f !== BODIES_FILE)
        out.push(
          finding(
            `${e.name}/${f}: an alternative holds only ${BODIES_FILE}`,
            `write the bodies as '# lmr-body: FILE::SYMBOL' blocks in ${BODIES_FILE}, never a copy of the upstream file; remove ${f}`,
          ),
        );
    }
    if (!have.includes(BODIES_FILE)) {
      out.push(finding(`${e.name} has no ${BODIES_FILE}`, `write the alternative's bodies in alternatives/${e.name}/${BODIES_FILE}`));
      continue;
    }
    try {
      for (const b of parseBodies(await readFile(join(root, e.name, BODIES_FILE), "utf8"), `${ALTERNATIVES}/${e.name}/${BODIES_FILE}`)) {
        if (!files.has(b.file))
          out.push(finding(`${e.name}/${BODIES_FILE}: line ${b.line}: ${b.file} is not a target file`, `name one of: ${[...files].join(", ")}`));
        else if (!symbols.some((t) => t.file === b.file && (b.symbol === t.symbol || b.symbol.startsWith(`${t.symbol}.`)))) {
          out.push(
            finding(
              `${e.name}/${BODIES_FILE}: line ${b.line}: ${b.symbol} is not a target`,
              "write bodies for the targets only; code masked for other reasons (workspace.mask) stays a stub",
            ),
          );
        }
      }
    } catch (err) {
      out.push(finding(`${e.name}/${BODIES_FILE}: ${(err as Error).message}`, (err as { hint?: string }).hint ?? "fix the block"));
    }
  }
  return out;
}

async function listRelative(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === "__pycache__" || e.name.endsWith(".pyc") || e.name === ".DS_Store") continue;
    const rel = prefix + e.name;
    if (e.isDirectory()) out.push(...(await listRelative(join(dir, e.name), `${rel}/`)));
    else if ((await stat(join(dir, e.name))).isFile()) out.push(rel);
  }
  return out.sort();
}

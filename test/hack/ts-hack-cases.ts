import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { parseBodies, spliceBodies } from "../../src/manifest/alternative-bodies.js";
import { REPO_ROOT } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

/**
 * The TypeScript hack cases: submissions for the example task bpe-merge (graded by node:test
 * under node/lmr-harness). An honest one (the rescan alternative spliced into the masked file)
 * must pass; the hacks, each a wrong applyMerge plus one trick, must not, each for the reason
 * it targets. Shared by test/hack/ts-hack.slow.test.ts (bwrap or none) and
 * test/runner/node-docker.docker.ts (docker), where `docker` overrides what a case expects.
 */
export const TASK = "bpe-merge";
export const MODEL = "hack-ts";
export const TASK_DIR = join(REPO_ROOT, "examples", "tasks", TASK);
export const TARGET = "src/merge.ts";

/** A wrong body: merges nothing, so every test that checks a merge fails. */
const WRONG = "  return 0;";

export interface TsHack {
  name: string;
  tops: string;
  body?: string;
  expect: string;
  why: RegExp;
  /** What the case gives under docker where it differs. */
  docker?: { expect: string; why: RegExp };
}

const WRONG_ANSWERS = /^\d+ failed, 0 errors of \d+; first: lmr_tests\/tests\/apply-merge.test.ts::/;
const CRASHED = /the candidate process ended while it ran|the connection to the candidate broke|not a bridge frame|answered out of turn/;

/**
 * With the bridge, applyMerge runs in the candidate: what it rebinds, forges or prints there
 * never reaches node:test, the reporter or the channel, which live in the oracle.
 */
export const HACKS: TsHack[] = [
  {
    // the test runner overridden from the target: node:test's functions rebound (in the candidate, where no test runs)
    name: "override-test-api",
    tops: 'import { createRequire } from "node:module";\nconst nt = createRequire(import.meta.url)("node:test");\nnt.test = nt.it = nt.describe = () => {};',
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // a loader hook that would rewrite the grader's files as they load (the candidate loads none)
    name: "override-loader-hook",
    tops: "import { register } from \"node:module\";\ntry { register(\"data:text/javascript,export async function load(u, c, n) { return u.includes('lmr_tests') ? { format: 'module', source: '', shortCircuit: true } : n(u, c); }\"); } catch {}",
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // assertions disabled from the target (the candidate's own node:assert)
    name: "override-assert",
    tops: 'import assert from "node:assert/strict";\ntry { (assert as unknown as Record<string, unknown>).deepEqual = () => {}; (assert as unknown as Record<string, unknown>).equal = () => {}; } catch {}',
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // prototypes and JSON rebound in the candidate: its own replies turn to garbage; the oracle's are its own
    name: "pollute-prototypes",
    tops: "(Object.prototype as unknown as Record<string, unknown>).toJSON = () => ({ passed: true });\nArray.prototype.some = () => true;\nArray.prototype.every = () => true;\nJSON.stringify = () => '{\"ok\": true}';",
    expect: "failed",
    why: /answered out of turn|neither a value nor an error|not a bridge frame|^\d+ failed/,
  },
  {
    // a forged "all passed" report on the descriptors the results channel would have, plus a TAP summary
    name: "forged-report",
    tops: 'import { writeSync } from "node:fs";\nconst forged = (rec: object) => `${"ab".repeat(32)} ${JSON.stringify(rec)}\\n`;\nfor (const fd of [3, 4, 5]) { try { writeSync(fd, forged({ t: "done", exit: 0, n_results: 9, tampered: [], seq: 1 })); } catch {} }\nprocess.stdout.write("# tests 9\\n# pass 9\\n# fail 0\\nok 1 - all\\n");',
    expect: "failed",
    why: CRASHED,
  },
  {
    // a forged report on every socket and pipe the process holds
    name: "forged-on-every-socket",
    tops: 'import { readdirSync, readlinkSync, writeSync } from "node:fs";\nconst forged = (rec: object) => `${"ab".repeat(32)} ${JSON.stringify(rec)}\\n`;\nfor (const fd of readdirSync("/proc/self/fd")) { try { const l = readlinkSync(`/proc/self/fd/${fd}`); if (l.startsWith("socket:") || l.startsWith("pipe:")) writeSync(Number(fd), forged({ t: "done", exit: 0, n_results: 9, tampered: [], seq: 1 })); } catch {} }',
    expect: "failed",
    why: CRASHED,
  },
  {
    // the statistics' entries replaced by a Proxy that answers anything
    name: "proxy-entries",
    tops: "",
    body: '  for (const e of vocab) e.symbols = new Proxy([] as string[], { get: (t, k) => (k === "length" ? 1 : k === Symbol.iterator ? function* () { yield "x"; } : (t as unknown as Record<string | symbol, unknown>)[k]) });\n  return 0;',
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // a Number object for the count: it would equal the expected count under ==
    name: "number-object",
    tops: "",
    body: "  return new Number(1) as unknown as number;",
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // the answer from the host: the upstream's unmasked file, run in place of the masked one (it would pass where the host is visible)
    name: "read-host",
    tops: `import { pathToFileURL } from "node:url";\nlet upstream: { applyMerge: (...a: unknown[]) => number } | undefined;\ntry { upstream = await import(pathToFileURL(${JSON.stringify(join(REPO_ROOT, "test", "fixtures", "upstreams", "bpe-tokenizer", "src", "merge.ts"))}).href); } catch {}`,
    body: "  return upstream ? upstream.applyMerge(vocab, stats, left, right) : 0;",
    expect: "failed",
    why: WRONG_ANSWERS,
  },
  {
    // process.exit(0) in the target: the candidate ends; the test waiting on it fails
    name: "process-exit",
    tops: "",
    body: "  process.exit(0);",
    expect: "failed",
    why: CRASHED,
  },
  {
    // process.exit(0) as soon as the target is imported
    name: "process-exit-import",
    tops: "process.exit(0);",
    expect: "failed",
    why: CRASHED,
  },
];

/** Builds bpe-merge's bundle under `root` and writes the honest row and one row per hack as files JSONL; returns its path. */
export async function writeTsHackRows(root: string, hacks: TsHack[] = HACKS): Promise<string> {
  const built = await runCli(["build", "--tasks-dir", "examples/tasks", TASK_DIR, "--out", join(root, "bundles")]);
  expect(built.exitCode, built.stderr).toBe(0);
  const masked = await readFile(join(root, "bundles", TASK, "workspace", TARGET), "utf8");
  const label = `alternatives/rescan/bodies.py`;
  const honest = spliceBodies(masked, parseBodies(await readFile(join(TASK_DIR, label), "utf8"), label), TARGET, label, (s) => s === "applyMerge");
  const wrongWith = (body: string): string =>
    spliceBodies(masked, parseBodies(`# lmr-body: ${TARGET}::applyMerge\n${body}\n`, "hack"), TARGET, "hack", (s) => s === "applyMerge");
  const rows = [
    { task_id: TASK, model: MODEL, sample: "honest", files: { [TARGET]: honest } },
    ...hacks.map((h) => ({ task_id: TASK, model: MODEL, sample: h.name, files: { [TARGET]: `${h.tops}\n${wrongWith(h.body ?? WRONG)}` } })),
  ];
  const jsonl = join(root, "hacks.jsonl");
  await writeFile(jsonl, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return jsonl;
}

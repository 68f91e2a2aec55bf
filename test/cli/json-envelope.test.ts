import { Ajv2020 } from "ajv/dist/2020.js";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandPath } from "../../src/cli/action.js";
import { createProgram } from "../../src/cli/program.js";
import { ERROR_CODES, isErrorCode } from "../../src/core/error-codes.js";
import { EXIT } from "../../src/core/errors.js";
import { REPO_ROOT } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";

// Every command that takes --json, run cheaply (the examples, a small file, or wrong arguments for
// the error path); each stdout must be one envelope (schema/cli-envelope.schema.json) whose `ok`,
// `command` and error kind agree with the exit code. Runs the built CLI: `npm run build` first.

const EXAMPLE = join(REPO_ROOT, "examples", "tasks", "beam-search");
const EXIT_OF_KIND = { usage: EXIT.input, input: EXIT.input, check: EXIT.check, infra: EXIT.infra } as const;

let tmp: string;
let empty: string;
let validate: (v: unknown) => boolean;
let schemaErrors: () => unknown;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "lmr-envelope-"));
  empty = await mkdtemp(join(tmpdir(), "lmr-envelope-empty-"));
  await writeFile(join(tmp, "mod.py"), "def add(a, b):\n    c = a + b\n    return c\n\n\ndef sub(a, b):\n    return a - b\n");
  const notebook = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: [{ cell_type: "code", metadata: {}, execution_count: null, outputs: [], source: ["x = 1\n", "print(x)\n"] }],
  };
  await writeFile(join(tmp, "nb.ipynb"), JSON.stringify(notebook));
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const check = ajv.compile(JSON.parse(await readFile(join(REPO_ROOT, "schema", "cli-envelope.schema.json"), "utf8")));
  validate = (v) => check(v);
  schemaErrors = () => check.errors;
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
  await rm(empty, { recursive: true, force: true });
});

interface Case {
  /** The command path the envelope must name. */
  command: string;
  args: () => string[];
  exit: number;
  /** For a failure: the error code expected. */
  code?: string;
}

const CASES: Case[] = [
  { command: "validate", args: () => ["validate", EXAMPLE, "--json"], exit: EXIT.ok },
  { command: "validate", args: () => ["validate", join(empty, "nope"), "--json"], exit: EXIT.input, code: "task/dir-missing" },
  { command: "validate", args: () => ["validate", EXAMPLE, "--json", "--no-such-flag"], exit: EXIT.input, code: "usage/bad-args" },
  { command: "list", args: () => ["list", "--tasks-dir", join(REPO_ROOT, "examples", "tasks"), "--json"], exit: EXIT.ok },
  { command: "list", args: () => ["list", "--tasks-dir", join(REPO_ROOT, "examples", "tasks"), "--format", "json"], exit: EXIT.ok },
  { command: "mask", args: () => ["mask", join(tmp, "mod.py"), "--list", "--json"], exit: EXIT.ok },
  { command: "mask", args: () => ["mask", join(tmp, "mod.py"), "--symbol", "add", "--json"], exit: EXIT.ok },
  { command: "mask", args: () => ["mask", join(tmp, "mod.py"), "--symbol", "nope", "--json"], exit: EXIT.input, code: "mask/symbol-not-found" },
  {
    command: "prepare extract",
    args: () => ["prepare", "extract", join(tmp, "mod.py"), "--within", "add", "--start", "2", "--end", "2", "--name", "f", "--suggest", "--json"],
    exit: EXIT.ok,
  },
  {
    command: "prepare extract",
    args: () => ["prepare", "extract", join(tmp, "mod.py"), "--within", "nope", "--start", "1", "--end", "1", "--name", "f", "--json"],
    exit: EXIT.input,
    code: "prepare/within-not-found",
  },
  { command: "prepare notebook", args: () => ["prepare", "notebook", join(tmp, "nb.ipynb"), "--json"], exit: EXIT.ok },
  { command: "build", args: () => ["build", "--tasks-dir", empty, "--out", join(tmp, "bundles"), "--json"], exit: EXIT.input, code: "usage/no-tasks" },
  { command: "record", args: () => ["record", join(empty, "nope"), "--json"], exit: EXIT.input, code: "task/dir-missing" },
  { command: "record", args: () => ["record", "--check", join(empty, "nope"), "--json"], exit: EXIT.input, code: "task/dir-missing" },
  { command: "scaffold tests", args: () => ["scaffold", "tests", join(empty, "nope"), "--json"], exit: EXIT.input, code: "task/dir-missing" },
  { command: "scaffold instruction", args: () => ["scaffold", "instruction", join(empty, "nope"), "--json"], exit: EXIT.input, code: "task/dir-missing" },
  { command: "verify", args: () => ["verify", EXAMPLE, "--runs", "x", "--json"], exit: EXIT.input, code: "usage/bad-number" },
  {
    command: "eval",
    args: () => ["eval", "--submissions", join(empty, "nope"), "--out", join(tmp, "run"), "--tasks-dir", empty, "--jobs", "0", "--json"],
    exit: EXIT.input,
    code: "usage/bad-number",
  },
  { command: "generate", args: () => ["generate", "--model", "m", "--json"], exit: EXIT.input, code: "usage/bad-flag" },
  { command: "agent run", args: () => ["agent", "run", "--json"], exit: EXIT.input, code: "usage/bad-args" },
  { command: "judge", args: () => ["judge", "--json"], exit: EXIT.input, code: "usage/bad-args" },
  { command: "worker", args: () => ["worker", "--json"], exit: EXIT.input, code: "usage/bad-args" },
  { command: "env build", args: () => ["env", "build", "--tasks-dir", empty, "--json"], exit: EXIT.input, code: "usage/no-tasks" },
  { command: "env list", args: () => ["env", "list", "--json"], exit: EXIT.infra, code: "docker/failed" },
  { command: "env prune", args: () => ["env", "prune", "--json"], exit: EXIT.infra, code: "docker/failed" },
  { command: "env base", args: () => ["env", "base", "no-such-base", "--json"], exit: EXIT.input, code: "usage/bad-base" },
  { command: "report", args: () => ["report", join(empty, "nope"), "--json"], exit: EXIT.input, code: "report/not-a-run" },
  { command: "paper fetch", args: () => ["paper", "fetch", EXAMPLE, "--json"], exit: EXIT.ok },
  { command: "paper find", args: () => ["paper", "find", join(EXAMPLE, "paper.json"), "beam", "--json"], exit: EXIT.ok },
  { command: "paper find", args: () => ["paper", "find", join(EXAMPLE, "paper.json"), "zzqxv", "--json"], exit: EXIT.check, code: "paper/term-not-found" },
  {
    command: "import lmr-bench",
    args: () => ["import", "lmr-bench", join(empty, "nope"), "--out", join(tmp, "imported"), "--json"],
    exit: EXIT.input,
    code: "import/dir-missing",
  },
  {
    command: "export",
    args: () => ["export", "--format", "jsonl", "--out", join(tmp, "x.jsonl"), "--tasks-dir", empty, "--json"],
    exit: EXIT.input,
    code: "usage/no-tasks",
  },
  { command: "ci init", args: () => ["ci", "init", "--out", join(tmp, "ci.yml"), "--json"], exit: EXIT.ok },
  { command: "new", args: () => ["new", "--json"], exit: EXIT.input, code: "new/missing-flag" },
  { command: "lmr", args: () => ["no-such-command", "--json"], exit: EXIT.input, code: "usage/bad-args" },
];

function jsonCommands(cmd: Command): string[] {
  const own = cmd.options.some((o) => o.long === "--json") ? [commandPath(cmd)] : [];
  return [...own, ...cmd.commands.flatMap(jsonCommands)];
}

describe("--json output", () => {
  it("the cases cover every command that has --json", async () => {
    const all = new Set(jsonCommands(await createProgram()));
    expect(all.size).toBeGreaterThan(20);
    expect([...all].filter((c) => !CASES.some((k) => k.command === c))).toEqual([]);
  });

  // two at a time: each is a node process; the machine is shared
  it("is one envelope per run, valid against schema/cli-envelope.schema.json, agreeing with the exit code", async () => {
    const failures: string[] = [];
    const queue = [...CASES];
    const worker = async (): Promise<void> => {
      for (let c = queue.shift(); c; c = queue.shift()) {
        const args = c.args();
        const r = await runCli(args, { env: { LMR_DOCKER: join(empty, "no-docker"), LMR_PYTHON: process.env.LMR_PYTHON ?? "python3" } });
        const where = `lmr ${args.join(" ")}`;
        let out: { ok: boolean; command: string; error?: { code: string; kind: keyof typeof EXIT_OF_KIND } };
        try {
          out = JSON.parse(r.stdout) as typeof out;
        } catch {
          failures.push(`${where}: stdout is not one JSON value (exit ${r.exitCode}): ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 300)}`);
          continue;
        }
        if (!validate(out)) failures.push(`${where}: ${JSON.stringify(schemaErrors())}`);
        if (r.exitCode !== c.exit) failures.push(`${where}: exit ${r.exitCode}, expected ${c.exit}: ${r.stdout.slice(0, 300)}`);
        if (out.command !== c.command) failures.push(`${where}: command '${out.command}', expected '${c.command}'`);
        if (out.ok !== (r.exitCode === 0)) failures.push(`${where}: ok ${out.ok} with exit ${r.exitCode}`);
        if (out.error) {
          if (!isErrorCode(out.error.code)) failures.push(`${where}: code ${out.error.code} is not in ERROR_CODES`);
          else if (ERROR_CODES[out.error.code] !== out.error.kind) failures.push(`${where}: kind ${out.error.kind} is not ${out.error.code}'s`);
          if (EXIT_OF_KIND[out.error.kind] !== r.exitCode) failures.push(`${where}: kind ${out.error.kind} but exit ${r.exitCode}`);
          if (c.code !== undefined && out.error.code !== c.code) failures.push(`${where}: code ${out.error.code}, expected ${c.code}`);
        }
      }
    };
    await Promise.all([worker(), worker()]);
    expect(failures).toEqual([]);
  }, 120_000);

  it("the schema refuses what the commands used to print: a bare value, {ok} without command, an error without kind", () => {
    expect(validate([{ id: "x" }])).toBe(false);
    expect(validate({ ok: true, tasks: 1, problems: [] })).toBe(false);
    expect(validate({ ok: false, command: "mask", error: { code: "mask/compile-failed", message: "x", line: 3 } })).toBe(false);
    expect(validate({ ok: false, command: "report", error: { code: "report.not-a-run", kind: "input", message: "x" } })).toBe(false);
    expect(validate({ ok: true, command: "env build", data: { images: [] } })).toBe(true);
  });
});

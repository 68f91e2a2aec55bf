import { checkRelativePath } from "../core/paths.js";
import { CATEGORIES } from "./types.js";
import { checkPaperPin } from "./paper-checks.js";
import type { DuplicateKey } from "./json-text.js";
import type { Finding } from "./schema-errors.js";
import { suggestClosest } from "./suggest.js";
import { checkEnvironment } from "./environment-checks.js";

/*
 * Checks the schema cannot express, on a manifest that may not match the schema:
 * every accessor tolerates missing or mistyped fields (the schema reports those).
 */

type Obj = Record<string, unknown>;

export function asObject(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}
function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
function asString(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** A manifest path field, with its JSON pointer. */
interface PathField {
  pointer: string;
  value: string;
  /** Where the path points: the task folder, the upstream tree, or the workspace the agent gets. */
  base: "task" | "upstream" | "workspace";
}

/** Every path in the manifest that must be a plain relative path (upstream.path excepted: it may go up). */
function listPathFields(data: unknown): PathField[] {
  const m = asObject(data) ?? {};
  const out: PathField[] = [];
  const add = (pointer: string, v: unknown, base: PathField["base"]) => {
    const s = asString(v);
    if (s !== undefined) out.push({ pointer, value: s, base });
  };
  add("/instruction", m.instruction, "task");
  add("/paper/text", asObject(m.paper)?.text, "task");
  add("/record/driver", asObject(m.record)?.driver, "task");
  asArray(asObject(m.record)?.generators).forEach((g, i) => {
    add(`/record/generators/${i}/script`, asObject(g)?.script, "task");
    asArray(asObject(g)?.outputs).forEach((o, j) => add(`/record/generators/${i}/outputs/${j}`, o, "task"));
  });
  asArray(asObject(m.workspace)?.remove).forEach((r, i) => add(`/workspace/remove/${i}/path`, asObject(r)?.path, "upstream"));
  asArray(asObject(m.workspace)?.mask).forEach((r, i) => add(`/workspace/mask/${i}/file`, asObject(r)?.file, "upstream"));
  asArray(asObject(m.workspace)?.strip).forEach((r, i) => add(`/workspace/strip/${i}/file`, asObject(r)?.file, "upstream"));
  const tests = asObject(m.tests);
  asArray(tests?.files).forEach((f, i) => add(`/tests/files/${i}`, f, "task"));
  asArray(tests?.fixtures).forEach((f, i) => add(`/tests/fixtures/${i}`, f, "task"));
  add("/tests/mount", tests?.mount, "workspace");
  add("/upstream/subdir", asObject(m.upstream)?.subdir, "upstream");
  asArray(m.context_files).forEach((f, i) => add(`/context_files/${i}`, f, "upstream"));
  asArray(m.targets).forEach((t, i) => add(`/targets/${i}/file`, asObject(t)?.file, "upstream"));
  asArray(m.prepare).forEach((s, i) => {
    const step = asObject(s);
    for (const key of ["notebook", "out", "file"]) add(`/prepare/${i}/${key}`, step?.[key], "upstream");
  });
  asArray(asObject(m.verification)?.allowed_leaks).forEach((l, i) => add(`/verification/allowed_leaks/${i}/file`, asObject(l)?.file, "upstream"));
  return out;
}

const PATH_BASES: Record<PathField["base"], string> = {
  task: 'task folder, e.g. "tests/test_loss.py"',
  upstream: 'upstream tree, e.g. "src/model.py"',
  workspace: 'workspace, e.g. "lmr_tests"',
};

function checkPaths(data: unknown): Finding[] {
  const findings: Finding[] = [];
  for (const f of listPathFields(data)) {
    const why = checkRelativePath(f.value);
    if (why === undefined) continue;
    findings.push({
      pointer: f.pointer,
      message: `${why}: ${JSON.stringify(f.value)}`,
      hint: `use a relative path with '/' inside the ${PATH_BASES[f.base]}`,
      replaces: ["minLength"],
    });
  }
  return findings;
}

/** Field checks on one manifest; `folderName` is the name of its task folder. */
export function checkSemantics(data: unknown, folderName: string, duplicateKeys: DuplicateKey[] = []): Finding[] {
  const m = asObject(data);
  if (!m) return [];
  const findings: Finding[] = [];

  for (const d of duplicateKeys) {
    findings.push({
      pointer: d.pointer,
      message: `key '${d.key}' appears twice (${d.firstLine === d.line ? `line ${d.line}` : `lines ${d.firstLine} and ${d.line}`}); JSON keeps only the last`,
      hint: "remove one of them",
    });
  }

  const id = asString(m.id);
  if (id !== undefined && id !== folderName) {
    findings.push({
      pointer: "/id",
      message: `id '${id}' does not match its folder name '${folderName}'`,
      hint: `rename the folder to '${id}', or set "id": "${folderName}"`,
    });
  }

  const category = asString(m.category);
  if (category !== undefined && !(CATEGORIES as readonly string[]).includes(category)) {
    const close = suggestClosest(category, CATEGORIES);
    findings.push({
      pointer: "/category",
      message: `unknown category ${JSON.stringify(category)}`,
      hint: close ? `did you mean ${JSON.stringify(close)}?` : `use one of the nine: ${CATEGORIES.map((c) => JSON.stringify(c)).join(", ")}`,
      replaces: ["enum"],
    });
  }

  const upstream = asObject(m.upstream);
  const commit = asString(upstream?.commit);
  if (upstream && "repo" in upstream && !("path" in upstream) && commit !== undefined && !/^[0-9a-f]{40}$/.test(commit)) {
    const upper = /^[0-9A-F]{40}$/i.test(commit);
    findings.push({
      pointer: "/upstream/commit",
      message: `commit must be a full 40-hex SHA, got '${commit}'`,
      hint: upper ? "write the SHA in lowercase" : `git rev-parse ${/^[0-9a-fA-F]+$/.test(commit) ? commit : "<short>"} in the upstream clone`,
      replaces: ["pattern"],
    });
  }

  findings.push(...checkPaths(data));
  findings.push(...checkTargets(m));
  findings.push(...checkLineOrder(m));
  findings.push(...checkPaperPin(m));
  findings.push(...checkEnvironment(m.environment));
  findings.push(...checkTestRunner(m));

  const tests = asObject(m.tests);
  const perTest = tests?.timeout_per_test_s;
  const total = tests?.timeout_total_s;
  if (typeof perTest === "number" && typeof total === "number" && perTest > total) {
    findings.push({
      pointer: "/tests/timeout_per_test_s",
      message: `per-test timeout ${perTest}s is longer than the total timeout ${total}s`,
      hint: "make timeout_per_test_s at most timeout_total_s",
    });
  }
  return findings;
}

function checkTargets(m: Obj): Finding[] {
  const findings: Finding[] = [];
  const seen = new Map<string, number>();
  asArray(m.targets).forEach((raw, i) => {
    const t = asObject(raw);
    if (!t) return;
    const file = asString(t.file);
    const symbol = asString(t.symbol);
    if (file !== undefined && symbol !== undefined) {
      const key = JSON.stringify([file, symbol, t.line ?? null]);
      const first = seen.get(key);
      if (first !== undefined) {
        findings.push({
          pointer: `/targets/${i}`,
          message: `target ${symbol} in ${file} is already /targets/${first}`,
          hint: "remove the duplicate, or give each definition its own `line`",
        });
      } else {
        seen.set(key, i);
      }
    }
    if (t.mode === "region" && t.region === undefined) {
      findings.push({
        pointer: `/targets/${i}/region`,
        message: 'mode "region" needs a region',
        hint: 'add "region": {"start": {"line": N}, "end": {"line": M}} with lines inside the body, or use mode "body"',
      });
    } else if (typeof t.mode === "string" && t.mode !== "region" && t.region !== undefined) {
      findings.push({
        pointer: `/targets/${i}/region`,
        message: `mode ${JSON.stringify(t.mode)} takes no region`,
        hint: 'remove "region", or set "mode": "region"',
      });
    }
  });
  return findings;
}

/** Start/end pairs given as line numbers must not run backwards. */
function checkLineOrder(m: Obj): Finding[] {
  const findings: Finding[] = [];
  const check = (pointer: string, start: unknown, end: unknown) => {
    const a = asObject(start)?.line;
    const b = asObject(end)?.line;
    if (typeof a === "number" && typeof b === "number" && a > b) {
      findings.push({ pointer: `${pointer}/end`, message: `end line ${b} is before start line ${a}`, hint: "swap start and end" });
    }
  };
  asArray(m.targets).forEach((t, i) => {
    const region = asObject(asObject(t)?.region);
    if (region) check(`/targets/${i}/region`, region.start, region.end);
  });
  asArray(m.prepare).forEach((s, i) => {
    const step = asObject(s);
    if (step?.kind === "extract-function") check(`/prepare/${i}`, step.start, step.end);
  });
  return findings;
}

/** One finding per task whose id another validated task also uses, naming the other files. */
export function checkUniqueIds(tasks: { id: unknown; file: string }[]): Map<string, Finding> {
  const byId = new Map<string, string[]>();
  for (const t of tasks) {
    if (typeof t.id !== "string") continue;
    byId.set(t.id, [...(byId.get(t.id) ?? []), t.file]);
  }
  const out = new Map<string, Finding>();
  for (const [id, files] of byId) {
    if (files.length < 2) continue;
    for (const file of files) {
      const others = files.filter((f) => f !== file);
      out.set(file, {
        pointer: "/id",
        message: `id '${id}' is also used by ${others.join(", ")}`,
        hint: "give every task its own id (and folder name)",
      });
    }
  }
  return out;
}

const NODE_TEST_FILE = /\.(m?[jt]s|c[jt]s|tsx?)$/;

/**
 * Test files the runner can run: node:test takes JavaScript/TypeScript modules, pytest
 * Python files; pytest arguments mean nothing to node:test. The runner decides where a
 * mismatch would otherwise fail: in the middle of a verify, as a collection error.
 */
function checkTestRunner(m: Obj): Finding[] {
  const tests = asObject(m.tests);
  if (!tests) return [];
  const node = tests.runner === "node-test";
  const findings: Finding[] = [];
  asArray(tests.files).forEach((f, i) => {
    const file = asString(f);
    if (file === undefined) return;
    if (node && !NODE_TEST_FILE.test(file)) {
      findings.push({
        pointer: `/tests/files/${i}`,
        message: `'${file}' is not a JavaScript or TypeScript file, and tests.runner is "node-test"`,
        hint: 'name node:test files *.test.ts or *.test.mjs, or drop "runner" to run pytest',
      });
    } else if (!node && /\.(m?[jt]s|c[jt]s|tsx?)$/.test(file)) {
      findings.push({
        pointer: `/tests/files/${i}`,
        message: `'${file}' is a JavaScript/TypeScript file, but pytest runs the tests`,
        hint: 'set "runner": "node-test" in tests to run node:test files',
      });
    }
  });
  const candidate = asObject(tests.candidate);
  if (candidate) {
    const listed = new Set(asArray(tests.files).map(asString));
    const paths: [string, unknown][] = [
      ["/tests/candidate/setup", candidate.setup],
      ...asArray(candidate.files).map((f, i): [string, unknown] => [`/tests/candidate/files/${i}`, f]),
    ];
    const names = new Map<string, string>();
    for (const [pointer, value] of paths) {
      const file = asString(value);
      if (file === undefined) continue;
      const name = file.slice(file.lastIndexOf("/") + 1);
      if (!listed.has(file))
        findings.push({ pointer, message: `'${file}' is not one of tests.files`, hint: "list it in tests.files too: the candidate gets grader files only" });
      if (/^test_.*\.py$|_test\.py$/.test(name) || file.startsWith("fixtures/")) {
        findings.push({
          pointer,
          message: `'${file}' is a test or a fixture: the candidate must never see them`,
          hint: "give the candidate only set-up code and helper modules; keep expected values in the tests",
        });
      }
      const before = names.get(name);
      if (before !== undefined && before !== file)
        findings.push({
          pointer,
          message: `'${file}' and '${before}' have the same name: the candidate's files sit in one folder`,
          hint: "rename one of them",
        });
      names.set(name, file);
    }
  }
  if (node && asArray(tests.pytest_args).length > 0) {
    findings.push({
      pointer: "/tests/pytest_args",
      message: 'pytest_args are given, but tests.runner is "node-test"',
      hint: "remove pytest_args: node:test takes none",
    });
  }
  return findings;
}

#!/usr/bin/env node
// Grades every task's reference solution and its masked stub with `lmr eval`, as two models of
// one run: what a sound dataset gives is every reference passed and every stub not passed.
// The submissions are files-JSONL rows made from the built bundles (reference/ and the masked
// workspace's target files), so they go through the same path as a model's.
//
//   node scripts/eval-references.mjs [--tasks-dir DIR] [--mirror DIR] [--out RUN_DIR] [-j N]
//
// Exit 0 when every reference passed and no stub did, 1 otherwise (the odd ones printed),
// 2 on bad usage or when lmr eval itself failed.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const args = process.argv.slice(2);
let tasksDir = "tasks";
let mirror;
let out;
let jobs;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--tasks-dir") tasksDir = args[++i];
  else if (a === "--mirror") mirror = args[++i];
  else if (a === "--out") out = args[++i];
  else if (a === "-j" || a === "--jobs") jobs = args[++i];
  else usage(`unknown argument ${a}`);
}

function usage(why) {
  process.stderr.write(`eval-references: ${why}\nusage: node scripts/eval-references.mjs [--tasks-dir DIR] [--mirror DIR] [--out RUN_DIR] [-j N]\n`);
  process.exit(2);
}

function lmr(argv) {
  return new Promise((done) => {
    execFile("node", [CLI, ...argv], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const work = await mkdtemp(join(tmpdir(), "lmr-eval-references-"));
out ??= join(work, "run");
const bundles = join(work, "bundles");
const mirrorArgs = mirror ? ["--mirror", resolve(mirror)] : [];
const built = await lmr(["build", "--tasks-dir", tasksDir, "--out", bundles, ...mirrorArgs, "--json"]);
if (built.code !== 0) {
  process.stderr.write(`eval-references: lmr build failed:\n${built.stderr}`);
  process.exit(2);
}
const rows = [];
for (const b of JSON.parse(built.stdout).data) {
  const bundle = JSON.parse(await readFile(join(b.dir, "bundle.json"), "utf8"));
  const files = [...new Set(bundle.targets.map((t) => t.file))];
  const read = async (root) => Object.fromEntries(await Promise.all(files.map(async (f) => [f, await readFile(join(b.dir, root, f), "utf8")])));
  rows.push({ task_id: bundle.task_id, model: "reference", files: await read("reference") });
  rows.push({ task_id: bundle.task_id, model: "stub", files: await read("workspace") });
}
const jsonl = join(work, "submissions.jsonl");
await writeFile(jsonl, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
const t0 = performance.now();
const graded = await lmr([
  "eval",
  "--tasks-dir",
  tasksDir,
  "--set",
  "all",
  "--submissions",
  jsonl,
  "--out",
  out,
  ...mirrorArgs,
  ...(jobs ? ["-j", jobs] : []),
  "--json",
]);
const seconds = ((performance.now() - t0) / 1000).toFixed(0);
if (graded.code !== 0 && !graded.stdout.trim().startsWith("{")) {
  process.stderr.write(`eval-references: lmr eval failed (exit ${graded.code}):\n${graded.stderr}`);
  process.exit(2);
}
const summary = JSON.parse(graded.stdout).data;
const verdicts = (model) =>
  Object.fromEntries((summary.models.find((m) => m.model === model)?.tasks ?? []).map((t) => [t.task_id, t.results[0]?.verdict ?? "missing"]));
const ref = verdicts("reference");
const stub = verdicts("stub");
const ids = [...new Set(rows.map((r) => r.task_id))].sort();
const badRef = ids.filter((id) => ref[id] !== "passed");
const badStub = ids.filter((id) => stub[id] === "passed" || stub[id] === undefined || stub[id] === "missing");
process.stdout.write(
  `references: ${ids.length - badRef.length}/${ids.length} passed; stubs: ${ids.filter((id) => stub[id] === "passed").length}/${ids.length} passed (graded in ${seconds} s; run folder ${out})\n`,
);
for (const id of badRef) process.stdout.write(`  reference of ${id}: ${ref[id] ?? "missing"}\n`);
for (const id of badStub) process.stdout.write(`  stub of ${id}: ${stub[id] ?? "missing"}\n`);
const counts = {};
for (const id of ids) counts[stub[id]] = (counts[stub[id]] ?? 0) + 1;
process.stdout.write(
  `  stub verdicts: ${Object.entries(counts)
    .map(([v, n]) => `${n} ${v}`)
    .join(", ")}\n`,
);
process.exit(badRef.length + badStub.length === 0 ? 0 : 1);

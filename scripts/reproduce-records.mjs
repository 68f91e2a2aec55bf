#!/usr/bin/env node
// Re-verifies tasks and compares the outcome with their committed verification.json:
// the inputs' hashes, reference and stub outcomes, the alternatives, the kill count and
// the survivors. Used to show that records made under one backend (bubblewrap on the
// host's packages) are reproduced under another (a task image with --sandbox docker).
//
//   node scripts/reproduce-records.mjs [--sandbox docker] [--mirror DIR] TASK_DIR...
//
// Exit 0 when every record is reproduced, 1 when one differs (each difference printed),
// 2 on bad usage. Timings are printed for information, never compared.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const args = process.argv.slice(2);
let sandbox = "docker";
let mirror;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === "--sandbox") sandbox = args[++i];
  else if (a === "--mirror") mirror = args[++i];
  else if (a.startsWith("-")) usage(`unknown option ${a}`);
  else dirs.push(resolve(a));
}
if (dirs.length === 0) usage("no task folders given");

function usage(why) {
  process.stderr.write(`reproduce-records: ${why}\nusage: node scripts/reproduce-records.mjs [--sandbox docker|bwrap|none] [--mirror DIR] TASK_DIR...\n`);
  process.exit(2);
}

/** What a record claims, reduced to what another backend must reproduce exactly. */
function claims(r) {
  const s = r.steps;
  const statuses = (runs) =>
    runs
      .map((x) => x.status)
      .sort()
      .join(",");
  return {
    ok: r.ok,
    "inputs.task": r.inputs.task,
    "inputs.workspace": r.inputs.workspace,
    "inputs.reference": r.inputs.reference,
    "inputs.grader": r.inputs.grader,
    fixtures: s.fixtures.skipped ? "skipped" : String(s.fixtures.ok),
    reference: statuses(s.reference.runs),
    "reference tests": s.reference.runs.map((x) => `${x.passed}p`).join(","),
    stub: statuses(s.stub.runs),
    alternatives: s.alternatives.alternatives
      .map((a) => `${a.name}:${a.status}`)
      .sort()
      .join(","),
    "mutants total": s.mutants.total,
    "mutants killed": s.mutants.killed,
    survivors: (s.mutants.survivors ?? [])
      .map((x) => x.id)
      .sort()
      .join(","),
    equivalent: (s.mutants.equivalent ?? [])
      .map((x) => x.id)
      .sort()
      .join(","),
    leaks: (s.leaks.leaks ?? []).filter((l) => !l.allowed).length,
  };
}

const committed = new Map();
for (const dir of dirs) {
  try {
    const rec = JSON.parse(await readFile(join(dir, "verification.json"), "utf8"));
    committed.set(rec.task_id, rec);
  } catch (err) {
    usage(`${join(dir, "verification.json")}: ${err.message}`);
  }
}

const cliArgs = ["verify", ...dirs, "--sandbox", sandbox, "--force", "--no-write", "--json", ...(mirror ? ["--mirror", mirror] : [])];
const t0 = performance.now();
const out = await new Promise((res) => {
  execFile(process.execPath, [CLI, ...cliArgs], { maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => res({ code: err?.code ?? 0, stdout, stderr }));
});
let fresh;
try {
  // the --json envelope (schema/cli-envelope.schema.json): the records are its data
  const envelope = JSON.parse(out.stdout);
  fresh = envelope.data;
  if (!fresh) throw new Error(`${envelope.error?.code}: ${envelope.error?.message}`);
} catch {
  process.stderr.write(`reproduce-records: lmr verify printed no JSON (exit ${out.code}):\n${out.stderr}\n`);
  process.exit(1);
}

let differing = 0;
for (const rec of fresh.tasks) {
  const before = committed.get(rec.task_id);
  const a = claims(before);
  const b = claims(rec);
  const diffs = Object.keys(a).filter((k) => String(a[k]) !== String(b[k]));
  const where = `${before.environment?.backend ?? "?"} → ${rec.environment?.backend ?? "?"}${rec.environment?.image ? ` (${rec.environment.image.tag})` : ""}`;
  const time = `${Math.round(before.timings?.total_s ?? 0)} s → ${Math.round(rec.timings?.total_s ?? 0)} s`;
  if (diffs.length === 0) {
    process.stdout.write(
      `= ${rec.task_id}: reproduced [${where}; ${time}]: reference ${b.reference}, stub ${b.stub}, mutants ${b["mutants killed"]}/${b["mutants total"]}, alternatives ${b.alternatives || "none"}\n`,
    );
  } else {
    differing++;
    process.stdout.write(`≠ ${rec.task_id}: differs [${where}; ${time}]\n`);
    for (const k of diffs) process.stdout.write(`    ${k}: committed ${JSON.stringify(a[k])}, now ${JSON.stringify(b[k])}\n`);
    if (!rec.ok && rec.failure) process.stdout.write(`    now failing at ${rec.failure.step}: ${rec.failure.reason}\n`);
  }
}
process.stdout.write(
  `${fresh.tasks.length - differing}/${fresh.tasks.length} records reproduced with --sandbox ${sandbox} in ${Math.round((performance.now() - t0) / 1000)} s\n`,
);
process.exit(differing === 0 ? 0 : 1);

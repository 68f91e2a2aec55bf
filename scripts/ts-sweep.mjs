#!/usr/bin/env node
// Masks every function and method of the .ts/.tsx sources that well-known npm packages ship
// (rxjs, mobx, immer, @reduxjs/toolkit, @tanstack/query-core: devDependencies at exact
// versions), one at a time, and checks each result: the masker finds what the compiler API
// finds; it parses; only the body span changed; header, JSDoc and decorators kept; and no
// new type error in the file. Uses the built library and tools: run `npm run build && npx tsc -p tools` first.
//   node scripts/ts-sweep.mjs [--every N] [--package NAME]... [--match TEXT]... [--no-types] [--plain-stubs] [--importers] [--json]
// --package: only these packages; --match: only files whose path (relative to the package)
// contains one of the texts (to rerun the failing ones); --plain-stubs: stubs without the
// type checker's help (`any` returns, as lmr mask makes with no tsconfig), to see what it fixes.
// Exit 0 when every definition passes, 1 otherwise.
import { formatTsSweepReport, listPackageSources, sweepTsFiles, SWEEP_PACKAGES } from "../dist-dev/sweep/ts-packages.js";
import { relative } from "node:path";

const USAGE = "usage: node scripts/ts-sweep.mjs [--every N] [--package NAME]... [--match TEXT]... [--no-types] [--plain-stubs] [--importers] [--json]\n";
const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(USAGE);
  process.exit(0);
}
// an unknown flag (a typo, or --help's cousins) would otherwise run the whole 40-minute sweep
const WITH_VALUE = ["--every", "--package", "--match"];
const PLAIN = ["--no-types", "--plain-stubs", "--importers", "--json"];
for (let i = 0; i < args.length; i++) {
  if (WITH_VALUE.includes(args[i]) && i + 1 < args.length) i++;
  else if (!PLAIN.includes(args[i])) {
    process.stderr.write(`unknown or incomplete argument: ${args[i]}\n${USAGE}`);
    process.exit(2);
  }
}
const values = (flag) => args.flatMap((a, i) => (a === flag && i + 1 < args.length ? [args[i + 1]] : []));
const every = values("--every").length > 0 ? Number(values("--every")[0]) : 1;
const packages = values("--package");
const matches = values("--match");
if (!Number.isInteger(every) || every < 1 || packages.some((p) => !SWEEP_PACKAGES.includes(p))) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const reports = [];
for (const name of SWEEP_PACKAGES) {
  if (packages.length > 0 && !packages.includes(name)) continue;
  const pkg = await listPackageSources(name);
  const files = pkg.files.filter((f, i) => i % every === 0 && (matches.length === 0 || matches.some((m) => relative(pkg.root, f).includes(m))));
  const report = await sweepTsFiles(files, {
    root: pkg.root,
    typeCheck: !args.includes("--no-types"),
    checkImporters: args.includes("--importers"),
    plainStubs: args.includes("--plain-stubs"),
    onFile: (file, done, total) => {
      if (process.stderr.isTTY) process.stderr.write(`\r\u001b[2K${name} ${done}/${total}`);
    },
  });
  if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
  reports.push({ package: `${name}@${pkg.version}`, ...report });
  if (!args.includes("--json")) process.stdout.write(`${formatTsSweepReport(report, `${name}@${pkg.version}: `)}\n`);
}
const defs = reports.reduce((n, r) => n + r.defs, 0);
const ok = reports.reduce((n, r) => n + r.ok, 0);
if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ defs, ok, packages: reports }, null, 2)}\n`);
else process.stdout.write(`total: ${ok}/${defs} defs masked OK (${((100 * ok) / Math.max(defs, 1)).toFixed(2)}%)\n`);
process.exitCode = ok === defs && reports.every((r) => r.failures.length === 0) ? 0 : 1;

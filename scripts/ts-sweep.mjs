#!/usr/bin/env node
// Masks every function and method of the .ts/.tsx sources that well-known npm packages ship
// (rxjs, mobx, immer, @reduxjs/toolkit, @tanstack/query-core: devDependencies at exact
// versions), one at a time, and checks each result: the masker finds what the compiler API
// finds; it parses; only the body span changed; header, JSDoc and decorators kept; and no
// new type error in the file. Uses the built library: run `npx tsc -p .` first.
//   node scripts/ts-sweep.mjs [--every N] [--no-types] [--importers] [--json]
// Exit 0 when every definition passes, 1 otherwise.
import { formatTsSweepReport, listPackageSources, sweepTsFiles, SWEEP_PACKAGES } from "../dist/mask/ts-sweep.js";

const args = process.argv.slice(2);
const at = args.indexOf("--every");
const every = at >= 0 ? Number(args[at + 1]) : 1;
if (!Number.isInteger(every) || every < 1) {
  process.stderr.write("usage: node scripts/ts-sweep.mjs [--every N] [--no-types] [--importers] [--json]\n");
  process.exit(2);
}
const reports = [];
for (const name of SWEEP_PACKAGES) {
  const pkg = await listPackageSources(name);
  const files = pkg.files.filter((_, i) => i % every === 0);
  const report = await sweepTsFiles(files, {
    root: pkg.root,
    typeCheck: !args.includes("--no-types"),
    checkImporters: args.includes("--importers"),
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

#!/usr/bin/env node
// Masks every function and method of the Python stdlib's top-level .py files, one at a
// time, and checks each result (compiles; only the body span changed; signature and
// docstring kept). Uses the built library and tools: run `npm run build && npx tsc -p tools` first.
//   node scripts/stdlib-sweep.mjs [--every N] [--verify changed|full] [--json]
// Python: $LMR_PYTHON or python3. Exit 0 when every def passes, 1 otherwise.
import { PythonMasker } from "../dist/mask/python/masker.js";
import { formatSweepReport, listStdlibFiles, sweepFiles } from "../dist-dev/sweep/stdlib.js";

const args = process.argv.slice(2);
const valueOf = (flag, fallback) => {
  const i = args.indexOf(flag);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const every = Number(valueOf("--every", "1"));
const verify = valueOf("--verify", "changed");
if (!Number.isInteger(every) || every < 1 || !["changed", "full"].includes(verify)) {
  process.stderr.write("usage: node scripts/stdlib-sweep.mjs [--every N] [--verify changed|full] [--json]\n");
  process.exit(2);
}

const files = (await listStdlibFiles()).filter((_, i) => i % every === 0);
const report = await sweepFiles(files, {
  masker: new PythonMasker({ verify, cacheSize: 1 }),
  onFile: (file, done, total) => {
    if (process.stderr.isTTY) process.stderr.write(`\r\u001b[2K${done}/${total} ${file}`);
  },
});
if (process.stderr.isTTY) process.stderr.write("\r\u001b[2K");
process.stdout.write(args.includes("--json") ? `${JSON.stringify(report, null, 2)}\n` : `${formatSweepReport(report)}\n`);
process.exitCode = report.ok === report.defs && report.failures.length === 0 && report.unparsed.length === 0 ? 0 : 1;

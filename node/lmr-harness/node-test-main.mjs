// lmr's node:test entry: each test file is imported inside a suite named after it, so a
// test's id is `<file>::<suite>::<test>` and a file that fails to import is a collection
// error of that file. The reporter is told how many files to wait for before any runs.
import { readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe } from "node:test";
import { pathToFileURL } from "node:url";
import { handOver, takeOver } from "./channel.mjs";

const TEST_FILE = /(\.(test|spec)\.(m?[jt]s|c[jt]s|tsx?)|(^|[/\\])test[-_][^/\\]*\.(m?[jt]s|c[jt]s|tsx?))$/;

function expand(root, path) {
  const abs = resolve(root, path);
  if (!statSync(abs).isDirectory()) return [relative(root, abs)];
  return readdirSync(abs, { recursive: true })
    .map((f) => join(abs, String(f)))
    .filter((f) => TEST_FILE.test(f) && statSync(f).isFile())
    .map((f) => relative(root, f))
    .sort();
}

const args = takeOver("args");
const files = [...new Set(args.files.flatMap((p) => expand(args.root, p)))];
handOver("suites", files.length);
for (const file of files) {
  describe(file, async () => {
    await import(pathToFileURL(resolve(args.root, file)).href);
  });
}

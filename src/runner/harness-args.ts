import type { RunRequest } from "./types.js";

/** The harness's argv after the interpreter: `run_pytest.py … -- <pytest args>`, the same for every backend. */
export function harnessArgs(o: {
  req: RunRequest;
  harness: string;
  ini: string;
  root: string;
  mountDir: string;
  mount: string;
  /** `["--results-fd", "3"]` on the host, `["--results-socket", PATH]` in a container. */
  results: string[];
  /** RLIMIT_AS for the harness to set itself (when no prlimit wraps it). */
  asBytes?: number;
  /** The candidate's socket: the tests reach the code under test through it (lmr_bridge). */
  bridge?: string;
}): string[] {
  const { req, mount } = o;
  const paths = (req.testPaths ?? ["."]).map((p) => (p === "." ? mount : `${mount}/${p}`));
  const pytestArgs = [
    "-c",
    o.ini,
    `--rootdir=${o.root}`,
    `--confcutdir=${o.mountDir}`,
    "-p",
    "no:cacheprovider",
    "-o",
    "addopts=",
    "--color=no",
    "-rfE",
    "--tb=short",
    ...(req.pytestArgs ?? []),
    ...(req.deselect ?? []).flatMap((id) => ["--deselect", id]),
    ...(req.stopAtFirstFailure ? ["--maxfail=1"] : []),
    ...paths,
  ];
  return [
    "-s",
    "-B",
    o.harness,
    ...o.results,
    "--root",
    o.root,
    "--mount",
    mount,
    "--per-test-s",
    String(req.timeoutPerTestS ?? 0),
    ...(o.bridge ? ["--bridge", o.bridge] : []),
    ...(o.asBytes ? ["--as-bytes", String(o.asBytes)] : []),
    ...(req.allowPlugins ?? []).flatMap((p) => ["--allow-plugin", p]),
    ...(req.reportImports ? ["--report-imports"] : []),
    ...(req.traceLines ?? []).flatMap((f) => ["--trace-lines", f]),
    ...(req.firstTests ?? []).flatMap((id) => ["--first", id]),
    "--",
    ...pytestArgs,
  ];
}

/**
 * Node's argv for a node:test run: the preload opens the channel and loads the reporter
 * before node-test-main.mjs imports any test file (see node/lmr-harness/). `--bail` is
 * stopAtFirstFailure; node:test has no way to reorder tests, so `firstTests` is not used,
 * and per-test line tracing is pytest-only.
 */
export function nodeHarnessArgs(o: { req: RunRequest; dir: string; root: string; mount: string; results: string[]; bridge?: string }): string[] {
  const { req, mount } = o;
  const paths = (req.testPaths ?? ["."]).map((p) => (p === "." ? mount : `${mount}/${p.split("::")[0]}`));
  return [
    "--import",
    `${o.dir}/node-test-preload.mjs`,
    `--test-reporter=${o.dir}/node-test-reporter.mjs`,
    `${o.dir}/node-test-main.mjs`,
    ...o.results,
    "--root",
    o.root,
    "--mount",
    mount,
    "--per-test-s",
    String(req.timeoutPerTestS ?? 0),
    ...(o.bridge ? ["--bridge", o.bridge] : []),
    ...(req.reportImports ? ["--report-imports"] : []),
    ...(req.stopAtFirstFailure ? ["--bail"] : []),
    "--",
    ...new Set(paths),
  ];
}

/** The node:test candidate's arguments after `node` (node/lmr-harness/candidate.mjs). */
export function nodeCandidateArgs(o: {
  dir: string;
  socket: string;
  tree: string;
  copyFrom?: string;
  support?: string;
  setup?: string;
  reportImports?: boolean;
}): string[] {
  return [
    `${o.dir}/candidate.mjs`,
    "--socket",
    o.socket,
    "--tree",
    o.tree,
    ...(o.copyFrom ? ["--copy-from", o.copyFrom] : []),
    ...(o.support ? ["--support", o.support] : []),
    ...(o.setup ? ["--setup", o.setup] : []),
    ...(o.reportImports ? ["--report-imports"] : []),
  ];
}

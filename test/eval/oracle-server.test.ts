import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FORKED_NOTE } from "../../src/runner/run-tests.js";
import { probeBwrap } from "../../src/runner/index.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli } from "../helpers/run-cli.js";
import { readResults, targetFiles, writeJsonl } from "./helpers.js";

const TASK = "pref-loss";
const bwrap = await probeBwrap();

/** Processes whose command line names `dir` (a server left behind). */
async function processesNaming(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmd = (await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ");
    if (cmd.includes(dir)) out.push(cmd.slice(0, 160));
  }
  return out;
}

/**
 * `lmr eval` forks each task's tests from one oracles' server (runner/oracle-server.ts) and
 * starts every candidate fresh. The verdicts are those of fresh oracles; a candidate sees
 * neither the server's folder nor another run's bridge; nothing is left when the run ends.
 */
describe.skipIf(!bwrap.ok)("lmr eval's oracles' server", () => {
  let root: string;
  let bundles: string;
  let subs: string;
  beforeAll(async () => {
    root = await makeTempDir("oracle-server");
    bundles = join(root, "b");
    const r = await runCli(["build", "--tasks-dir", "examples/tasks", "--out", bundles, `examples/tasks/${TASK}`]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [file] = await targetFiles(bundles, TASK);
    const reference = await readFile(join(bundles, TASK, "reference", file!), "utf8");
    const masked = await readFile(join(bundles, TASK, "workspace", file!), "utf8");
    // a correct solution that, once imported in the candidate, looks for the server's folder and its own bridge's siblings
    const snoop = `${reference}
import glob as _glob, os as _os, sys as _sys
_sock = _sys.argv[_sys.argv.index("--socket") + 1] if "--socket" in _sys.argv else ""
_bridges = _os.path.dirname(_os.path.dirname(_sock))
_seen = sorted(_glob.glob("/**/lmr-fork-*", recursive=False) + _glob.glob(${JSON.stringify(root)} + "/**/lmr-fork-*", recursive=True))
print("LMR-PROBE servers=%s bridges=%s" % (_seen, sorted(_os.listdir(_bridges)) if _os.path.isdir(_bridges) else None), file=_sys.stderr)
`;
    const rows = [
      ...[0, 1, 2].map((s) => ({ task_id: TASK, model: "ref", sample: String(s), files: { [file!]: reference } })),
      ...[0, 1].map((s) => ({ task_id: TASK, model: "stub", sample: String(s), files: { [file!]: masked } })),
      { task_id: TASK, model: "snoop", sample: "0", files: { [file!]: snoop } },
    ];
    subs = join(root, "subs.jsonl");
    await writeJsonl(subs, rows);
  }, 120_000);
  afterAll(removeTempDirs);

  const evalRun = async (out: string, extra: string[] = []) => {
    const r = await runCli(
      [
        "eval",
        "--tasks-dir",
        "examples/tasks",
        "--tasks",
        TASK,
        "--submissions",
        subs,
        "--out",
        out,
        "--sandbox",
        "bwrap",
        "--python",
        "/usr/bin/python3",
        "-j",
        "2",
        ...extra,
      ],
      { env: { LMR_DOCKER: "/nonexistent/docker" } },
    );
    expect(r.exitCode, r.stderr).toBeLessThanOrEqual(1);
    return readResults(out);
  };

  it("gives the verdicts fresh oracles give, and a candidate reaches nothing of the server", async () => {
    const forkedOut = join(root, "forked");
    const freshOut = join(root, "fresh");
    const forked = await evalRun(forkedOut);
    const fresh = await evalRun(freshOut, ["--no-fork-server"]);
    expect([...forked.keys()].sort()).toEqual([
      "ref/pref-loss/0",
      "ref/pref-loss/1",
      "ref/pref-loss/2",
      "snoop/pref-loss/0",
      "stub/pref-loss/0",
      "stub/pref-loss/1",
    ]);
    for (const [key, r] of forked) {
      const f = fresh.get(key)!;
      expect(r.verdict, `${key}: ${r.reason}`).toBe(key.startsWith("stub/") ? "failed" : "passed");
      expect({ verdict: r.verdict, counts: r.counts, tests: r.tests.map((t) => [t.id, t.outcome]) }, key).toEqual({
        verdict: f.verdict,
        counts: f.counts,
        tests: f.tests.map((t) => [t.id, t.outcome]),
      });
    }
    const logOf = (out: string, model: string, sample: string) => readFile(join(out, "results", model, TASK, sample, "log.txt"), "utf8");
    expect(await logOf(forkedOut, "ref", "1")).toContain(FORKED_NOTE);
    expect(await logOf(freshOut, "ref", "1")).not.toContain(FORKED_NOTE);
    const probe = (await logOf(forkedOut, "snoop", "0")).split("\n").find((l) => l.startsWith("LMR-PROBE"));
    // no server folder anywhere it can look, and its bridge folder's parent holds its own run's folder only
    expect(probe).toMatch(/^LMR-PROBE servers=\[\] bridges=\['\d+'\]$/);
    // the server and its folders are gone with the run
    expect(await processesNaming(forkedOut)).toEqual([]);
    expect((await readdir(join(forkedOut, ".scratch")).catch(() => [])).filter((n) => n.startsWith("lmr-fork-"))).toEqual([]);
  }, 240_000);
});

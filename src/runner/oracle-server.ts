import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { toolkitPath } from "../core/paths.js";
import { RecordReader } from "./channel.js";
import type { OracleHost, OracleSlot } from "./execution.js";
import { Speaker, planArgs, withChanges, type PreloadPlan } from "./fork-server.js";
import { harnessArgs } from "./harness-args.js";
import { buildChildEnv } from "./limits.js";
import { openResultsSocket } from "./results-socket.js";
import { backendOf, type RunTarget } from "./run-target.js";
import { interpreterFolders } from "./run-tests.js";
import { makeSocketDir, type Scratch } from "./scratch.js";
import type { WrapOptions } from "./types.js";
import type { ProcessFacts } from "./verdict.js";

const SERVER = toolkitPath("python", "lmr_harness", "fork_server.py");
const HARNESS = toolkitPath("python", "lmr_harness", "run_pytest.py");
const HARNESS_INI = toolkitPath("python", "lmr_harness", "pytest.ini");

/**
 * The tests' side of `lmr eval`'s runs, forked from one long-lived process per task: the
 * oracles' fork server (python/lmr_harness/fork_server.py) has imported pytest and what the
 * task's tests import, and each sample's oracle is a forked harness child. Only the oracle is
 * forked: a submission's candidate is always a fresh process in a sandbox of its own (run-tests.ts),
 * so no sample's code shares a process, a sandbox or a folder with another's. The server's
 * sandbox holds the runs' graders and bridge folders, never a tree; its children run only our
 * tests, which take plain data from the candidate through the strict codec and never import
 * the submission. The verdict is decided from the child's own signed results socket, as in a
 * fresh run. Host backends (bwrap, none) and pytest only; elsewhere eval runs fresh oracles.
 *
 * The server starts in the background: a run's candidate starts beside it, and a run whose
 * server could not start runs a fresh oracle instead (its slot's `run` gives undefined).
 */
export class OracleServer implements OracleHost {
  private next = 0;
  private constructor(
    private readonly speaker: Promise<Speaker | undefined>,
    private readonly dir: string,
    private readonly oracleDir: string,
    private readonly bridgeDir: string,
    private readonly resultsDir: string,
  ) {}

  /** Makes the server's folders and starts it; undefined where a server cannot serve this target (callers run fresh oracles). */
  static async start(o: { target: RunTarget; plan?: PreloadPlan; scratchParent: string; threads?: number }): Promise<OracleServer | undefined> {
    const { target } = o;
    if (target.backend === "docker" || target.runner === "node-test" || !existsSync(target.python.path)) return undefined;
    const backend = backendOf(target);
    const dir = await mkdtemp(join(o.scratchParent, "lmr-fork-"));
    const oracleDir = join(dir, "o");
    // sockets live in short folders of their own (a run folder can be too deep for sun_path): the
    // bridges' (each candidate binds its run's) and the results' (no candidate sees it)
    const [bridgeDir, resultsDir] = await Promise.all([makeSocketDir(), makeSocketDir()]);
    await mkdir(oracleDir);
    const wrap: WrapOptions = {
      readOnly: interpreterFolders(target.python),
      writable: [oracleDir, bridgeDir, resultsDir],
      tmpfs: [
        { path: "/tmp", sizeMb: 512 },
        { path: "/dev/shm", sizeMb: 64 },
      ],
      chdir: oracleDir,
      network: false,
    };
    const argv = backend.wrap([target.python.path, "-s", "-B", SERVER, ...(await planArgs(oracleDir, "plan.json", o.plan))], wrap);
    const local = backend.name === "local";
    const env = withChanges(
      buildChildEnv({
        pythonPath: target.python.path,
        home: local ? oracleDir : "/tmp",
        tmp: local ? oracleDir : "/tmp",
        threads: o.threads ?? 1,
        network: false,
      }),
      o.plan?.envChanges,
    );
    const speaker = Speaker.connect(argv, env, oracleDir).then(
      (c) => c.speaker,
      () => undefined,
    );
    return new OracleServer(speaker, dir, oracleDir, bridgeDir, resultsDir);
  }

  /** Takes a prepared scratch's oracle side (its grader copy, home and tmp) into the server's folder. */
  async open(scratch: Scratch, mount: string): Promise<OracleSlot> {
    const id = String(this.next++);
    const oDir = join(this.oracleDir, id);
    const bDir = join(this.bridgeDir, id);
    await Promise.all([mkdir(oDir), mkdir(bDir)]);
    const paths = { oracleRoot: join(oDir, "root"), mountDir: join(oDir, "root", mount), oracleHome: join(oDir, "home"), oracleTmp: join(oDir, "tmp") };
    await Promise.all([rename(scratch.oracleRoot, paths.oracleRoot), rename(scratch.oracleHome, paths.oracleHome), rename(scratch.oracleTmp, paths.oracleTmp)]);
    const server = this.speaker;
    const results = join(this.resultsDir, `${id}.sock`);
    return {
      socketDir: bDir,
      paths,
      async run({ req, socket, memoryMb }) {
        const speaker = await server;
        if (!speaker) return undefined;
        const key = randomBytes(32).toString("hex");
        const sock = await openResultsSocket(results);
        try {
          const reader = new RecordReader(key, () => {});
          const streamDone = new Promise<void>((r) => {
            sock.stream.on("data", (d: Buffer) => reader.feed(d));
            sock.stream.on("end", () => r());
            sock.stream.on("close", () => r());
          });
          const argv = harnessArgs({
            req,
            harness: HARNESS,
            ini: HARNESS_INI,
            root: paths.oracleRoot,
            mountDir: paths.mountDir,
            mount,
            results: ["--results-socket", sock.path],
            bridge: socket,
            asBytes: memoryMb * 1024 * 1024,
          });
          const env = { HOME: paths.oracleHome, TMPDIR: paths.oracleTmp };
          const exit = await speaker.ask({ id, argv: argv.slice(3), key, env, log: join(oDir, "log.txt"), timeout_s: req.timeoutTotalS }, "exit", id);
          sock.endIfUnused();
          await Promise.race([streamDone, new Promise((r) => setTimeout(r, 2000))]);
          const facts: ProcessFacts = {
            exitCode: exit.code ?? null,
            signal: exit.signal ?? null,
            graderModified: [],
            stderrTail: "",
            ...(exit.t === "gone" ? { spawnError: `the oracles' server ended: ${exit.error ?? "no reason given"}` } : {}),
            ...(exit.timed_out ? { wallTimeoutS: req.timeoutTotalS } : {}),
          };
          if (sock.extraConnections() > 0) reader.state.problems.push("a second connection to the results socket");
          const log = (await readFile(join(oDir, "log.txt"), "utf8").catch(() => "")).slice(-48 * 1024);
          return { facts, reader, log };
        } finally {
          await sock.close().catch(() => undefined);
        }
      },
      close: () => Promise.all([oDir, bDir, results].map((d) => rm(d, { recursive: true, force: true }))).then(() => undefined),
    };
  }

  async close(): Promise<void> {
    await (await this.speaker)?.close();
    await Promise.all([this.dir, this.bridgeDir, this.resultsDir].map((d) => rm(d, { recursive: true, force: true })));
  }
}

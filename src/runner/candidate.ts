import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { toolkitPath } from "../core/paths.js";
import type { TestsSpec } from "../manifest/types.js";
import type { RunRequest } from "./types.js";
import { KILL_GRACE_MS, LogBuffer, killGroup } from "./supervise.js";

/** The candidate server (python/lmr_bridge/server.py), started as a script. */
export const CANDIDATE_SCRIPT = toolkitPath("python", "lmr_bridge", "candidate.py");
/** The candidate's /tmp and /dev/shm sizes (MiB) in a sandbox: what it may write besides its tree. */
export const CANDIDATE_TMP_MB = 512;
export const CANDIDATE_SHM_MB = 256;
/** The socket's name in a run's bridge folder. */
export const CANDIDATE_SOCKET = "candidate.sock";

/** The candidate server's arguments after the interpreter, for one run. */
export function candidateArgs(o: {
  script: string;
  socket: string;
  tree: string;
  /** Copy this folder into `tree` (a size-capped tmpfs) before listening. */
  copyFrom?: string;
  support?: string;
  setup?: string;
  traceLines?: string[];
  reportImports?: boolean;
  /** Modules of the tree the candidate imports before it serves (the targets'). */
  warm?: string[];
}): string[] {
  return [
    "-s",
    "-B",
    o.script,
    "--socket",
    o.socket,
    "--tree",
    o.tree,
    ...(o.copyFrom ? ["--copy-from", o.copyFrom] : []),
    ...(o.support ? ["--support", o.support] : []),
    ...(o.setup ? ["--setup", o.setup] : []),
    ...(o.traceLines ?? []).flatMap((f) => ["--trace-lines", f]),
    ...(o.reportImports ? ["--report-imports"] : []),
    ...(o.warm ?? []).flatMap((m) => ["--warm", m]),
  ];
}

/**
 * A running candidate process tree. `ready` is settled by the server's first line, which it
 * prints after it listens and before any code under test is imported: a candidate that ends
 * before it is ready could not start (ours to fix: `startError`); one that ends after it
 * was brought down by the code it ran, which the tests see as failures.
 */
export interface CandidateProcess {
  ready: Promise<boolean>;
  startError(): string | undefined;
  log: LogBuffer;
  /** Kills the whole candidate tree and waits for it to go. */
  stop(): Promise<void>;
}

/**
 * Starts the candidate. `kill` stops it where signalling its process group is not enough (a
 * container: the docker CLI is not the container); the group is killed in any case.
 */
export function spawnCandidate(argv: string[], env: Record<string, string>, cwd: string, kill?: () => void): CandidateProcess {
  const log = new LogBuffer();
  let child: ChildProcess | undefined;
  let isReady = false;
  let stopping = false;
  let startError: string | undefined;
  let stderrTail = "";
  let settle: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((r) => (settle = r));
  const exited = new Promise<void>((resolveExit) => {
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      startError = `cannot start the candidate: ${(e as Error).message}`;
      settle(false);
      resolveExit();
      return;
    }
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (!isReady && line.startsWith('{"t": "ready"')) {
        isReady = true;
        settle(true);
        return;
      }
      log.add(`${line}\n`);
    });
    child.stderr!.on("data", (d: Buffer) => {
      const text = d.toString();
      log.add(text);
      if (!isReady) stderrTail = (stderrTail + text).slice(-2000);
    });
    child.on("error", (e) => {
      startError ??= `cannot start the candidate: ${e.message}`;
      settle(false);
      resolveExit();
    });
    child.on("exit", (code, signal) => {
      if (!isReady && !stopping) {
        const tail = stderrTail.trim().split("\n").slice(-5).join("\n");
        startError ??= `the candidate process ended before it listened (${signal ? `signal ${signal}` : `exit code ${String(code)}`})${tail ? `: ${tail}` : ""}`;
        settle(false);
      }
      resolveExit();
    });
  });
  return {
    ready,
    startError: () => startError,
    log,
    stop: async () => {
      stopping = true;
      settle(false);
      kill?.();
      killGroup(child?.pid, "SIGKILL");
      await Promise.race([exited, new Promise((r) => setTimeout(r, KILL_GRACE_MS))]);
    },
  };
}

/**
 * What a run request takes of a task for its candidate: the candidate's files (tests.candidate)
 * and, for pytest, the targets' modules it imports before it serves, so that no test's clock
 * pays for importing the code under test (`pkg/mod.py` is `pkg.mod`).
 */
export function candidateRequest(m: {
  tests: Pick<TestsSpec, "candidate" | "runner">;
  targets: readonly { file: string }[];
}): Pick<RunRequest, "candidateFiles" | "candidateSetup" | "warmModules"> {
  const c = m.tests.candidate;
  const warm =
    m.tests.runner === "node-test"
      ? []
      : [
          ...new Set(
            m.targets
              .map((t) => t.file)
              .filter((f) => f.endsWith(".py"))
              .map((f) =>
                f
                  .slice(0, -3)
                  .replace(/\/__init__$/, "")
                  .split("/")
                  .join("."),
              ),
          ),
        ];
  return {
    ...(c?.files ? { candidateFiles: c.files } : {}),
    ...(c?.setup ? { candidateSetup: c.setup } : {}),
    ...(warm.length > 0 ? { warmModules: warm } : {}),
  };
}

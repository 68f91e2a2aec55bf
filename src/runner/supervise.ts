import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { RecordReader } from "./channel.js";
import type { ProcessFacts } from "./verdict.js";

/** Seconds a test may outlive its per-test alarm before the parent kills the run. */
const PER_TEST_GRACE_S = 3;
export const KILL_GRACE_MS = 2000;
const LOG_HEAD = 16 * 1024;
const LOG_TAIL = 48 * 1024;

/** Keeps the start and the end of a long log. */
export class LogBuffer {
  private head = "";
  private tail = "";
  private dropped = 0;
  add(s: string): void {
    if (this.head.length < LOG_HEAD) {
      const take = s.slice(0, LOG_HEAD - this.head.length);
      this.head += take;
      s = s.slice(take.length);
    }
    this.tail += s;
    if (this.tail.length > LOG_TAIL) {
      this.dropped += this.tail.length - LOG_TAIL;
      this.tail = this.tail.slice(-LOG_TAIL);
    }
  }
  text(): string {
    return this.dropped > 0 ? `${this.head}\n...[${this.dropped} characters dropped]...\n${this.tail}` : this.head + this.tail;
  }
}

export interface SuperviseSpec {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** The HMAC key, written on the child's stdin (never in argv, env or a file). */
  key: string;
  timeoutTotalS: number;
  timeoutPerTestS?: number | undefined;
  /**
   * When the wall limit starts: at spawn (host backends: starting a process is
   * part of the run), or at the harness's hello (docker: creating and starting
   * a container is ours, not the code's, and takes seconds on a loaded
   * machine); then `startTimeoutS` bounds the wait for that hello.
   */
  wallFrom?: "spawn" | "hello";
  startTimeoutS?: number;
  /** Where the signed records arrive: the child's fd 3, or a stream the caller feeds (docker's socket). */
  results: "fd3" | Readable;
  /** Stops the run (wall limit, a stuck test): `hard` after KILL_GRACE_MS. The default signals the child's process group. */
  stop?: (pid: number | undefined, hard: boolean) => void;
  /** After the child exited: what else must go (a process group, a container). */
  afterExit?: (pid: number | undefined) => void;
  /** Translate the child's exit into facts (docker reports a container's signal as 128+n). */
  readExit?: (code: number | null, signal: NodeJS.Signals | null, facts: ProcessFacts) => void;
  log: LogBuffer;
}

export function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // group already gone
  }
}

/**
 * Runs the child to its end: stdin gets the key, stdout/stderr go to the log,
 * the results stream to the record reader, whose `start`/`result` records arm
 * and clear the per-test watchdog; the wall limit stops the run. Resolves when
 * the child exited and every stream closed.
 */
export async function superviseRun(spec: SuperviseSpec): Promise<{ facts: ProcessFacts; reader: RecordReader }> {
  const facts: ProcessFacts = { exitCode: null, signal: null, graderModified: [], stderrTail: "" };
  const perTest = spec.timeoutPerTestS;
  const stopWith = spec.stop ?? ((pid, hard) => killGroup(pid, hard ? "SIGKILL" : "SIGTERM"));
  let stderrTail = "";
  let perTestTimer: NodeJS.Timeout | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  let child: ReturnType<typeof spawn> | undefined;
  let wall: NodeJS.Timeout | undefined;
  const armWall = (): void => {
    wall ??= setTimeout(() => {
      facts.wallTimeoutS = spec.timeoutTotalS;
      stop();
    }, spec.timeoutTotalS * 1000);
  };

  const stop = (): void => {
    stopWith(child?.pid, false);
    killTimer ??= setTimeout(() => stopWith(child?.pid, true), KILL_GRACE_MS);
  };
  const reader = new RecordReader(spec.key, (kind, state) => {
    if (kind === "hello") armWall();
    if (perTest === undefined) return;
    if (kind === "start" && state.running) {
      clearTimeout(perTestTimer);
      const id = state.running;
      perTestTimer = setTimeout(
        () => {
          facts.perTestKilled = { id, limitS: perTest };
          stop();
        },
        (perTest + PER_TEST_GRACE_S) * 1000,
      );
    } else if (kind === "result" || kind === "done") {
      clearTimeout(perTestTimer);
    }
  });

  await new Promise<void>((resolveRun) => {
    const c = spawn(spec.argv[0]!, spec.argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe", spec.results === "fd3" ? "pipe" : "ignore"],
    });
    child = c;
    let startTimer: NodeJS.Timeout | undefined;
    if (spec.wallFrom === "hello") {
      startTimer = setTimeout(
        () => {
          if (reader.state.hello) return;
          facts.startTimeoutS = spec.startTimeoutS;
          stop();
        },
        (spec.startTimeoutS ?? 120) * 1000,
      );
    } else armWall();
    const results = spec.results === "fd3" ? (c.stdio[3] as Readable) : spec.results;
    const streams = [c.stdout!, c.stderr!, results];
    let open = streams.length;
    let exited = false;
    const finish = (): void => {
      if (!exited || open > 0) return;
      clearTimeout(wall);
      clearTimeout(startTimer);
      clearTimeout(perTestTimer);
      clearTimeout(killTimer);
      resolveRun();
    };
    for (const s of streams) {
      s.on("error", () => {});
      s.on("close", () => {
        open--;
        finish();
      });
    }
    c.stdout!.on("data", (d: Buffer) => spec.log.add(d.toString()));
    c.stderr!.on("data", (d: Buffer) => {
      const text = d.toString();
      spec.log.add(text);
      stderrTail = (stderrTail + text).slice(-4000);
    });
    results.on("data", (d: Buffer) => reader.feed(d));
    c.stdin!.on("error", () => {});
    c.stdin!.end(`${spec.key}\n`);
    c.on("error", (e) => {
      facts.spawnError = `cannot start ${spec.argv[0]}: ${e.message}`;
      exited = true;
      open = 0;
      finish();
    });
    c.on("exit", (code, signal) => {
      facts.exitCode = code;
      facts.signal = signal;
      spec.readExit?.(code, signal, facts);
      exited = true;
      spec.afterExit?.(c.pid);
      setTimeout(() => {
        for (const s of streams) s.destroy();
      }, KILL_GRACE_MS).unref();
      finish();
    });
  });
  reader.end();
  facts.stderrTail = stderrTail;
  return { facts, reader };
}

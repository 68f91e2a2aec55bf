import { spawn, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { REPO_ROOT } from "../helpers/git-fixture.js";
import { CLI } from "../helpers/run-cli.js";

/** A CLI process started in the background, its output collected. */
export interface Spawned {
  child: ChildProcess;
  pid: number;
  output: () => string;
  /** Resolves with the exit code (or 128+signal). */
  exited: Promise<number>;
}

export function spawnCli(args: string[], env: Record<string, string> = {}): Spawned {
  // Its own process group, so a kill of the group takes the test processes it started too.
  const child = spawn("node", [CLI, ...args], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1", ...env },
  });
  let out = "";
  child.stdout!.on("data", (d) => (out += d.toString()));
  child.stderr!.on("data", (d) => (out += d.toString()));
  const exited = new Promise<number>((resolve) => child.on("exit", (code, signal) => resolve(code ?? 128 + (signal === "SIGKILL" ? 9 : 15))));
  return { child, pid: child.pid!, output: () => out, exited };
}

/** `lmr worker` over the example tasks, with a short lock so a killed worker's job comes back within seconds. */
export function spawnWorker(url: string, bundles: string, ...extra: string[]): Spawned {
  return spawnCli(["worker", "--queue", url, "--tasks-dir", "examples/tasks", "--bundles", bundles, "--lock-s", "2", ...extra]);
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** SIGTERM, then wait; a worker finishes its job first. */
export async function stopGracefully(p: Spawned): Promise<number> {
  if (p.child.exitCode === null) p.child.kill("SIGTERM");
  return p.exited;
}

/** The parent pid of a process, from /proc. */
async function readParent(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return f[1] ? Number(f[1]) : undefined;
}

/** Which of `candidates` `pid` descends from. */
export async function findAncestor(pid: number, candidates: number[]): Promise<number | undefined> {
  let p: number | undefined = pid;
  for (let i = 0; i < 64 && p !== undefined && p > 1; i++) {
    if (candidates.includes(p)) return p;
    p = await readParent(p);
  }
  return undefined;
}

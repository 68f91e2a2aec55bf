import { spawn } from "node:child_process";
import { createWriteStream, existsSync, type WriteStream } from "node:fs";
import { copyFile, lstat, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { LmrError } from "../core/errors.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { probeDocker } from "../env/docker-cli.js";
import { probeBwrap } from "../runner/backends.js";
import { createPidsLimit } from "../runner/limits.js";
import { copyTree } from "../runner/scratch.js";
import { trackContainer } from "../runner/docker/sweep.js";
import { KILL_GRACE_MS, killGroup } from "../runner/supervise.js";
import { agentEnv, bwrapAgentArgs, dockerAgentArgs, interpreterFolders, type AgentMounts } from "./sandbox.js";
import { AGENT_PATHS, expandTemplate } from "./template.js";
import { commitBaseline, diffWorkspace } from "./workspace-diff.js";
import { onStopSignal } from "../core/stop-signals.js";

export type AgentSandboxChoice = "auto" | "docker" | "bwrap";
export const AGENT_SANDBOX_CHOICES: readonly AgentSandboxChoice[] = ["auto", "docker", "bwrap"];

/**
 * One agent run, as plain data (a queue can carry it): which sample, the
 * masked workspace and instruction to copy, the command template and limits,
 * and where its files go.
 */
export interface AgentSampleInput {
  task_id: string;
  model: string;
  sample: string;
  /** The bundle's masked workspace: copied to scratch, never shown to the agent itself. */
  workspace: string;
  instruction: string;
  /** Command template (see template.ts). */
  command: string;
  timeout_s: number;
  network: boolean;
  sandbox: AgentSandboxChoice;
  /** Docker image with the agent installed (docker only). */
  image?: string;
  /** Names of environment variables passed to the agent (API keys); their values are never written. */
  env_names: string[];
  /** Host paths the agent may read (its own install), bound read-only at the same path (bwrap). */
  read_only: string[];
  /** Host paths that must stay hidden even under a bound folder. */
  hide: string[];
  /** RUN_DIR/agent/<model-folder>/<task>/<sample>: the files below go here. */
  out_dir: string;
  /** Scratch copies are made under it and removed after the run. */
  scratch_parent: string;
  /** Resume key: a rerun with the same key keeps this record. */
  key: string;
}

type AgentStatus = "finished" | "timeout" | "workspace-deleted" | "infra";

/** OUT_DIR/agent.json, written last: a sample has one exactly when its agent run is over and its files are in place. */
export interface AgentRecord {
  task_id: string;
  model: string;
  sample: string;
  key: string;
  status: AgentStatus;
  /** Why, for every status but a plain finish. */
  reason?: string;
  backend: "bwrap" | "docker" | "none";
  /** The command as run inside the sandbox (variables expanded; no environment values). */
  command: string;
  network: boolean;
  exit_code: number | null;
  signal: string | null;
  wall_s: number;
  timeout_s: number;
  /** Files the agent changed, added or deleted, relative to the workspace. */
  changed: string[];
  patch_bytes: number;
  /** Files the agent left in its out folder (a trajectory), kept under out/. */
  kept: string[];
  finished_at: string;
}

export const AGENT_FILES = {
  record: "agent.json",
  stdout: "stdout.txt",
  stderr: "stderr.txt",
  patch: "patch.diff",
  out: "out",
} as const;

/** Bytes of each of stdout and stderr kept; the rest is counted, not stored. */
const LOG_CAP = 8 * 1024 * 1024;
/** Bytes of the out folder kept. */
const OUT_CAP = 64 * 1024 * 1024;

/**
 * Runs one agent on a scratch copy of the masked workspace inside its own
 * sandbox, stops it at the wall limit (the whole process tree: process group,
 * pid namespace, pids cgroup or container), and diffs the copy against the
 * masked baseline. Never throws for the agent's own behaviour: a timeout or a
 * deleted workspace is a status; only our side failing (no sandbox, git
 * missing) is `infra`, recorded like the rest.
 */
export async function runAgentSample(input: AgentSampleInput): Promise<AgentRecord> {
  const t0 = performance.now();
  const base = {
    task_id: input.task_id,
    model: input.model,
    sample: input.sample,
    key: input.key,
    network: input.network,
    timeout_s: input.timeout_s,
  };
  const outDir = resolve(input.out_dir);
  await rm(join(outDir, AGENT_FILES.record), { force: true });
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await mkdir(input.scratch_parent, { recursive: true });
  const scratch = await mkdtemp(join(resolve(input.scratch_parent), "lmr-agent-"));
  let command = "";
  let backend: AgentRecord["backend"] = "none";
  try {
    const dirs = {
      workspace: join(scratch, "workspace"),
      out: join(scratch, "out"),
      home: join(scratch, "home"),
      git: join(scratch, "baseline.git"),
      gitHome: join(scratch, "git-home"),
    };
    await copyTree(
      input.workspace,
      dirs.workspace,
      (_rel, name, isDir) => name === ".git" || (isDir && name === "__pycache__") || (!isDir && (name.endsWith(".pyc") || name.endsWith(".pyo"))),
    );
    await Promise.all([mkdir(dirs.out), mkdir(dirs.home), mkdir(dirs.gitHome)]);
    const instruction = join(scratch, "instruction.md");
    await copyFile(input.instruction, instruction);
    const baseline = await commitBaseline(dirs.git, dirs.workspace, dirs.gitHome);
    command = expandTemplate(input.command, {
      instruction: AGENT_PATHS.instruction,
      workspace: AGENT_PATHS.workspace,
      out: AGENT_PATHS.out,
      model: input.model,
      task: input.task_id,
      sample: input.sample,
    });
    const mounts: AgentMounts = {
      workspace: dirs.workspace,
      instruction,
      out: dirs.out,
      home: dirs.home,
      readOnly: [...input.read_only, ...interpreterFolders([process.execPath])],
      hide: input.hide,
      network: input.network,
    };
    const pass: Record<string, string> = {};
    for (const name of input.env_names) {
      const v = process.env[name];
      if (v !== undefined) pass[name] = v;
    }
    const chosen = await chooseAgentBackend(input.sandbox, input.image);
    backend = chosen;
    const proc =
      chosen === "docker"
        ? await superviseAgent({ ...dockerCommand(input, mounts, pass, command), cwd: scratch, timeoutS: input.timeout_s, outDir })
        : await superviseBwrap(input, mounts, pass, command, scratch, outDir);
    const change = await diffWorkspace(baseline, dirs.gitHome);
    const kept = await keepOut(dirs.out, join(outDir, AGENT_FILES.out));
    const patch = change.kind === "patch" ? change.patch : "";
    await writeFile(join(outDir, AGENT_FILES.patch), patch);
    const status: AgentStatus = proc.timedOut ? "timeout" : change.kind === "deleted" ? "workspace-deleted" : "finished";
    const reason = proc.timedOut
      ? `the agent ran past its wall limit of ${input.timeout_s} s and was killed with its whole process tree`
      : change.kind === "deleted"
        ? change.reason
        : undefined;
    return await finish(
      {
        ...base,
        status,
        ...(reason ? { reason } : {}),
        backend,
        command,
        exit_code: proc.exitCode,
        signal: proc.signal,
        wall_s: seconds(t0),
        changed: change.kind === "patch" ? change.changed : [],
        patch_bytes: Buffer.byteLength(patch),
        kept,
        finished_at: new Date().toISOString(),
      },
      outDir,
    );
  } catch (err) {
    const reason = err instanceof LmrError ? err.format() : err instanceof Error ? err.message : String(err);
    return await finish(
      {
        ...base,
        status: "infra",
        reason,
        backend,
        command,
        exit_code: null,
        signal: null,
        wall_s: seconds(t0),
        changed: [],
        patch_bytes: 0,
        kept: [],
        finished_at: new Date().toISOString(),
      },
      outDir,
    );
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => {});
  }
}

function seconds(t0: number): number {
  return Math.round(performance.now() - t0) / 1000;
}

async function finish(record: AgentRecord, outDir: string): Promise<AgentRecord> {
  await writeJsonAtomic(join(outDir, AGENT_FILES.record), record);
  return record;
}

/** `auto`: docker when an image is named and a daemon answers, else bwrap. There is no unsandboxed choice. */
async function chooseAgentBackend(choice: AgentSandboxChoice, image: string | undefined): Promise<"bwrap" | "docker"> {
  if (choice === "docker" || (choice === "auto" && image)) {
    if (!image)
      throw new LmrError({
        code: "agent/no-image",
        pointer: "--agent-image",
        message: "--agent-sandbox docker needs the image the agent is installed in",
        hint: "pass --agent-image IMAGE, or --agent-sandbox bwrap",
      });
    const d = await probeDocker();
    if (d.ok) return "docker";
    if (choice === "docker")
      throw new LmrError({ code: "agent/no-docker", message: `--agent-sandbox docker: ${d.reason}`, hint: "start dockerd, or use --agent-sandbox bwrap" });
  }
  const b = await probeBwrap();
  if (b.ok) return "bwrap";
  throw new LmrError({
    code: "agent/no-sandbox",
    message: `no sandbox for the agent: ${b.reason ?? "bwrap is not available"}`,
    hint: "install bubblewrap (apt-get install bubblewrap) or give --agent-image with a Docker daemon running; lmr never runs an agent unsandboxed",
  });
}

interface Supervised {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
}

async function superviseBwrap(
  input: AgentSampleInput,
  mounts: AgentMounts,
  pass: Record<string, string>,
  command: string,
  scratch: string,
  outDir: string,
): Promise<Supervised> {
  const bwrap = [process.env.LMR_BWRAP, "/usr/bin/bwrap", "/usr/local/bin/bwrap"].find((p) => p && p.startsWith("/")) ?? "/usr/bin/bwrap";
  const pids = await createPidsLimit(1024, `${process.pid}-agent-${Math.random().toString(36).slice(2, 10)}`);
  try {
    return await superviseAgent({
      argv: [...pids.prefix, ...bwrapAgentArgs(bwrap, mounts), "/bin/sh", "-c", command],
      env: agentEnv(pass, binFolders(input.read_only)),
      cwd: scratch,
      timeoutS: input.timeout_s,
      outDir,
    });
  } finally {
    await pids.release();
  }
}

const liveGroups = new Set<number>();
let groupsHooked = false;
let hookSignals = true;

/**
 * For a long-lived process with a signal policy of its own (lmr worker: a
 * SIGTERM finishes the jobs in progress): agents are not killed on the
 * signal, only when the process exits.
 */
export function leaveAgentSignalsToCaller(): void {
  hookSignals = false;
}

/**
 * Agents run in their own process group, out of reach of a Ctrl-C to lmr: on
 * SIGINT/SIGTERM/SIGHUP every live agent's group is killed before lmr exits
 * with that signal (unless leaveAgentSignalsToCaller was called); on any exit
 * the live groups are killed. (kill -9 of lmr: the next run's lock takes the
 * leftovers.)
 */
function trackGroup(pid: number): () => void {
  liveGroups.add(pid);
  if (!groupsHooked) {
    groupsHooked = true;
    if (hookSignals) onStopSignal(() => liveGroups.forEach((g) => killGroup(g, "SIGKILL")));
    process.once("exit", () => {
      for (const g of liveGroups) killGroup(g, "SIGKILL");
    });
  }
  return () => liveGroups.delete(pid);
}

/** An --agent-bind folder that is a bin/ folder or holds one goes on the agent's PATH, first. */
function binFolders(paths: string[]): string[] {
  return paths.map((p) => resolve(p)).flatMap((p) => (basename(p) === "bin" ? [p] : existsSync(join(p, "bin")) ? [join(p, "bin")] : []));
}

function dockerCommand(
  input: AgentSampleInput,
  mounts: AgentMounts,
  pass: Record<string, string>,
  command: string,
): { argv: string[]; env: Record<string, string>; stop: () => void; untrack: () => void } {
  const name = `lmr-agent-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const untrack = trackContainer(name);
  const env = {
    HOME: AGENT_PATHS.home,
    LMR_WORKSPACE: AGENT_PATHS.workspace,
    LMR_INSTRUCTION: AGENT_PATHS.instruction,
    LMR_AGENT_OUT: AGENT_PATHS.out,
    ...pass,
  };
  const stop = (): void => {
    spawn("docker", ["rm", "-f", name], { stdio: "ignore" }).on("error", () => {});
  };
  return {
    argv: ["docker", ...dockerAgentArgs({ name, image: input.image!, mounts, env, command })],
    env: { ...process.env, ...env } as Record<string, string>,
    stop,
    untrack,
  };
}

/** A capped copy of a stream into a file: the first LOG_CAP bytes, then a note of how many were left out. */
function capped(file: string): { write: (d: Buffer) => void; close: () => Promise<void> } {
  const ws: WriteStream = createWriteStream(file);
  let kept = 0;
  let dropped = 0;
  return {
    write(d) {
      const room = LOG_CAP - kept;
      if (room > 0) ws.write(d.subarray(0, room));
      kept += Math.min(room, d.length);
      dropped += Math.max(0, d.length - Math.max(room, 0));
    },
    close: () =>
      new Promise((r) => {
        if (dropped > 0) ws.write(`\n[lmr: ${dropped} more bytes not kept]\n`);
        ws.end(() => r());
      }),
  };
}

/**
 * Runs the sandbox's outer process in its own process group; at the wall
 * limit the group gets SIGTERM, then SIGKILL (and `stop`, for a container).
 * bwrap's --die-with-parent and pid namespace take everything inside with it.
 */
async function superviseAgent(o: {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  timeoutS: number;
  outDir: string;
  stop?: () => void;
  untrack?: () => void;
}): Promise<Supervised> {
  const stdout = capped(join(o.outDir, AGENT_FILES.stdout));
  const stderr = capped(join(o.outDir, AGENT_FILES.stderr));
  const result = await new Promise<Supervised>((resolveRun) => {
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = spawn(o.argv[0]!, o.argv.slice(1), { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const untrackGroup = child.pid !== undefined ? trackGroup(child.pid) : () => {};
    const wall = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, "SIGTERM");
      o.stop?.();
      killTimer = setTimeout(() => killGroup(child.pid, "SIGKILL"), KILL_GRACE_MS);
    }, o.timeoutS * 1000);
    child.stdout.on("data", (d: Buffer) => stdout.write(d));
    child.stderr.on("data", (d: Buffer) => stderr.write(d));
    let done = false;
    const end = (r: Supervised): void => {
      if (done) return;
      done = true;
      untrackGroup();
      o.untrack?.();
      clearTimeout(wall);
      clearTimeout(killTimer);
      resolveRun(r);
    };
    child.on("error", (e) => {
      stderr.write(Buffer.from(`lmr: cannot start the sandbox (${o.argv[0]}): ${e.message}\n`));
      end({ exitCode: null, signal: null, timedOut: false });
    });
    child.on("exit", (code, signal) => {
      // whatever is left in the group (a daemonised child holding the pipes) goes now
      killGroup(child.pid, "SIGKILL");
      o.stop?.();
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, KILL_GRACE_MS).unref();
      end({ exitCode: code, signal, timedOut });
    });
  });
  await Promise.all([stdout.close(), stderr.close()]);
  return result;
}

/** Copies the regular files the agent left in its out folder (never a link), up to OUT_CAP bytes. */
async function keepOut(from: string, to: string): Promise<string[]> {
  const kept: string[] = [];
  let budget = OUT_CAP;
  const walk = async (dir: string, rel: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p, r);
      else if (e.isFile()) {
        const st = await lstat(p);
        if (st.size > budget) continue;
        budget -= st.size;
        await mkdir(join(to, rel), { recursive: true });
        await copyFile(p, join(to, r));
        kept.push(r);
      }
    }
  };
  await walk(from, "");
  return kept;
}

/** The submission row an agent record becomes (lmr eval's JSONL): a patch, or why there is none. */
export function submissionRow(r: AgentRecord, patch: string): Record<string, unknown> {
  const key = { task_id: r.task_id, model: r.model, sample: r.sample };
  if (r.status === "timeout") return { ...key, timeout: r.reason };
  if (r.status === "workspace-deleted") return { ...key, invalid: r.reason };
  if (r.status === "infra") return { ...key, infra: r.reason };
  if (patch.trim() === "") return { ...key, invalid: `the agent changed nothing in its workspace (exit ${r.exit_code ?? r.signal})` };
  return { ...key, patch };
}

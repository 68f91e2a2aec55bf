import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { runAgentSample, type AgentRecord, type AgentSampleInput } from "../agent/run-agent.js";
import type { BundleManifest } from "../bundle/index.js";
import { BUNDLE_FILES } from "../bundle/index.js";
import { isLmrError } from "../core/errors.js";
import { TOOLKIT_ROOT } from "../core/paths.js";
import type { WorkerTasks } from "./worker-tasks.js";

/** What of an agent run's input travels: everything but this machine's paths, which the worker chooses for itself. */
export type WireAgentInput = Omit<AgentSampleInput, "workspace" | "instruction" | "hide" | "out_dir" | "scratch_parent">;

/**
 * One `agent/run` job (`lmr agent run --queue`): the agent runs on the
 * worker, on the masked workspace of the worker's own bundle of the task
 * (refused, as an infra record naming the task, when the task's hashes
 * differ there). Environment variables named by `env_names` are read on the
 * worker: their values never travel.
 */
export interface AgentPayload {
  v: 1;
  run_id: string;
  toolkit_version: string;
  hashes: BundleManifest["hashes"];
  input: WireAgentInput;
}

/** The record and the sample's files (paths relative to its agent folder, base64), for the coordinator to write. */
export interface AgentReturn {
  worker: string;
  record: AgentRecord;
  files: Record<string, string>;
}

/** Bytes of an agent folder sent back; beyond it files are left out and the record says so. */
const RETURN_CAP = 32 * 1024 * 1024;

export interface WorkerAgentEnv {
  workerId: string;
  tasks: WorkerTasks;
  tasksDir: string;
  bundlesDir: string;
  scratch: string;
  toolkitVersion: string;
}

export async function runQueuedAgent(p: AgentPayload, env: WorkerAgentEnv): Promise<AgentReturn> {
  const t0 = performance.now();
  const infra = (reason: string): AgentReturn => ({ worker: env.workerId, files: {}, record: infraRecord(p.input, reason, (performance.now() - t0) / 1000) });
  if (p.v !== 1) return infra(`worker ${env.workerId} does not read agent job format ${String(p.v)}; run the same lmr on the coordinator and the workers`);
  if (p.toolkit_version !== env.toolkitVersion)
    return infra(`worker ${env.workerId} runs lmr ${env.toolkitVersion}, the run was planned by lmr ${p.toolkit_version}`);
  let outDir: string | undefined;
  try {
    const { task, bundle } = await env.tasks.resolveTask(p.input.task_id, p.hashes);
    outDir = await mkdtemp(join(env.scratch, "agent-out-"));
    const record = await runAgentSample({
      ...p.input,
      workspace: join(bundle.dir, BUNDLE_FILES.workspace),
      instruction: join(task.dir, task.manifest.instruction),
      // this worker's checkout, bundles, toolkit and scratch are what the coordinator's are there
      hide: [resolve(env.tasksDir), resolve(env.bundlesDir), TOOLKIT_ROOT, env.scratch],
      out_dir: outDir,
      scratch_parent: join(env.scratch, "agents"),
    });
    return { worker: env.workerId, record, files: await readFolder(outDir) };
  } catch (err) {
    return infra(isLmrError(err) ? err.format() : err instanceof Error ? err.message : String(err));
  } finally {
    if (outDir) await rm(outDir, { recursive: true, force: true });
  }
}

export function infraRecord(input: WireAgentInput, reason: string, wall: number): AgentRecord {
  return {
    task_id: input.task_id,
    model: input.model,
    sample: input.sample,
    key: input.key,
    status: "infra",
    reason,
    backend: "none",
    command: "",
    network: input.network,
    exit_code: null,
    signal: null,
    wall_s: Math.round(wall * 1000) / 1000,
    timeout_s: input.timeout_s,
    changed: [],
    patch_bytes: 0,
    kept: [],
    finished_at: new Date().toISOString(),
  };
}

async function readFolder(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  let budget = RETURN_CAP;
  for (const e of (await readdir(dir, { withFileTypes: true, recursive: true })).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    if (!e.isFile()) continue;
    const abs = join(e.parentPath, e.name);
    const data = await readFile(abs);
    if (data.length > budget) continue;
    budget -= data.length;
    out[abs.slice(dir.length + 1)] = data.toString("base64");
  }
  return out;
}

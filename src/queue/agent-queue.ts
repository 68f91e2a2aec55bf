import { mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { AGENT_FILES, type AgentRecord, type AgentSampleInput } from "../agent/run-agent.js";
import type { BundleManifest } from "../bundle/index.js";
import { writeJsonAtomic } from "../core/fs-atomic.js";
import { infraRecord, type AgentPayload, type AgentReturn, type WireAgentInput } from "./agent-job.js";
import type { QueueConnection } from "./connection.js";
import { openRunQueue } from "./run-queue.js";

export interface AgentQueueOptions {
  connection: QueueConnection;
  runId: string;
  toolkitVersion: string;
  /** Tries per agent run; only infra records are tried again (default 2). */
  attempts?: number;
  /** Beyond the agent's own wall limit, how long a run may wait for a worker before it is an infra record (default 1 h). */
  queueWaitS?: number;
}

export interface AgentQueue {
  /** Runs one sample's agent on some worker; its files land in input.out_dir as a local run writes them. */
  run(input: AgentSampleInput, hashes: BundleManifest["hashes"]): Promise<AgentRecord>;
  workers(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * The coordinator's side of `lmr agent run --queue`: one `agent/run` job per
 * sample to run, id'd by its resume key (a restarted coordinator takes a run
 * a worker finished meanwhile, without running it again). The returned files
 * are written into the sample's agent folder with agent.json last, so the
 * folder is complete exactly when a local run's would be.
 */
export async function openAgentQueue(opts: AgentQueueOptions): Promise<AgentQueue> {
  const runQueue = await openRunQueue(opts.connection, "agent", opts.runId);
  const { queue, events } = runQueue;
  const byWorker: Record<string, number> = {};

  const run = async (input: AgentSampleInput, hashes: BundleManifest["hashes"]): Promise<AgentRecord> => {
    const { workspace: _w, instruction: _i, hide: _h, out_dir: outDir, scratch_parent: _s, ...wire } = input;
    const data: AgentPayload = { v: 1, run_id: opts.runId, toolkit_version: opts.toolkitVersion, hashes, input: wire as WireAgentInput };
    const jobId = `a-${input.key.slice(0, 40)}`;
    const t0 = performance.now();
    let job = await queue.add("agent/run", data, {
      jobId,
      attempts: opts.attempts ?? 2,
      backoff: { type: "exponential", delay: 2_000 },
      removeOnComplete: false,
      removeOnFail: false,
    });
    // a job an earlier coordinator left that broke on our side is run again, as a local rerun would
    const state = await job.getState().catch(() => "unknown");
    if (state === "completed" || state === "failed") {
      const prev = parse(job.returnvalue);
      if (state === "failed" || !prev || prev.record.status === "infra") {
        await job.remove().catch(() => {});
        job = await queue.add("agent/run", data, {
          jobId,
          attempts: opts.attempts ?? 2,
          backoff: { type: "exponential", delay: 2_000 },
          removeOnComplete: false,
          removeOnFail: false,
        });
      }
    }
    let ret: AgentReturn | undefined;
    try {
      ret = parse(await job.waitUntilFinished(events, (input.timeout_s + (opts.queueWaitS ?? 3600)) * 1000));
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      const why = /timed out|TTL/i.test(msg)
        ? `no worker finished the agent run in time (is \`lmr worker --queue …\` running?)`
        : `the queue gave up on this agent run: ${msg}`;
      await job.remove().catch(() => {});
      return writeSample(outDir, infraRecord(wire as WireAgentInput, why, (performance.now() - t0) / 1000), {});
    }
    if (!ret)
      return writeSample(
        outDir,
        infraRecord(
          wire as WireAgentInput,
          "a worker returned something that is not an agent run; run the same lmr on the coordinator and the workers",
          (performance.now() - t0) / 1000,
        ),
        {},
      );
    byWorker[ret.worker] = (byWorker[ret.worker] ?? 0) + 1;
    const record = await writeSample(outDir, ret.record, ret.files);
    await queue.remove(jobId).catch(() => {});
    return record;
  };

  return {
    run,
    workers: () => ({ ...byWorker }),
    close: () => runQueue.close(),
  };
}

/** The sample's agent folder as the worker left it, agent.json last; names that would leave the folder are dropped. */
async function writeSample(outDir: string, record: AgentRecord, files: Record<string, string>): Promise<AgentRecord> {
  const root = resolve(outDir);
  await rm(root, { recursive: true, force: true });
  await mkdir(root, { recursive: true });
  for (const [rel, b64] of Object.entries(files)) {
    const abs = resolve(root, rel);
    if (rel === AGENT_FILES.record || !abs.startsWith(`${root}/`)) continue;
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, Buffer.from(b64, "base64"));
  }
  await writeJsonAtomic(join(root, AGENT_FILES.record), record);
  return record;
}

function parse(v: unknown): AgentReturn | undefined {
  try {
    const r = (typeof v === "string" ? JSON.parse(v) : v) as AgentReturn | undefined;
    return r && typeof r === "object" && typeof r.worker === "string" && r.record && typeof r.record === "object" ? r : undefined;
  } catch {
    return undefined;
  }
}

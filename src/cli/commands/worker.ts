import type { Command } from "commander";
import { join } from "node:path";
import { EXIT } from "../../core/errors.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { serveWorker } from "../../queue/serve-worker.js";
import { defaultCacheDir } from "../../source/cache.js";
import { action } from "../action.js";
import { int } from "../api-flags.js";
import { printJsonOk } from "../output.js";

interface WorkerFlags {
  queue: string;
  tasksDir: string;
  concurrency: string;
  requests: string;
  agents: string;
  run?: string;
  lockS: string;
  idleExit?: string;
  python?: string;
  mirror?: string;
  bundles?: string;
  json?: boolean;
}

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description(
      "grade samples (and make chat requests) from a Redis queue that `lmr eval --queue` (`lmr generate --queue`) fills; any number, on any machines",
    )
    .requiredOption("--queue <URL>", "redis://[user:password@]host[:port][/db] or rediss://… (password also from $LMR_REDIS_PASSWORD)")
    .option("--tasks-dir <DIR>", "this machine's checkout of the tasks", "tasks")
    .option("-c, --concurrency <N>", "samples graded at once", "1")
    .option("--agents <N>", "agents run at once for each `lmr agent run --queue` run (they run in their own sandboxes here)", "1")
    .option("--requests <N>", "chat requests made at once for each \`lmr generate --queue\` run (the API key comes from this machine's environment)", "8")
    .option("--run <RUN_ID>", "serve only this run (run.json's run_id); default: every run with a live coordinator")
    .option("--lock-s <S>", "a job's lock without renewal: a killed worker's job is graded again after about this long", "30")
    .option("--idle-exit <S>", "exit 0 after S seconds with nothing to grade (batch jobs); default: run until SIGTERM")
    .option("--python <PATH>", "Python interpreter for the tests; default $LMR_PYTHON, else python3")
    .option("--mirror <DIR>", "local mirror of github.com repositories; default $LMR_MIRROR")
    .option("--bundles <DIR>", "where built bundles are kept (default $LMR_CACHE/bundles)")
    .option("--json", "print {worker, done, reason} when it exits")
    .addHelpText(
      "after",
      `
A worker takes one job per (task, model, sample) from the queue of every run
whose coordinator is alive, builds the task's bundle from its own --tasks-dir
(cached by the task's hash), grades it in its sandbox and sends the result back;
the coordinator writes the run folder. A job whose task this checkout does not
have, or hashes differently, is answered with an infra result naming the task,
never with a verdict; infra results are retried with backoff (maybe elsewhere).
SIGTERM or Ctrl-C: finish the jobs in progress, take no new one, exit 0; a
second signal exits at once (the job is graded again after --lock-s).
kill -9: the job's lock expires and another worker grades it.
A \`lmr generate --queue\` run's jobs are single chat requests: the worker makes
one try against the run's --base-url with the key from the variable the run
names (--api-key-env; set it here, it never travels) and returns the reply or
the failure; the coordinator retries, caches and writes the submission.
A \`lmr agent run --queue\` run's jobs are agent runs: the worker runs the agent
on its own bundle of the task, in its own sandbox, with the --agent-env values
of its own environment, and sends back the sample's files.
Exit codes: 0 stopped or idle, 2 bad usage, 3 Redis unreachable at start.

Examples:
  $ lmr worker --queue redis://queue.internal:6379 --tasks-dir tasks -c 2
  $ LMR_REDIS_PASSWORD=… lmr worker --queue rediss://redis.example.org:6380/0 --idle-exit 300`,
    )
    .action(action(runWorkerCommand));
}

async function runWorkerCommand(flags: WorkerFlags): Promise<number> {
  const connection = parseQueueUrl(flags.queue);
  let signals = 0;
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) process.exit(128 + (sig === "SIGINT" ? 2 : 15));
    process.stderr.write(`lmr worker: ${sig}: finishing the job(s) in progress, then exiting (again to exit now)\n`);
    stop();
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  const outcome = await serveWorker({
    connection,
    tasksDir: flags.tasksDir,
    bundlesDir: flags.bundles ?? join(defaultCacheDir(), "bundles"),
    concurrency: int(flags.concurrency, "--concurrency", 1),
    requests: int(flags.requests, "--requests", 1),
    agents: int(flags.agents, "--agents", 1),
    lockS: int(flags.lockS, "--lock-s", 1),
    ...(flags.run ? { runId: flags.run } : {}),
    ...(flags.idleExit !== undefined ? { idleExitS: int(flags.idleExit, "--idle-exit", 1) } : {}),
    ...(flags.python ? { python: flags.python } : {}),
    ...(flags.mirror ? { mirror: flags.mirror } : {}),
    log: (line) => process.stderr.write(`${line}\n`),
    stop: stopped,
  });
  process.off("SIGTERM", onSignal);
  process.off("SIGINT", onSignal);
  if (flags.json) printJsonOk("worker", { worker: outcome.id, done: outcome.done, reason: outcome.reason });
  else process.stderr.write(`lmr worker ${outcome.id}: ${outcome.reason}, graded ${outcome.done} sample(s)\n`);
  return EXIT.ok;
}

import type { Command } from "commander";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { AGENT_DIR, AGENT_RUN_FILES, runAgents, type AgentRunSummary } from "../../agent/run-agents.js";
import { AGENT_SANDBOX_CHOICES, type AgentSandboxChoice } from "../../agent/run-agent.js";
import { AGENT_PATHS, AGENT_PRESETS, TEMPLATE_VARIABLES, presetTemplate, templateVariables } from "../../agent/template.js";
import { EXIT, LmrError } from "../../core/errors.js";
import { sha256 } from "../../core/hash.js";
import { TOOLKIT_VERSION } from "../../evaluate/run-eval.js";
import { openAgentQueue } from "../../queue/agent-queue.js";
import { parseQueueUrl } from "../../queue/connection.js";
import { createQueueDispatcher } from "../../queue/dispatch-queue.js";
import { formatRate, formatVerdictCounts } from "../../report/format.js";
import { writeSummary } from "../../report/summarize.js";
import type { Summary } from "../../report/types.js";
import type { TaskSetChoice } from "../../run-folder/index.js";
import { hostChoiceFor, parseSandboxChoice } from "../../runner/backends.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { action } from "../action.js";
import { int, levelOption, usage } from "../api-flags.js";
import { addGrading, addQueue, addTaskSelection } from "../option-groups.js";
import { loadChosenTasks } from "../choose-tasks.js";
import { printJsonFailed, printJsonOk, printProblems, progress, progressDone } from "../output.js";

interface AgentRunFlags {
  cmd?: string;
  preset?: string;
  model?: string;
  out: string;
  tasks?: string[];
  tasksDir: string;
  set?: TaskSetChoice;
  samples: string;
  level?: InstructionLevel;
  timeout: string;
  agentNetwork?: boolean;
  agentSandbox: string;
  agentImage?: string;
  agentEnv?: string[];
  agentBind?: string[];
  agentJobs: string;
  jobs?: string;
  sandbox: string;
  python?: string;
  mirror?: string;
  queue?: string;
  queueAttempts: string;
  json?: boolean;
}

const presetHelp = Object.values(AGENT_PRESETS)
  .map((p) => `  ${p.name}: ${p.about}\n    ${p.template}`)
  .join("\n");

export function registerAgent(program: Command): void {
  const agent = program.command("agent").description("run CLI agents on tasks and grade what they leave");
  const run = agent
    .command("run")
    .description("run a CLI agent on each task in a sandbox, diff its workspace into a patch, and grade it as lmr eval does")
    .option("--cmd <TEMPLATE>", `the agent's shell command; variables: ${TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(", ")}`)
    .option("--preset <NAME>", `a documented command template: ${Object.keys(AGENT_PRESETS).join(", ")}`)
    .option("--model <NAME>", "the model of the submission rows and the value of {model} (default: the preset's name, or 'agent')")
    .requiredOption(
      "--out <RUN_DIR>",
      "run folder: agent/<model>/<task>/<sample>/ (logs, patch, trajectory), agent/submissions.jsonl, results/; rerun to resume",
    );
  addTaskSelection(run)
    .addOption(levelOption("the agent gets at /lmr/instruction.md (default paper); the run records it"))
    .option("-n, --samples <K>", "agent runs per task (for pass@k)", "1")
    .option("--timeout <S>", "wall limit of one agent run in seconds; past it the agent's whole process tree is killed", "1800")
    .option("--agent-network", "let the agent use the network (API calls); off by default")
    .option("--agent-sandbox <MODE>", "auto | docker | bwrap (auto: docker when --agent-image is given and a daemon answers, else bwrap)", "auto")
    .option("--agent-image <IMAGE>", "docker image the agent is installed in")
    .option("--agent-env <NAME...>", "environment variables passed to the agent (API keys); values are never written")
    .option("--agent-bind <PATH...>", "host paths the agent may read (its install outside /usr and /opt), bound read-only at the same path")
    .option("--agent-jobs <N>", "agents run at once", "1");
  addGrading(run, "grading sandbox, as for lmr eval: auto | docker | bwrap | none");
  addQueue(run, "run the agents, and grade them,", { help: "tries per agent run and per grading before an infra result is kept", default: "2" });
  run
    .option("--json", "print agent/agent-run.json and summary.json to stdout, as {agent, summary}")
    .addHelpText(
      "after",
      `
Per (task, sample): the task's masked workspace (with paper.md) is copied to a
scratch folder and the agent runs there with /bin/sh -c COMMAND in its own
sandbox, which holds only the system folders (/usr, /etc, /opt, ...), the
workspace copy at ${AGENT_PATHS.workspace} (writable, the working directory), the
instruction at ${AGENT_PATHS.instruction} (read-only), an out folder at ${AGENT_PATHS.out}
(writable: a trajectory written there is kept), HOME=${AGENT_PATHS.home} and a private /tmp.
The task folders, the reference, the grader, the run folder, the toolkit and
other tasks are not in it; nor is the network, unless --agent-network. With
docker (--agent-image) the same paths are bound into the image as the host user.
Template variables are replaced by these paths, quoted for the shell: {workspace},
{instruction}, {out}; {model} (--model), {task}, {sample}. {{ and }} are braces.
At --timeout the agent's process tree is killed. The workspace is then diffed
(git) against the masked baseline into a patch, which is graded as lmr eval
grades any submission (only target files count; grader files make it invalid).
A timed-out agent is graded timeout; one that deleted its workspace or changed
nothing is invalid, with the reason; an agent run that broke on our side is
infra and is run again by the next run. Per sample, RUN_DIR/${AGENT_DIR}/<model>/<task>/<sample>/
keeps stdout.txt, stderr.txt, patch.diff, out/ and agent.json (status, exit, wall
time); RUN_DIR/${AGENT_DIR}/${AGENT_RUN_FILES.submissions} holds the rows that were graded.
RUN_DIR is a normal run folder: lmr report RUN_DIR. Rerunning the same command
keeps finished agent runs and grades only what changed. agent.json records the
command as run: pass API keys with --agent-env NAME, never inside --cmd.

--queue: this process plans, builds the bundles and writes RUN_DIR as a local
run does; each (task, sample) is an agent/run job that a worker runs on its own
checkout of the task (refused, as infra, when the task hashes differently
there), with --agent-env values from the worker's own environment; the files
come back into RUN_DIR/${AGENT_DIR}/…, and the patches are graded on the queue too.

Presets (untested here: they need the agent installed and its API; check the
flags against your version):
${presetHelp}

Exit codes: 0 ran and graded (whatever the verdicts), 2 bad input, 3 infrastructure.

Examples:
  $ lmr agent run --tasks-dir examples/tasks --tasks pref-loss --out runs/a1 \\
      --cmd 'python3 /opt/agents/my_agent.py --task {instruction} --repo {workspace}'
  $ lmr agent run --preset claude-code --model claude-sonnet-4-5 --agent-network \\
      --agent-env ANTHROPIC_API_KEY --agent-image my/claude-code:latest --out runs/cc -n 3
  $ lmr agent run --preset aider --model gpt-4o --agent-network --agent-env OPENAI_API_KEY --out runs/aider
  $ lmr report runs/a1 --format md`,
    )
    .action(action(runAgentCommand));
}

async function runAgentCommand(flags: AgentRunFlags): Promise<number> {
  if ((flags.cmd === undefined) === (flags.preset === undefined))
    throw usage("--cmd", "give exactly one of --cmd TEMPLATE and --preset NAME", `presets: ${Object.keys(AGENT_PRESETS).join(", ")}`);
  const command = flags.cmd ?? presetTemplate(flags.preset!);
  if (command.trim() === "") throw usage("--cmd", "--cmd is empty", "e.g. --cmd 'my-agent --repo {workspace} --task {instruction}'");
  const used = templateVariables(command, flags.cmd !== undefined ? "--cmd" : "--preset");
  if (flags.preset && used.includes("model") && flags.model === undefined)
    throw usage("--model", `--preset ${flags.preset} needs --model NAME: its command passes {model} to the agent`);
  const model = flags.model ?? flags.preset ?? "agent";
  if (model.trim() === "") throw usage("--model", "--model is empty");
  if (!(AGENT_SANDBOX_CHOICES as readonly string[]).includes(flags.agentSandbox))
    throw usage("--agent-sandbox", `--agent-sandbox must be one of ${AGENT_SANDBOX_CHOICES.join(", ")}, got '${flags.agentSandbox}'`);
  const timeoutS = Number(flags.timeout);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw usage("--timeout", `--timeout must be a number of seconds > 0, got '${flags.timeout}'`);
  for (const name of flags.agentEnv ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw usage(
        "--agent-env",
        "--agent-env takes NAMES of environment variables (letters, digits, '_'); one given is not a name (and is not echoed, in case it is a key)",
        "e.g. --agent-env ANTHROPIC_API_KEY",
      );
    if (process.env[name] === undefined) process.stderr.write(`lmr: note: --agent-env ${name} is not set in this environment; the agent will not get it\n`);
  }
  const samples = int(flags.samples, "--samples", 1);
  const agentJobs = int(flags.agentJobs, "--agent-jobs", 1);
  const jobs = flags.jobs !== undefined ? int(flags.jobs, "--jobs", 1) : availableParallelism();
  const sandbox = await hostChoiceFor(parseSandboxChoice(flags.sandbox), flags.python);

  const { tasks, knownTaskIds } = await loadChosenTasks(flags, "agent");
  const mirror = flags.mirror ?? process.env.LMR_MIRROR;
  const connection = flags.queue !== undefined ? parseQueueUrl(flags.queue) : undefined;
  const attempts = int(flags.queueAttempts, "--queue-attempts", 1);
  const agents = connection
    ? await openAgentQueue({ connection, runId: sha256(`${resolve(flags.out)}\n${model}`).slice(0, 16), toolkitVersion: TOOLKIT_VERSION, attempts })
    : undefined;
  const dispatcher = connection
    ? createQueueDispatcher({ connection, sandbox, attempts, toolkitVersion: TOOLKIT_VERSION, log: (l) => process.stderr.write(`${l}\n`) })
    : undefined;
  const { summary, eval: outcome } = await runAgents({
    tasks,
    tasksRoot: flags.tasksDir,
    outDir: flags.out,
    command,
    ...(flags.preset ? { preset: flags.preset } : {}),
    model,
    samples,
    ...(flags.level ? { level: flags.level } : {}),
    agentJobs,
    timeoutS,
    network: flags.agentNetwork ?? false,
    agentSandbox: flags.agentSandbox as AgentSandboxChoice,
    ...(flags.agentImage ? { image: flags.agentImage } : {}),
    envNames: flags.agentEnv ?? [],
    readOnly: flags.agentBind ?? [],
    ...(mirror ? { mirror } : {}),
    grade: {
      jobs,
      sandbox,
      ...(flags.python ? { python: flags.python } : {}),
      set: flags.set ?? (flags.tasks ? "all" : "core"),
      knownTaskIds,
      ...(dispatcher ? { dispatcher } : {}),
    },
    ...(agents ? { runSample: (input, hashes) => agents.run(input, hashes) } : {}),
    onAgent: (p) =>
      progress(
        `agent ${p.done}/${p.total}${p.reused ? ` (${p.reused} already run)` : ""}${p.last ? ` — ${p.last.task_id}#${p.last.sample}: ${p.last.status} in ${p.last.wall_s} s` : ""}`,
      ),
    onGrade: (p) => progress(`grading ${p.done}/${p.total}${p.last ? ` — ${p.last.task_id}#${p.last.sample}: ${p.last.verdict}` : ""}`),
  }).finally(() => agents?.close());
  progressDone();
  if (agents)
    process.stderr.write(
      `lmr: agent runs through the queue at ${connection!.display}: ${
        Object.entries(agents.workers())
          .map(([w, n]) => `${w} (${n})`)
          .join(", ") || "none needed"
      }\n`,
    );
  printProblems(outcome.problems);
  const s = await writeSummary(flags.out);
  const infra = summary.totals.infra === summary.totals.samples || (s.totals.samples > 0 && s.totals.verdicts.infra === s.totals.samples);
  if (flags.json) {
    if (infra)
      printJsonFailed(
        "agent run",
        new LmrError({
          code: "agent/all-infra",
          message: "every agent run or every grading ended in an infrastructure error",
          hint: "see the infra reasons in agent/agent-run.json and summary.json",
        }),
        { agent: summary, summary: s },
      );
    else printJsonOk("agent run", { agent: summary, summary: s });
  } else process.stdout.write(describe(summary, s, flags.out));
  return infra ? EXIT.infra : EXIT.ok;
}

function describe(a: AgentRunSummary, s: Summary, out: string): string {
  const t = a.totals;
  const lines = [
    `${t.samples} agent runs (${t.ran} run now, ${t.reused} kept): ${t.finished} finished, ${t.timeout} timed out, ${t.workspace_deleted} deleted their workspace, ${t.infra} infra`,
    ...a.samples.map(
      (r) =>
        `  ${r.task_id}#${r.sample}: ${r.status}${r.exit_code !== null ? ` (exit ${r.exit_code})` : ""}, ${r.wall_s} s, ${r.changed.length} file(s) changed → ${r.verdict ?? "?"}${r.reason ? ` — ${r.reason}` : ""}`,
    ),
    ...s.models.map(
      (m) =>
        `${m.model}: pass@1 ${formatRate(m.pass_at_1)} over ${m.totals.scored_tasks} tasks; ${m.totals.samples} samples: ${formatVerdictCounts(m.totals.verdicts)}`,
    ),
    `run folder: ${out} (agent files under ${out}/${AGENT_DIR}/) — report with: lmr report ${out} --format md`,
  ];
  return lines.join("\n") + "\n";
}

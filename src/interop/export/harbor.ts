import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { writeDirAtomic, writeFileAtomic } from "../../core/fs-atomic.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { isRedistributable } from "../../manifest/license.js";
import { isUrlUpstream } from "../../manifest/types.js";
import { readTaskSet } from "../../run-folder/index.js";
import { TOOLKIT_VERSION } from "../../evaluate/run-eval.js";
import { writeHarnessTask, type HarnessTaskInfo } from "./harness-task.js";
import type { BuiltTask } from "./tasks.js";

/*
 * `lmr export --format harbor`: one Harbor task folder per task (OUT/<id>/: task.toml,
 * instruction.md, environment/, tests/test.sh, solution/solve.sh), plus the adapter's
 * README.md and adapter_metadata.json at OUT/. See docs/harnesses.md.
 */

/** Seconds Harbor's verifier gets on top of the task's own wall limit: copying the kit, starting the candidate, importing. */
const VERIFIER_SLACK_S = 300;
const HARBOR_AGENT_TIMEOUT_S = 3600;
/** Memory the agent's container gets: lmr's per-run cap (4096 MiB) for each of the two grading processes, plus the agent. */
const MEMORY_MB = 8192;

export interface HarborTaskExport {
  folder: string;
  info: HarnessTaskInfo;
  warnings: string[];
}

const tq = (s: string): string => JSON.stringify(s);

function renderTaskToml(built: BuiltTask, level: InstructionLevel, info: HarnessTaskInfo): string {
  const m = built.task.manifest;
  const keywords = [m.category, readTaskSet(m), ...(m.kind ? [m.kind] : []), "lmr", "paper-reproduction"];
  return [
    `# Written by lmr export ${TOOLKIT_VERSION} for task ${m.id} (instruction level: ${level}).`,
    'schema_version = "1.4"',
    "",
    "[task]",
    `name = ${tq(`lmr/${m.id}`)}`,
    `description = ${tq(`${m.paper.title} (${m.paper.year}): implement ${m.targets.map((t) => `${t.symbol} in ${t.file}`).join(", ")}`)}`,
    `keywords = [${keywords.map(tq).join(", ")}]`,
    "",
    "[metadata]",
    `lmr_task_id = ${tq(m.id)}`,
    `instruction_level = ${tq(level)}`,
    `category = ${tq(m.category)}`,
    `paper_title = ${tq(m.paper.title)}`,
    `paper_url = ${tq(m.paper.url)}`,
    ...(isUrlUpstream(m.upstream) ? [`upstream_repo = ${tq(m.upstream.repo)}`] : []),
    ...(built.bundle.upstream.commit ? [`upstream_commit = ${tq(built.bundle.upstream.commit)}`] : []),
    `upstream_license = ${tq(m.upstream.license)}`,
    `test_runner = ${tq(info.runner)}`,
    ...(info.verifiedTests !== null ? [`verified_tests = ${info.verifiedTests}`] : []),
    `grader_hash = ${tq(built.bundle.hashes.grader)}`,
    "",
    "[verifier]",
    `timeout_sec = ${(m.tests.timeout_total_s + VERIFIER_SLACK_S).toFixed(1)}`,
    'user = "root"',
    "",
    "[agent]",
    `timeout_sec = ${HARBOR_AGENT_TIMEOUT_S.toFixed(1)}`,
    "",
    "[environment]",
    "build_timeout_sec = 1800.0",
    "cpus = 2",
    `memory_mb = ${MEMORY_MB}`,
    "storage_mb = 10240",
    ...(m.environment.gpu ? ["gpus = 1"] : []),
    // allow_internet = false, in the spelling Harbor 0.25 reads (allow_internet is its deprecated alias)
    `network_mode = ${tq(m.environment.network ? "public" : "no-network")}`,
    'workdir = "/app"',
    "",
  ].join("\n");
}

/** Writes OUT/<id>/ atomically. */
export async function exportHarborTask(outDir: string, built: BuiltTask, level: InstructionLevel): Promise<HarborTaskExport> {
  const m = built.task.manifest;
  const folder = join(resolve(outDir), m.id);
  let info: HarnessTaskInfo | undefined;
  await writeDirAtomic(folder, async (tmp) => {
    info = await writeHarnessTask(tmp, built);
    await writeFile(join(tmp, "task.toml"), renderTaskToml(built, level, info));
  });
  const warnings = isRedistributable(m.upstream.license)
    ? []
    : [
        `${m.id}: upstream licence ${m.upstream.license} does not allow redistribution; ${m.id}/ holds upstream code (environment/workspace, tests/, solution/): keep it private`,
      ];
  return { folder, info: info!, warnings };
}

/** OUT/README.md and OUT/adapter_metadata.json: what the dataset is, how to run it, the parity note. */
export async function writeHarborDatasetFiles(outDir: string, tasks: { id: string; info: HarnessTaskInfo }[], level: InstructionLevel): Promise<string[]> {
  const out = resolve(outDir);
  const readme = join(out, "README.md");
  const meta = join(out, "adapter_metadata.json");
  await writeFileAtomic(readme, renderReadme(tasks, level));
  const metadata = [
    {
      adapter_name: "lmr",
      adapter_builders: ["lmr export --format harbor"],
      original_benchmark: [
        {
          split: level,
          size: tasks.length,
          harness: "lmr eval",
          supported_agents: ["lmr agent run"],
          adaptable: true,
          notes: "paper-code reproduction tasks re-authored from LMR-Bench; graded by lmr's candidate/oracle harness",
        },
      ],
      harbor_adapter: [
        {
          split: level,
          adapted_benchmark_size: tasks.length,
          parity_benchmark_size: tasks.length,
          parity_sampling_rate: 1.0,
          registry_benchmark_size: tasks.length,
          added_agents: [],
          parity_matching_agents: ["oracle", "nop"],
          parity_unmatching_agents: [],
          parity_costs: 0,
          notes: "tests/test.sh runs lmr's own grader (tests/lmr/grade.py); oracle = the reference (100 %), nop = the masked workspace (0 %)",
        },
      ],
    },
  ];
  await writeFileAtomic(meta, JSON.stringify(metadata, null, 2) + "\n");
  return [readme, meta];
}

function renderReadme(tasks: { id: string; info: HarnessTaskInfo }[], level: InstructionLevel): string {
  return [
    "# lmr → Harbor adapter",
    "",
    `Written by \`lmr export --format harbor\` (lmr ${TOOLKIT_VERSION}): ${tasks.length} task${tasks.length === 1 ? "" : "s"}, instruction level \`${level}\`.`,
    "Each folder is a Harbor task: a paper, an upstream repository at a pinned commit with target functions",
    "masked (the agent's workspace, `/app`), an instruction, and hidden tests that lmr verified against the",
    "reference.",
    "",
    "## Run",
    "",
    "```sh",
    "harbor run -p <this folder> -a oracle      # the reference: every task scores 1",
    "harbor run -p <this folder> -a nop         # the masked workspace: every task scores 0",
    'harbor run -p <this folder> -a claude-code -m "<model>"',
    "```",
    "",
    "## Grading",
    "",
    "`tests/test.sh` runs lmr's grader (`tests/lmr/grade.py`) in the task's container: a candidate process,",
    "as an unprivileged user, imports the code under test from a fresh copy of the masked workspace with",
    "only the target files taken from `/app`; the oracle runs the hidden tests and reports HMAC-signed",
    "records; the verdict follows `lmr eval`'s rules and the test set must equal the one lmr verified.",
    "`/logs/verifier/reward.txt` is 1 for a pass and 0 otherwise; `reward.json` adds the test counts and",
    "`lmr-result.json` the verdict, its reason and every test's status.",
    "",
    "## Parity",
    "",
    "Parity with `lmr eval` is by construction (the same harness, argv, verdict rules and verified test",
    "set) and is checked by running Harbor's `oracle` agent (100 %) and `nop` agent (0 %) on every exported",
    "task. What differs from `lmr eval`: grading runs inside the agent's container after the agent, not in",
    "lmr's separate sandboxes; see lmr's docs/harnesses.md.",
    "",
    "## Tasks",
    "",
    "| task | tests run by | targets |",
    "| --- | --- | --- |",
    ...tasks.map((t) => `| ${t.id} | ${t.info.runner} | ${t.info.targets.map((x) => `\`${x}\``).join(", ")} |`),
    "",
  ].join("\n");
}

import { readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { toolkitPath } from "../../core/paths.js";
import { writeDirAtomic, writeFileAtomic } from "../../core/fs-atomic.js";
import type { InstructionLevel } from "../../manifest/level.js";
import { isRedistributable } from "../../manifest/license.js";
import { isUrlUpstream } from "../../manifest/types.js";
import { readTaskSet } from "../../run-folder/index.js";
import { HARNESS_WORKDIR, writeHarnessTask, type HarnessTaskInfo } from "./harness-task.js";
import type { BuiltTask } from "./tasks.js";

/*
 * `lmr export --format inspect`: an Inspect AI task over lmr's tasks.
 *
 *   OUT/lmr_inspect.py     the @task (python/lmr_inspect/lmr_inspect.py): one Sample per task
 *                          (id = task id, input = the instruction, metadata), a docker sandbox
 *                          per sample from the task's environment (or Inspect's local sandbox),
 *                          and a scorer that grades the sandbox's workspace with lmr's grader
 *   OUT/tasks/<id>/        environment/, tests/ (the grading kit), solution/, instruction.md as
 *                          for Harbor, plus compose.yaml (the sandbox) and sample.json
 */

export interface InspectTaskExport {
  folder: string;
  info: HarnessTaskInfo;
  warnings: string[];
}

function composeYaml(built: BuiltTask): string {
  const m = built.task.manifest;
  return [
    `# Written by lmr export for task ${m.id}: Inspect's docker sandbox for this sample.`,
    "services:",
    "  default:",
    "    build:",
    "      context: environment",
    "    init: true",
    "    command: tail -f /dev/null",
    `    working_dir: ${HARNESS_WORKDIR}`,
    `    network_mode: ${m.environment.network ? "bridge" : "none"}`,
    "    cpus: 2",
    "    mem_limit: 8g",
    "",
  ].join("\n");
}

/** Writes OUT/tasks/<id>/ atomically. */
export async function exportInspectTask(outDir: string, built: BuiltTask, level: InstructionLevel): Promise<InspectTaskExport> {
  const m = built.task.manifest;
  const folder = join(resolve(outDir), "tasks", m.id);
  let info: HarnessTaskInfo | undefined;
  await writeDirAtomic(folder, async (tmp) => {
    info = await writeHarnessTask(tmp, built);
    await writeFile(join(tmp, "compose.yaml"), composeYaml(built));
    const sample = {
      id: m.id,
      level,
      paper: { title: m.paper.title, url: m.paper.url, year: m.paper.year },
      category: m.category,
      set: readTaskSet(m),
      kind: m.kind ?? null,
      upstream: { repo: isUrlUpstream(m.upstream) ? m.upstream.repo : null, commit: built.bundle.upstream.commit, license: m.upstream.license },
      targets: info.targets,
      runner: info.runner,
      timeout_total_s: m.tests.timeout_total_s,
      verified_tests: info.verifiedTests,
      workdir: HARNESS_WORKDIR,
    };
    await writeFile(join(tmp, "sample.json"), JSON.stringify(sample, null, 2) + "\n");
  });
  const warnings = isRedistributable(m.upstream.license)
    ? []
    : [`${m.id}: upstream licence ${m.upstream.license} does not allow redistribution; tasks/${m.id}/ holds upstream code: keep it private`];
  return { folder, info: info!, warnings };
}

/** OUT/lmr_inspect.py (the task) and OUT/README.md. */
export async function writeInspectFiles(outDir: string, ids: string[], level: InstructionLevel): Promise<string[]> {
  const out = resolve(outDir);
  const py = join(out, "lmr_inspect.py");
  const readme = join(out, "README.md");
  await writeFileAtomic(py, await readFile(toolkitPath("python", "lmr_inspect", "lmr_inspect.py"), "utf8"));
  await writeFileAtomic(
    readme,
    [
      "# lmr tasks for Inspect AI",
      "",
      `Written by \`lmr export --format inspect\`: ${ids.length} task${ids.length === 1 ? "" : "s"} at instruction level \`${level}\`.`,
      "",
      "```sh",
      "inspect eval lmr_inspect.py --model openai/gpt-4o                 # docker sandbox per task (Compose v2)",
      "inspect eval lmr_inspect.py --model mockllm/model -T sandbox=local  # no Docker: Inspect's local sandbox",
      "inspect eval lmr_inspect.py -T tasks=pref-loss,beam-search --epochs 5   # pass@5 with the pass_at_5 reducer",
      "```",
      "",
      "Each sample's scorer copies `tasks/<id>/tests/lmr` (lmr's grader, the hidden tests and fixtures) into",
      "the sandbox only after the solver finished, runs `grade.py` there on the workspace, and scores",
      "C when lmr's verdict is `passed`; the score's metadata has the verdict, its reason and the test counts.",
      "See lmr's docs/harnesses.md for what differs from `lmr eval`.",
      "",
    ].join("\n"),
  );
  return [py, readme];
}

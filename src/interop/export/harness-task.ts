import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { BUNDLE_FILES } from "../../bundle/types.js";
import { toolkitPath } from "../../core/paths.js";
import { planBase, planEnv, readToolkitNode, readToolkitPython } from "../../env/images.js";
import { IMAGE_NODE, IMAGE_PYTHON, baseImageVariable, normaliseEnvironment } from "../../env/spec.js";
import { candidateArgs, candidateRequest } from "../../runner/candidate.js";
import { harnessArgs, nodeCandidateArgs, nodeHarnessArgs } from "../../runner/harness-args.js";
import type { RunRequest } from "../../runner/types.js";
import { containerEnv } from "../../runner/docker/run.js";
import { kernelPinsFor } from "../../runner/limits.js";
import { readVerification } from "../../verify/verify-task.js";
import type { BuiltTask } from "./tasks.js";

/*
 * What a Harbor task folder and an Inspect sample share, written per task:
 *
 *   environment/   the Docker build context of the agent's image: lmr's base and
 *                  environment Dockerfiles (the templates `lmr env build` renders, same
 *                  packages and pins) as two stages, then the masked workspace at /app.
 *                  Nothing of the grader or the reference is in it.
 *   tests/         test.sh and lmr/, the grading kit (python/lmr_grade/grade.py, grade.json,
 *                  the grader's tests and fixtures, the masked workspace as built, lmr's
 *                  harness): copied into the container only when grading starts.
 *   solution/      solve.sh and the reference target files (the oracle).
 *   instruction.md the instruction at the chosen level.
 */

/** Where the agent's workspace is in the image (Harbor's and Terminal-Bench's convention). */
export const HARNESS_WORKDIR = "/app";
/** The grading kit inside tests/. */
const KIT_DIR = "lmr";
/** Where a node-test image has Node (Debian's nodejs). */
const NODE_BIN = IMAGE_NODE;

export interface HarnessTaskInfo {
  /** Python or Node, the interpreter the tests run with in the image. */
  runner: "pytest" | "node-test";
  targets: string[];
  /** The Dockerfile's first FROM: the registry image, or $LMR_BASE_IMAGE_<BASE>. */
  from: string;
  verifiedTests: number | null;
}

/** The image the base stage is built FROM: $LMR_BASE_IMAGE_DEBIAN_BOOKWORM etc., else the registry's name for the base. */
function baseSource(base: string): string {
  return process.env[baseImageVariable(base)] || base;
}

/** environment/: the build context. The Dockerfile is lmr's two layers as two stages, and the workspace on top. */
async function writeEnvironment(dir: string, built: BuiltTask): Promise<string> {
  const m = built.task.manifest;
  const spec = normaliseEnvironment(m.environment, m.tests.runner ?? "pytest");
  const from = baseSource(spec.base);
  const base = await planBase(spec, from);
  const env = await planEnv(spec);
  for (const [rel, content] of Object.entries(env.files)) {
    if (rel === "Dockerfile") continue;
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  // the templates COPY a CA bundle for pip behind a TLS-inspecting proxy: empty unless one is named
  const ca = process.env.LMR_BUILD_CA_BUNDLE;
  await writeFile(join(dir, "build-ca.crt"), ca ? await readFile(ca) : "");
  const envFile = String(env.files.Dockerfile);
  const fromLine = `FROM ${env.baseTag}\n`;
  if (!envFile.includes(fromLine)) throw new Error(`the environment Dockerfile does not start FROM ${env.baseTag}`);
  const dockerfile = [
    `# Written by lmr export for task ${m.id}: the image lmr verifies the task in (\`lmr env build\`:`,
    `# ${env.tag} on ${base.tag}), built as two stages, with the masked workspace at ${HARNESS_WORKDIR}.`,
    `# The base stage is FROM ${from}; set ${baseImageVariable(spec.base)} when exporting to build FROM another copy.`,
    "",
    String(base.files.Dockerfile).replace(/^FROM (\S+)$/m, "FROM $1 AS lmr-base"),
    "",
    envFile.replace(fromLine, "FROM lmr-base\n"),
    "",
    "# The agent's workspace: the upstream at its commit with the targets masked. The tests, fixtures",
    "# and reference are not in this image; Harbor copies tests/ and solution/ in at run time.",
    "USER root",
    `COPY workspace/ ${HARNESS_WORKDIR}/`,
    `WORKDIR ${HARNESS_WORKDIR}`,
    "",
  ].join("\n");
  await writeFile(join(dir, "Dockerfile"), dockerfile);
  await cp(join(built.bundle.dir, BUNDLE_FILES.workspace), join(dir, "workspace"), { recursive: true, verbatimSymlinks: true });
  return from;
}

/** tests/lmr/: the grading kit that python/lmr_grade/grade.py runs from. */
async function writeKit(kit: string, built: BuiltTask): Promise<{ verifiedTests: number | null }> {
  const { task, bundle } = built;
  const m = task.manifest;
  const node = m.tests.runner === "node-test";
  const mount = m.tests.mount ?? "lmr_tests";
  await cp(join(bundle.dir, BUNDLE_FILES.grader), join(kit, "grader"), { recursive: true, verbatimSymlinks: true });
  await cp(join(bundle.dir, BUNDLE_FILES.workspace), join(kit, "workspace"), { recursive: true, verbatimSymlinks: true });
  const toolkit = { ...(await readToolkitPython()), ...(node ? await readToolkitNode() : {}) };
  for (const [rel, content] of Object.entries(toolkit)) {
    await mkdir(dirname(join(kit, "toolkit", rel)), { recursive: true });
    await writeFile(join(kit, "toolkit", rel), content);
  }
  await cp(toolkitPath("python", "lmr_grade", "grade.py"), join(kit, "grade.py"));

  // the argv lmr's runner gives the candidate and the oracle, with placeholders grade.py fills in
  const c = candidateRequest(m);
  const setup = c.candidateSetup ? `{support}/${basename(c.candidateSetup)}` : undefined;
  const req = { timeoutPerTestS: m.tests.timeout_per_test_s, ...(m.tests.pytest_args ? { pytestArgs: m.tests.pytest_args } : {}) } as RunRequest;
  const dir = "{toolkit}/node/lmr-harness";
  const candidate = node
    ? nodeCandidateArgs({ dir, socket: "{socket}", tree: "{root}", support: "{support}", ...(setup ? { setup } : {}) })
    : candidateArgs({
        script: "{toolkit}/python/lmr_bridge/candidate.py",
        socket: "{socket}",
        tree: "{root}",
        support: "{support}",
        ...(setup ? { setup } : {}),
        ...(c.warmModules ? { warm: c.warmModules } : {}),
      });
  const results = ["--results-fd", "{results_fd}"];
  const oracle = node
    ? nodeHarnessArgs({ req, dir, root: "{oracle_root}", mount, results, bridge: "{socket}" })
    : harnessArgs({
        req,
        harness: "{toolkit}/python/lmr_harness/run_pytest.py",
        ini: "{toolkit}/python/lmr_harness/pytest.ini",
        root: "{oracle_root}",
        mountDir: "{mount_dir}",
        mount,
        results,
        bridge: "{socket}",
      });

  // the set lmr verified, when the record is of this very grader (as lmr eval checks it)
  const record = await readVerification(task).catch(() => undefined);
  const ref = record?.steps?.reference as { tests?: string[]; skipped_tests?: string[] } | undefined;
  const verified =
    record && record.inputs?.grader === bundle.hashes.grader && Array.isArray(ref?.tests) ? { tests: ref!.tests!, skipped: ref!.skipped_tests ?? [] } : null;
  // the environment lmr's docker backend gives both processes (one thread, no plugin autoload,
  // offline hubs), without what comes from the exporting machine: its pass-through variables and
  // its CPU's kernel pins, which grade.py applies for the CPU it runs on (kernel_pins)
  const pins = kernelPinsFor("flags : avx2 fma", "x64");
  const env = containerEnv({ home: "{home}", tmp: "{home}" }, 1, m.environment.network);
  for (const k of [...Object.keys(pins), "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "TZ", "LD_LIBRARY_PATH"]) delete env[k];
  const grade = {
    task_id: m.id,
    env,
    kernel_pins: pins,
    runner: node ? "node-test" : "pytest",
    interpreter: node ? NODE_BIN : IMAGE_PYTHON,
    targets: [...new Set(m.targets.map((t) => t.file))],
    mount,
    timeout_total_s: m.tests.timeout_total_s,
    timeout_per_test_s: m.tests.timeout_per_test_s,
    memory_mb: 4096,
    candidate_files: [...new Set([...(c.candidateFiles ?? []), ...(c.candidateSetup ? [c.candidateSetup] : [])])],
    candidate_argv: candidate,
    oracle_argv: oracle,
    verified,
    hashes: bundle.hashes,
  };
  await writeFile(join(kit, "grade.json"), JSON.stringify(grade, null, 2) + "\n");
  return { verifiedTests: verified ? verified.tests.length : null };
}

function testSh(): string {
  return [
    "#!/bin/bash",
    "# Written by lmr export: grades the agent's workspace with lmr's grader (tests/lmr/grade.py:",
    "# a candidate process imports the code, the oracle runs the hidden tests on signed records).",
    "# Only the target files are taken from the workspace; reward 1 means every verified test passed.",
    "set -u",
    "mkdir -p /logs/verifier",
    `KIT="$(cd "$(dirname "$0")" && pwd)/${KIT_DIR}"`,
    `PY=/opt/lmr/venv/bin/python; [ -x "$PY" ] || PY=python3`,
    `"$PY" -s -B "$KIT/grade.py" --kit "$KIT" --workspace ${HARNESS_WORKDIR} --reward-dir /logs/verifier`,
    "status=$?",
    "# a grader that could not write a reward is a failure of the trial, never a pass",
    "[ -s /logs/verifier/reward.txt ] || echo 0 > /logs/verifier/reward.txt",
    "exit $status",
    "",
  ].join("\n");
}

function solveSh(targets: string[]): string {
  return [
    "#!/bin/bash",
    "# Written by lmr export: the oracle. Puts the reference target files back into the workspace.",
    "set -euo pipefail",
    'HERE="$(cd "$(dirname "$0")" && pwd)"',
    ...targets.map(
      (t) =>
        `mkdir -p ${JSON.stringify(dirname(`${HARNESS_WORKDIR}/${t}`))} && cp "$HERE/reference/"${JSON.stringify(t)} ${JSON.stringify(`${HARNESS_WORKDIR}/${t}`)}`,
    ),
    "",
  ].join("\n");
}

/** Writes environment/, tests/, solution/ and instruction.md of one task into `dir` (which exists). */
export async function writeHarnessTask(dir: string, built: BuiltTask): Promise<HarnessTaskInfo> {
  const m = built.task.manifest;
  const targets = [...new Set(m.targets.map((t) => t.file))];
  const from = await writeEnvironment(join(dir, "environment"), built);
  const { verifiedTests } = await writeKit(join(dir, "tests", KIT_DIR), built);
  await writeFile(join(dir, "tests", "test.sh"), testSh(), { mode: 0o755 });
  await mkdir(join(dir, "solution", "reference"), { recursive: true });
  for (const t of targets) {
    await mkdir(dirname(join(dir, "solution", "reference", t)), { recursive: true });
    await cp(join(built.bundle.dir, BUNDLE_FILES.reference, t), join(dir, "solution", "reference", t));
  }
  await writeFile(join(dir, "solution", "solve.sh"), solveSh(targets), { mode: 0o755 });
  await cp(join(built.bundle.dir, BUNDLE_FILES.workspace, "instruction.md"), join(dir, "instruction.md"));
  return { runner: m.tests.runner === "node-test" ? "node-test" : "pytest", targets, from, verifiedTests };
}

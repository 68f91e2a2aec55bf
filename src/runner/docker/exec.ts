import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { isInside, toolkitPath } from "../../core/paths.js";
import { dockerBin, removeContainers } from "../../env/docker-cli.js";
import { LmrError } from "../../core/errors.js";
import { PROCESS_OUTPUT_TAIL, type ProcessRun, type PythonEnv } from "../types.js";
import { chownTree, containerEnv, containerUser, dockerRunArgs, isRoot } from "./run.js";
import { trackContainer } from "./sweep.js";

/**
 * Runs `python ARGS` in the task's environment image with `cwd` in `workDir`,
 * which is bound writable at its own path (config files, outputs); the
 * toolkit's python/ folder (lmr_record) and `readOnly` folders are bound
 * read-only. For `lmr record --sandbox docker`: the recording is made with
 * exactly the packages the graders will run with. No network; killed at
 * `timeoutS`; the container is removed on every path.
 */
export async function runPythonInImage(o: {
  /** An interpreter from resolveRunPython under docker (it names its image). */
  python: PythonEnv;
  args: string[];
  workDir: string;
  cwd: string;
  readOnly?: string[];
  env?: Record<string, string>;
  timeoutS: number;
  memoryMb?: number;
}): Promise<ProcessRun> {
  const image = o.python.image;
  if (!image)
    throw new LmrError({
      code: "run/not-in-image",
      message: `${o.python.path} is not an interpreter of a task image`,
      hint: 'resolve it with resolveRunPython({ sandbox: "docker", environment })',
    });
  const name = `lmr-tool-${process.pid}-${randomBytes(5).toString("hex")}`;
  const user = containerUser();
  const home = join(o.workDir, "home");
  const tmp = join(o.workDir, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  if (isRoot()) await chownTree(o.workDir, user.uid, user.gid);
  const python = toolkitPath("python");
  const env = { ...containerEnv({ home, tmp }, 1, false), PYTHONPATH: python, PYTHONHASHSEED: "0", ...o.env };
  const memoryMb = o.memoryMb ?? 8192;
  const argv = dockerRunArgs({
    name,
    image: image.id,
    writable: [o.workDir],
    readOnly: [python, ...(o.readOnly ?? [])],
    workdir: o.cwd,
    env,
    user,
    network: false,
    memoryMb,
    maxProcs: 1024,
    cpus: 1,
    gpu: image.gpu,
    cmd: [o.python.path, ...o.args],
  }).filter((a) => a !== "--interactive");
  const t0 = performance.now();
  let timedOut = false;
  const untrack = trackContainer(name);
  const result = await new Promise<ProcessRun>((resolveRun) => {
    let output = "";
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-PROCESS_OUTPUT_TAIL);
    };
    const child = spawn(dockerBin(), argv, { stdio: ["ignore", "pipe", "pipe"] });
    const timer = setTimeout(() => {
      timedOut = true;
      spawn(dockerBin(), ["kill", "--signal", "KILL", name], { stdio: "ignore" }).on("error", () => {});
    }, o.timeoutS * 1000);
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolveRun({
        exitCode: null,
        signal: null,
        timedOut,
        output: `cannot start ${dockerBin()}: ${err.message}`,
        duration_s: (performance.now() - t0) / 1000,
      });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      // 128+n: the container's process died of signal n (137: killed at the timeout).
      const signal = code !== null && code > 128 && code < 160 ? ((code === 137 ? "SIGKILL" : null) as NodeJS.Signals | null) : null;
      resolveRun({ exitCode: signal ? null : code, signal, timedOut, output, duration_s: (performance.now() - t0) / 1000 });
    });
  });
  if (timedOut || result.exitCode === null || result.exitCode === 125) await removeContainers([name]);
  untrack();
  return result;
}

/**
 * `python -m lmr_record CONFIG` in the task's image, for `lmr record` and the
 * fixture check under --sandbox docker. `dir` holds the tree, the config and
 * the outputs (bound writable); files the config names outside it (the driver,
 * a generator script, the grader's conftest.py files, all in the task folder)
 * have their folders bound read-only, and so has `taskDir`, the task folder.
 */
export async function runRecordInImage(
  python: PythonEnv,
  tree: string,
  configPath: string,
  dir: string,
  timeoutS: number,
  extraEnv: Record<string, string> = {},
  taskDir?: string,
): Promise<ProcessRun> {
  const config = JSON.parse(await readFile(configPath, "utf8")) as { driver?: { file?: string }; script?: string; conftests?: { path: string }[] };
  const files = [config.driver?.file, config.script, ...(config.conftests ?? []).map((c) => c.path)].filter(
    (f): f is string => typeof f === "string" && !isInside(dir, f),
  );
  // a driver or generator may import the task's own helpers (tests/*.py): the whole task folder is bound when known
  const folders = [...new Set([...files.map((f) => dirname(f)), ...(taskDir && !isInside(dir, taskDir) ? [taskDir] : [])])].sort();
  const readOnly = folders.filter((f) => !folders.some((g) => g !== f && isInside(g, f)));
  return runPythonInImage({ python, args: ["-B", "-m", "lmr_record", configPath], workDir: dir, cwd: tree, readOnly, env: extraEnv, timeoutS });
}

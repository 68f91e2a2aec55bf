import { spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { probeDocker } from "../env/docker-cli.js";
import type { TestRunnerName } from "../env/spec.js";
import type { Environment } from "../manifest/types.js";
import { findDockerTarget, type DockerTarget } from "./docker/image.js";
import { LmrError } from "../core/errors.js";
import { SANDBOX_CHOICES, type Backend, type BackendName, type SandboxChoice, type WrapOptions } from "./types.js";

const BWRAP = "/usr/bin/bwrap";

/** Plain subprocess: same env hygiene and limits, no filesystem or network isolation. */
export const localBackend: Backend = {
  name: "local",
  available: async () => true,
  wrap: (cmd) => cmd,
  describe: () => ({ network: "on", filesystem: "none" }),
};

function bwrapPath(): string | undefined {
  for (const p of [process.env.LMR_BWRAP, BWRAP, "/usr/local/bin/bwrap"]) {
    if (p && existsSync(p)) return p;
  }
  return undefined;
}

/** The isolation flags every bwrap call uses, the probe included, so the probe tests what runs. */
function isolationArgs(network: boolean): string[] {
  return [
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    ...(network ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    // As root bwrap keeps every capability unless told otherwise; without them
    // the code cannot remount the read-only binds or override file modes.
    "--cap-drop",
    "ALL",
  ];
}

function gpuDevices(): string[] {
  try {
    return readdirSync("/dev")
      .filter((n) => n.startsWith("nvidia"))
      .map((n) => `/dev/${n}`)
      .filter((p) => !statSync(p).isDirectory());
  } catch {
    return [];
  }
}

/**
 * What of the host's root every sandboxed process sees, read-only: the system's programs and
 * libraries, and of /etc only what programs read to start and run (the dynamic linker's cache,
 * the alternatives that pick a BLAS, users, time zones, certificates, Python's own settings).
 * Nothing else: no /home, /root, /work, /opt, /srv, /mnt, /var or /run, so no toolkit checkout,
 * no mirror, no cache and no other run's folder unless a run binds it. Merged-/usr links
 * (/bin -> usr/bin) are recreated as links.
 */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
const ETC_ENTRIES = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "passwd",
  "group",
  "nsswitch.conf",
  "hosts",
  "host.conf",
  "gai.conf",
  "protocols",
  "services",
  "mime.types",
  "ssl",
  "ca-certificates",
  "ca-certificates.conf",
  "os-release",
  "debian_version",
  "matplotlibrc",
  "fonts",
  "python3",
  "python3.11",
  "python3.12",
  "python3.13",
  "pki",
  "crypto-policies",
  "papersize",
  "inputrc",
];
/** What torch's and OpenBLAS's CPU detection read, read-only. */
const SYS_ENTRIES = ["/sys/devices/system/cpu", "/sys/devices/system/node"];

function systemArgs(): string[] {
  const args: string[] = [];
  const add = (p: string): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(p), p);
    else args.push("--ro-bind", p, p);
  };
  for (const d of SYSTEM_DIRS) add(d);
  for (const e of ETC_ENTRIES) add(`/etc/${e}`);
  for (const d of SYS_ENTRIES) if (existsSync(d)) args.push("--ro-bind", d, d);
  return args;
}

let system: string[] | undefined;

/**
 * bubblewrap with nothing of the host but what a run needs: the system folders read-only
 * (systemArgs), the run's read-only and writable binds at their own paths, size-capped tmpfs
 * for /tmp, /dev/shm and any other `tmpfs` the run asks for, a private /dev and /proc, no
 * network, no capabilities, its own pid, ipc and uts namespaces.
 */
export const bwrapBackend: Backend = {
  name: "bwrap",
  available: () => probeBwrap().then((r) => r.ok),
  wrap(cmd: string[], o: WrapOptions): string[] {
    const bin = bwrapPath() ?? BWRAP;
    system ??= systemArgs();
    const args = ["--dev", "/dev", "--proc", "/proc", ...system];
    for (const t of o.tmpfs) args.push("--size", String(Math.max(1, Math.floor(t.sizeMb)) * 1024 * 1024), "--tmpfs", t.path);
    // writable binds first: a read-only one inside a writable one (a grader inside a tree) stays read-only
    for (const w of o.writable) args.push("--bind", w, w);
    for (const r of o.readOnly.filter((p) => existsSync(p))) args.push("--ro-bind", r, r);
    for (const r of o.readOnlyAt ?? []) args.push("--ro-bind", r.src, r.dest);
    for (const d of gpuDevices()) args.push("--dev-bind", d, d);
    // the sandbox's own root and /dev are tmpfs bwrap made: read-only, so nothing is written
    // anywhere but the sized tmpfs and the run's writable binds
    args.push("--remount-ro", "/", "--remount-ro", "/dev");
    args.push(...isolationArgs(o.network), "--chdir", o.chdir, "--");
    return [bin, ...args, ...cmd];
  },
  describe: (o) => ({ network: o.network ? "on" : "off", filesystem: "minimal" }),
};

let probe: Promise<{ ok: boolean; reason?: string }> | undefined;

/** Whether bwrap runs here with the flags we use; asked once per process. */
export function probeBwrap(): Promise<{ ok: boolean; reason?: string }> {
  probe ??= new Promise((resolvePromise) => {
    const bin = bwrapPath();
    if (!bin) {
      resolvePromise({ ok: false, reason: "bwrap (bubblewrap) is not installed" });
      return;
    }
    const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", ...isolationArgs(false), "--", "true"];
    const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolvePromise({ ok: false, reason: `bwrap failed to start: ${e.message}` });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise(code === 0 ? { ok: true } : { ok: false, reason: `bwrap cannot create a sandbox here: ${err.trim() || `exit ${code}`}` });
    });
  });
  return probe;
}

/**
 * Docker: tests run in the task's environment image (see src/runner/docker/run.ts);
 * `wrap` is never used, the docker executor builds its own `docker run`.
 */
export const dockerBackend: Backend = {
  name: "docker",
  available: () => probeDocker().then((r) => r.ok),
  wrap: () => {
    throw new Error("the docker backend does not wrap host commands");
  },
  describe: (o) => ({ network: o.network ? "on" : "off", filesystem: "minimal" }),
};

export type Selection = { backend: Backend; image?: DockerTarget; why: string } | { reason: string; wanted: BackendName };

let notice: ((line: string) => void) | undefined;
const noticed = new Set<string>();

/** Where `auto` says once what it chose and why (the CLI points this at stderr). */
export function setBackendNotice(sink: ((line: string) => void) | undefined): void {
  notice = sink;
  noticed.clear();
}

function tell(line: string): void {
  if (!notice || noticed.has(line)) return;
  noticed.add(line);
  notice(line);
}

/** A line for the same sink (an image being built for --sandbox docker); nothing without one. */
export function noteBackend(line: string): void {
  tell(line);
}

/**
 * `auto` takes docker when a daemon answers and the task's environment image
 * is built, else bwrap when it works, else the local backend, and says which
 * and why once per distinct reason. `docker` and `bwrap` demand theirs. A
 * request without an environment (a caller that knows no task) never gets
 * docker from `auto`. `quiet`: a helper run beside a task's own (the fork
 * server) says nothing; the task's run already said what auto chose.
 */
export async function selectBackend(
  choice: SandboxChoice,
  environment?: Readonly<Environment>,
  opts: { quiet?: boolean; runner?: TestRunnerName } = {},
): Promise<Selection> {
  const say = opts.quiet ? () => {} : tell;
  if (choice === "none") return { backend: localBackend, why: "--sandbox none" };
  // Only a task-aware caller (one that passes the task's environment) has an image to run in.
  let dockerWhy = "the run names no task environment";
  if (choice === "docker" || (choice === "auto" && environment)) {
    const found = await findDockerTarget(environment, opts.runner);
    if ("target" in found) {
      const why = `docker (${found.why})`;
      if (choice === "auto") say(`lmr: --sandbox auto (docker, then bwrap, then local) chose ${why}`);
      return { backend: dockerBackend, image: found.target, why };
    }
    if (choice === "docker") return { reason: found.reason, wanted: "docker" };
    dockerWhy = found.short;
  }
  const r = await probeBwrap();
  if (r.ok) {
    if (choice === "auto") say(`lmr: --sandbox auto (docker, then bwrap, then local) chose bwrap: ${dockerWhy}`);
    return { backend: bwrapBackend, why: "bwrap works here" };
  }
  if (choice === "bwrap") return { reason: r.reason ?? "bwrap is not available", wanted: "bwrap" };
  say(`lmr: --sandbox auto (docker, then bwrap, then local) chose local, NO isolation: ${dockerWhy}; ${r.reason ?? "bwrap is not available"}`);
  return { backend: localBackend, why: `no sandbox works here (${r.reason ?? "bwrap is not available"})` };
}

/** `--sandbox` as given on a command line; a usage error names the choices. */
export function parseSandboxChoice(value: string): SandboxChoice {
  if ((SANDBOX_CHOICES as readonly string[]).includes(value)) {
    // Commands that take --sandbox say once on stderr what `auto` chose and why.
    setBackendNotice((line) => process.stderr.write(`${line}\n`));
    return value as SandboxChoice;
  }
  throw new LmrError({
    code: "usage/bad-sandbox",
    message: `--sandbox must be one of ${SANDBOX_CHOICES.join(", ")}, got '${value}'`,
    hint: "auto picks docker (image built), then bwrap, then none",
  });
}

/**
 * An interpreter named on the command line (`--python`) lives on this
 * machine, so `auto` must not pick docker (whose image brings its own): it
 * becomes bwrap where that works, else none, and says so once.
 */
export async function hostChoiceFor(choice: SandboxChoice, python: string | undefined): Promise<SandboxChoice> {
  if (choice !== "auto" || !python) return choice;
  const r = await probeBwrap();
  tell(
    `lmr: --sandbox auto (docker, then bwrap, then local) chose ${r.ok ? "bwrap" : `local, NO isolation (${r.reason ?? "bwrap is not available"})`}: --python ${python} is an interpreter on this machine, not in an image`,
  );
  return r.ok ? "bwrap" : "none";
}

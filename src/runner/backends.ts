import { spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import type { Backend, SandboxChoice, WrapOptions } from "./types.js";

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

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * bubblewrap: the whole system read-only, a private /tmp, /dev and /proc, no
 * network; only the run's scratch folder is writable, and the grader copy
 * inside it is bound read-only again. Other runs' folders under /tmp are not
 * even visible, and `hide` puts empty tmpfs over folders such as the task
 * directory that holds the reference implementation.
 */
export const bwrapBackend: Backend = {
  name: "bwrap",
  available: () => probeBwrap().then((r) => r.ok),
  wrap(cmd: string[], o: WrapOptions): string[] {
    const bin = bwrapPath() ?? BWRAP;
    const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
    const keep = o.keepVisible.filter((k) => existsSync(k));
    const hide = o.hide.filter((h) => h !== "/" && h.startsWith("/") && existsSync(h));
    // Interpreter folders first (they may live under /tmp), then the hidden
    // folders over them, then again only those interpreter folders that sit
    // inside a hidden one: a hidden folder inside a kept one stays hidden.
    for (const k of keep) args.push("--ro-bind", k, k);
    for (const h of hide) {
      if (isDir(h)) args.push("--tmpfs", h);
      else args.push("--ro-bind", "/dev/null", h);
    }
    for (const k of keep) if (hide.some((h) => k.startsWith(`${h}/`))) args.push("--ro-bind", k, k);
    args.push("--bind", o.scratch, o.scratch);
    for (const r of o.readOnly) args.push("--ro-bind", r, r);
    for (const d of gpuDevices()) args.push("--dev-bind", d, d);
    args.push(...isolationArgs(o.network), "--chdir", o.scratch, "--");
    return [bin, ...args, ...cmd];
  },
  describe: (o) => ({ network: o.network ? "on" : "off", filesystem: "readonly" }),
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

/** `auto` takes bwrap when it works, else the local backend; `bwrap` demands it. */
export async function selectBackend(choice: SandboxChoice): Promise<{ backend: Backend } | { reason: string }> {
  if (choice === "none") return { backend: localBackend };
  const r = await probeBwrap();
  if (r.ok) return { backend: bwrapBackend };
  if (choice === "bwrap") return { reason: r.reason ?? "bwrap is not available" };
  return { backend: localBackend };
}

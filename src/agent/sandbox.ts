import { existsSync, lstatSync, readlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { OWNER_LABEL, ownerLabel } from "../runner/docker/sweep.js";
import { AGENT_PATHS } from "./template.js";

/** The host folders an agent's sandbox is made of: the scratch copies it may write, what it may read. */
export interface AgentMounts {
  workspace: string;
  instruction: string;
  out: string;
  home: string;
  /** Extra host folders or files the agent may read (its own install, --agent-bind), bound at the same path. */
  readOnly: string[];
  /** Folders that must stay out of sight even where they sit under a bound folder: the task folders, run folder, toolkit. */
  hide: string[];
  network: boolean;
}

/**
 * The system folders an agent may read. Unlike the grading sandbox, which binds
 * the whole host read-only and hides folders, the agent's starts from nothing:
 * /work, /home, /root, /srv and /mnt (where tasks, references and run folders
 * live) are not there at all.
 */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

function isInsideOrSame(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith("/") ? root : `${root}/`);
}

/** bubblewrap argv (before the command): a fresh root holding only the system folders and the agent's paths. */
export function bwrapAgentArgs(bwrap: string, m: AgentMounts): string[] {
  // /tmp first: an --agent-bind folder under the host's /tmp is bound over the private one
  const args: string[] = [bwrap, "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/lmr"];
  for (const d of SYSTEM_DIRS) {
    let st;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    // merged /usr: /bin -> usr/bin stays a link
    if (st.isSymbolicLink()) args.push("--symlink", readlinkSync(d), d);
    else args.push("--ro-bind", d, d);
  }
  const readOnly = m.readOnly.map((p) => resolve(p)).filter((p) => existsSync(p));
  for (const r of readOnly) args.push("--ro-bind", r, r);
  // A hidden folder under a bound one (a task kept under /opt, a toolkit under an --agent-bind
  // folder) gets an empty tmpfs over it; then an agent folder inside a hidden one is bound again,
  // so it alone shows through.
  const bound = [...SYSTEM_DIRS, ...readOnly];
  const hidden = m.hide.map((p) => resolve(p)).filter((h) => h !== "/" && existsSync(h) && bound.some((b) => isInsideOrSame(b, h)));
  for (const h of hidden) {
    if (lstatSync(h).isDirectory()) args.push("--tmpfs", h);
    else args.push("--ro-bind", "/dev/null", h);
  }
  for (const r of readOnly) if (hidden.some((h) => r !== h && isInsideOrSame(h, r))) args.push("--ro-bind", r, r);
  args.push(
    "--bind",
    m.workspace,
    AGENT_PATHS.workspace,
    "--ro-bind",
    m.instruction,
    AGENT_PATHS.instruction,
    "--bind",
    m.out,
    AGENT_PATHS.out,
    "--bind",
    m.home,
    AGENT_PATHS.home,
    // bwrap's new root is a tmpfs: read-only, so only the binds above and /tmp take writes
    "--remount-ro",
    "/",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    ...(m.network ? [] : ["--unshare-net"]),
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--chdir",
    AGENT_PATHS.workspace,
    "--",
  );
  return args;
}

/** The environment the agent starts with: built from nothing, plus the variables --agent-env names. */
export function agentEnv(pass: Record<string, string>, extraPath: string[] = []): Record<string, string> {
  return {
    PATH: [...extraPath, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(":"),
    HOME: AGENT_PATHS.home,
    TMPDIR: "/tmp",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    TERM: "dumb",
    LMR_WORKSPACE: AGENT_PATHS.workspace,
    LMR_INSTRUCTION: AGENT_PATHS.instruction,
    LMR_AGENT_OUT: AGENT_PATHS.out,
    ...pass,
  };
}

/** Folders a Node or Python interpreter outside the system folders needs (e.g. nvm's node under /root). */
export function interpreterFolders(paths: string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const top = dirname(dirname(p));
    if (top !== "/" && !SYSTEM_DIRS.some((d) => isInsideOrSame(d, p))) out.add(top);
  }
  return [...out];
}

/** `docker run` argv: the agent's image, the same paths bound, no network unless asked, the host user, no capabilities. */
export function dockerAgentArgs(o: { name: string; image: string; mounts: AgentMounts; env: Record<string, string>; command: string }): string[] {
  const m = o.mounts;
  const uid = typeof process.getuid === "function" ? process.getuid() : 1000;
  const gid = typeof process.getgid === "function" ? process.getgid() : 1000;
  return [
    // the owner label lets the sweep of a later run remove it when this lmr was killed with -9
    "run",
    "--rm",
    "--name",
    o.name,
    "--label",
    `${OWNER_LABEL}=${ownerLabel()}`,
    "--network",
    m.network ? "bridge" : "none",
    "--user",
    `${uid}:${gid}`,
    "--cap-drop",
    "ALL",
    "--security-opt",
    "no-new-privileges",
    "--pids-limit",
    "1024",
    "-v",
    `${m.workspace}:${AGENT_PATHS.workspace}`,
    "-v",
    `${m.instruction}:${AGENT_PATHS.instruction}:ro`,
    "-v",
    `${m.out}:${AGENT_PATHS.out}`,
    "-v",
    `${m.home}:${AGENT_PATHS.home}`,
    ...m.readOnly.filter((p) => existsSync(p)).flatMap((p) => ["-v", `${resolve(p)}:${resolve(p)}:ro`]),
    "-w",
    AGENT_PATHS.workspace,
    ...Object.keys(o.env).flatMap((k) => ["-e", k]),
    o.image,
    "/bin/sh",
    "-c",
    o.command,
  ];
}

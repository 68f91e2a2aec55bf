import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { LmrError } from "../core/errors.js";
import { dockerError, inspectImage, probeDocker, streamDocker } from "./docker-cli.js";
import { DEBIAN_BASE_PACKAGES, LABEL, ROOTFS_REPO } from "./images.js";

/*
 * Where no registry is reachable, a Debian base comes from a root filesystem
 * made here: `debootstrap --variant=minbase --include=<the base packages>
 * SUITE DIR MIRROR`, then `tar -C DIR -c . | docker import - lmr-rootfs:SUITE`.
 * The mirror is the one apt on this machine already uses. Measured here:
 * bookworm in ~1 to 2.5 min, 304 MB on disk, a 289 MB image.
 */

export interface RootfsOptions {
  /** Debian mirror URI (default: the URIs: line of apt's debian.sources, else sources.list, else deb.debian.org). */
  mirror?: string;
  /** Folder the rootfs is made in (default: a temp folder under /var/tmp, removed afterwards). */
  workDir?: string;
  onLine?: (line: string) => void;
}

export interface RootfsResult {
  tag: string;
  id: string;
  size: number;
  mirror: string;
  seconds: number;
}

/** The Debian mirror apt is configured with on this machine. */
async function findAptMirror(): Promise<string> {
  const deb822 = await readFile("/etc/apt/sources.list.d/debian.sources", "utf8").catch(() => "");
  const uri = /^URIs:\s*(\S+)/m.exec(deb822)?.[1];
  if (uri) return uri;
  const list = await readFile("/etc/apt/sources.list", "utf8").catch(() => "");
  const deb = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+/m.exec(list)?.[1];
  return deb ?? "http://deb.debian.org/debian";
}

function runLogged(cmd: string, args: string[], onLine: (l: string) => void): Promise<{ code: number; tail: string[] }> {
  return new Promise((resolveRun) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const tail: string[] = [];
    const take = (d: Buffer): void => {
      for (const l of d.toString().split("\n").filter(Boolean)) {
        tail.push(l);
        if (tail.length > 50) tail.shift();
        onLine(l);
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (e) => resolveRun({ code: 127, tail: [e.message] }));
    child.on("close", (code) => resolveRun({ code: code ?? 1, tail }));
  });
}

/** Makes lmr-rootfs:SUITE from a debootstrap of SUITE; `lmr env build` then builds Debian bases FROM it. */
export async function importRootfs(suite: string, opts: RootfsOptions = {}): Promise<RootfsResult> {
  const t0 = performance.now();
  const onLine = opts.onLine ?? (() => {});
  if (!["bookworm", "trixie"].includes(suite)) {
    throw new LmrError({
      code: "env/rootfs-suite",
      message: `no rootfs for '${suite}': only Debian bases are made from a rootfs`,
      hint: "use debian:bookworm or debian:trixie; python:X.Y-slim needs the official image (--base-image)",
    });
  }
  const debootstrap = ["/usr/sbin/debootstrap", "/usr/bin/debootstrap"].find((p) => existsSync(p));
  if (!debootstrap) throw new LmrError({ code: "env/no-debootstrap", message: "debootstrap is not installed", hint: "apt-get install debootstrap" });
  if (process.getuid?.() !== 0)
    throw new LmrError({ code: "env/rootfs-needs-root", message: "debootstrap needs root", hint: "run `lmr env base --from-rootfs` as root (or with sudo)" });
  const d = await probeDocker();
  if (!d.ok) throw new LmrError({ code: "env/no-docker", message: d.reason, hint: "start dockerd; `docker info` must answer" });
  const mirror = opts.mirror ?? (await findAptMirror());
  const dir = opts.workDir ?? (await mkdtemp(join("/var/tmp", `lmr-rootfs-${suite}-`)));
  try {
    onLine(`debootstrap --variant=minbase ${suite} from ${mirror}`);
    const boot = await runLogged(debootstrap, ["--variant=minbase", `--include=${DEBIAN_BASE_PACKAGES.join(",")}`, suite, dir, mirror], onLine);
    if (boot.code !== 0) {
      throw new LmrError({
        code: "env/debootstrap-failed",
        message: `debootstrap of ${suite} from ${mirror} failed: ${boot.tail.slice(-3).join(" | ")}`,
        hint: "check the mirror (--mirror URI) and the network; the log is in <dir>/debootstrap/debootstrap.log",
      });
    }
    const tag = `${ROOTFS_REPO}:${suite}`;
    onLine(`docker import → ${tag}`);
    const tar = spawn("tar", ["-C", dir, "--numeric-owner", "-c", "."], { stdio: ["ignore", "pipe", "inherit"] });
    const imp = await streamDocker(
      ["import", "--change", `LABEL ${LABEL.kind}=rootfs ${LABEL.base}=debian:${suite}`, "--message", `debootstrap minbase ${suite} from ${mirror}`, "-", tag],
      onLine,
      { stdinFrom: tar.stdout },
    );
    if (imp.exitCode !== 0) throw dockerError(`import the ${suite} rootfs`, { exitCode: imp.exitCode, stdout: "", stderr: imp.tail.join("\n") });
    const info = await inspectImage(tag);
    if (!info) throw dockerError(`find ${tag} after importing it`, { exitCode: 1, stdout: "", stderr: "" });
    return { tag, id: info.id, size: info.size, mirror, seconds: (performance.now() - t0) / 1000 };
  } finally {
    if (!opts.workDir) await rm(dir, { recursive: true, force: true });
  }
}

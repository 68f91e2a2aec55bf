import { execa } from "execa";
import { ensureEnv, normaliseEnvironment, probeDocker } from "../../src/env/index.js";
import type { Environment } from "../../src/manifest/types.js";

/** The environment of every example and fixture task: debian:bookworm, nothing added. */
export const PLAIN_ENV: Environment = { python: "3.11", requirements: [], gpu: false, network: false };

let ready: Promise<{ ok: true; version: string } | { ok: false; reason: string }> | undefined;

/**
 * Whether the docker tests can run here: a daemon answers and the plain
 * environment image exists or can be built (its base from LMR_BASE_IMAGE_*, a
 * `lmr env base --from-rootfs` import, or a registry). Asked once per file;
 * when not, the caller skips with this reason printed, never fails.
 */
function dockerReady(): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  ready ??= (async () => {
    const d = await probeDocker();
    if (!d.ok) return { ok: false as const, reason: d.reason };
    try {
      await ensureEnv(normaliseEnvironment(PLAIN_ENV));
    } catch (err) {
      return { ok: false as const, reason: `the plain environment image cannot be built: ${(err as Error).message}` };
    }
    return { ok: true as const, version: d.version };
  })();
  return ready;
}

export async function skipUnlessDocker(label: string): Promise<boolean> {
  const r = await dockerReady();
  if (!r.ok) console.warn(`[${label}] docker tests skipped: ${r.reason}`);
  return r.ok;
}

/** Names of containers (running or not) carrying lmr's owner label. */
export async function lmrContainers(): Promise<string[]> {
  const r = await execa("docker", ["ps", "--all", "--filter", "label=lmr.owner", "--format", "{{.Names}}"], { reject: false });
  return String(r.stdout).split("\n").filter(Boolean);
}

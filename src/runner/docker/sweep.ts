import { sweepSocketFolders } from "../scratch.js";
import { spawnSync } from "node:child_process";
import { hostname } from "node:os";
import { dockerBin, listContainers, removeContainers } from "../../env/docker-cli.js";
import { onStopSignal } from "../../core/stop-signals.js";
import { processStart } from "../../core/process.js";

/** Label on every test container: who started it (`host/pid/start`), so a later run can tell a leftover. */
export const OWNER_LABEL = "lmr.owner";

let me: string | undefined;
/** This process as an owner label value. */
export function ownerLabel(): string {
  me ??= `${hostname()}/${process.pid}/${processStart(process.pid) ?? ""}`;
  return me;
}

/** True when the owner named by a label value is a dead process on this host. */
function ownerIsGone(value: string): boolean {
  const [host, pidText, start] = value.split("/");
  if (host !== hostname()) return false; // another machine's container on a shared daemon: not ours to judge
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  const now = processStart(pid);
  return now === undefined || (start !== "" && now !== start);
}

/**
 * Removes test containers whose lmr process died without removing them (kill
 * -9, a crash): `docker run --rm` only removes a container when it exits, and
 * a container whose supervisor is gone runs until the in-container timeout.
 * Returns the names removed.
 */
export async function sweepStaleContainers(): Promise<string[]> {
  const stale = (await listContainers(OWNER_LABEL)).filter((c) => ownerIsGone(c.value));
  await removeContainers(stale.map((c) => c.id));
  await sweepSocketFolders();
  return stale.map((c) => c.name);
}

const active = new Set<string>();
let hooked = false;

/**
 * Tracks a running container so that SIGINT/SIGTERM/SIGHUP of lmr (Ctrl-C, a CI
 * cancel) removes it before lmr exits; the signal is then raised again with its
 * default action. kill -9 cannot be caught: the owner label and the sweep
 * cover that. Returns the function that stops tracking it.
 */
export function trackContainer(name: string): () => void {
  active.add(name);
  if (!hooked) {
    hooked = true;
    onStopSignal(() => {
      if (active.size > 0) spawnSync(dockerBin(), ["rm", "--force", ...active], { stdio: "ignore", timeout: 20_000 });
    });
  }
  return () => active.delete(name);
}

import { describe, expect, it } from "vitest";
import type { ChannelState } from "../channel.js";
import { dockerRunArgs, findMissingModules } from "./run.js";

describe("dockerRunArgs", () => {
  const args = dockerRunArgs({
    name: "lmr-run-1-abc",
    image: "sha256:" + "0".repeat(64),
    writable: ["/tmp/lmr-run-x"],
    readOnly: ["/tmp/lmr-run-x/tree/lmr_tests"],
    chanDir: "/tmp/lmr-chan-1-y",
    workdir: "/tmp/lmr-run-x/tree",
    env: { HOME: "/tmp/lmr-run-x/home" },
    user: { uid: 10001, gid: 10001 },
    network: false,
    memoryMb: 512,
    maxProcs: 64,
    cpus: 1,
    gpu: false,
    cmd: ["python", "-c", "1"],
  });
  const s = args.join(" ");

  it("isolates: no network, read-only root, private /tmp, no capabilities, non-root, cgroup limits", () => {
    expect(args.slice(0, 5)).toEqual(["run", "--rm", "--interactive", "--log-driver", "none"]);
    expect(s).toMatch(/--network none/);
    expect(s).toMatch(/--read-only --tmpfs \/tmp:rw,exec,nosuid,nodev,size=\d+m/);
    expect(s).toMatch(/--cap-drop ALL --security-opt no-new-privileges/);
    expect(s).toMatch(/--user 10001:10001/);
    expect(s).toMatch(/--memory 512m --memory-swap 512m --pids-limit 64 --cpus 1/);
    expect(s).toMatch(/--label lmr\.owner=[^ ]+\/\d+\/\d*/);
    expect(s).not.toMatch(/--gpus/);
  });

  it("mounts the scratch copy writable, the grader read-only, the socket folder at /lmr/chan, and runs the command last", () => {
    expect(s).toContain("--mount type=bind,source=/tmp/lmr-run-x,target=/tmp/lmr-run-x ");
    expect(s).toContain("--mount type=bind,source=/tmp/lmr-run-x/tree/lmr_tests,target=/tmp/lmr-run-x/tree/lmr_tests,readonly");
    expect(s).toContain("--mount type=bind,source=/tmp/lmr-chan-1-y,target=/lmr/chan");
    expect(s).toContain("--workdir /tmp/lmr-run-x/tree --env HOME=/tmp/lmr-run-x/home");
    expect(args.slice(-4)).toEqual(["sha256:" + "0".repeat(64), "python", "-c", "1"]);
  });
});

describe("findMissingModules", () => {
  const state = (messages: string[]): ChannelState => ({
    collectErrors: messages.map((message) => ({ id: "t.py", message })),
    results: [],
    problems: [],
  });

  it("names top-level modules the tree does not provide", () => {
    const st = state(["E   ModuleNotFoundError: No module named 'rapidfuzz.distance'", "No module named 'os_nonexistent_xyz'"]);
    expect(findMissingModules(st, "/nonexistent-root")).toEqual(["os_nonexistent_xyz", "rapidfuzz"]);
  });

  it("leaves out modules of the tree itself (a submodule the tree lacks is not the image's fault)", () => {
    const st = state(["No module named 'src.missing'"]);
    expect(findMissingModules(st, process.cwd())).toEqual([]);
  });
});

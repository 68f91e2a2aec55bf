import { describe, expect, it } from "vitest";
import { toolkitPath } from "../core/paths.js";
import { bwrapBackend, localBackend } from "./backends.js";
import type { WrapOptions } from "./types.js";

describe("bwrapBackend.wrap", () => {
  const opts: WrapOptions = {
    // read-only binds of folders that exist (a missing one is left out)
    readOnly: [toolkitPath("python"), "/tmp/lmr-run-x/support-that-does-not-exist"],
    readOnlyAt: [{ src: "/tmp/lmr-run-x/tree", dest: "/tmp/lmr-run-x/tree-source" }],
    writable: ["/tmp/lmr-run-x/bridge"],
    tmpfs: [
      { path: "/tmp", sizeMb: 512 },
      { path: "/dev/shm", sizeMb: 256 },
      { path: "/tmp/lmr-run-x/tree", sizeMb: 600 },
    ],
    chdir: "/tmp/lmr-run-x/tree",
    network: false,
  };

  it("binds the system folders and the run's own, never the whole root, and cuts network and capabilities", () => {
    const argv = bwrapBackend.wrap(["python3", "-c", "1"], opts);
    const s = argv.join(" ");
    expect(s).not.toMatch(/--ro-bind \/ \//);
    expect(s).toMatch(/--dev \/dev --proc \/proc/);
    expect(s).toMatch(/--ro-bind \/usr \/usr/);
    for (const hidden of ["/work", "/root", "/home", "/opt", "/var", "/run", "/srv", "/mnt"]) expect(argv).not.toContain(hidden);
    // of /etc, only what programs read: never the whole folder, never shadow or ssh keys
    expect(argv).not.toContain("/etc");
    expect(s).not.toMatch(/\/etc\/(shadow|gshadow|ssh)/);
    expect(argv).toContain("--unshare-net");
    expect(argv).toContain("--die-with-parent");
    expect(s).toMatch(/--cap-drop ALL/);
    expect(argv.slice(-4)).toEqual(["--", "python3", "-c", "1"]);
    expect(bwrapBackend.describe(opts)).toEqual({ network: "off", filesystem: "minimal" });
  });

  it("sizes every tmpfs, binds writable folders before read-only ones, and makes / and /dev read-only last", () => {
    const argv = bwrapBackend.wrap(["true"], opts);
    const s = argv.join(" ");
    expect(s).toContain(`--size ${512 * 1024 * 1024} --tmpfs /tmp`);
    expect(s).toContain(`--size ${256 * 1024 * 1024} --tmpfs /dev/shm`);
    expect(s).toContain(`--size ${600 * 1024 * 1024} --tmpfs /tmp/lmr-run-x/tree`);
    const python = toolkitPath("python");
    expect(s.indexOf("--bind /tmp/lmr-run-x/bridge")).toBeLessThan(s.indexOf(`--ro-bind ${python} ${python}`));
    expect(s).not.toContain("support-that-does-not-exist");
    expect(s).toContain("--ro-bind /tmp/lmr-run-x/tree /tmp/lmr-run-x/tree-source");
    expect(s.indexOf("--remount-ro / --remount-ro /dev")).toBeGreaterThan(s.indexOf("--ro-bind /tmp/lmr-run-x/tree /tmp/lmr-run-x/tree-source"));
    expect(s).toMatch(/--chdir \/tmp\/lmr-run-x\/tree --/);
  });

  it("keeps the network when asked", () => {
    expect(bwrapBackend.wrap(["true"], { ...opts, network: true })).not.toContain("--unshare-net");
    expect(localBackend.wrap(["a", "b"], opts)).toEqual(["a", "b"]);
  });
});

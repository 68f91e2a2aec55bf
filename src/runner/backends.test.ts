import { describe, expect, it } from "vitest";
import { bwrapBackend, localBackend } from "./backends.js";

describe("bwrapBackend.wrap", () => {
  const opts = {
    scratch: "/tmp/lmr-run-x",
    readOnly: ["/tmp/lmr-run-x/tree/lmr_tests"],
    keepVisible: ["/usr", "/etc/ssl"],
    hide: ["/etc", "/"],
    network: false,
  };

  it("binds only the scratch writable, the grader read-only, and cuts network and capabilities", () => {
    const argv = bwrapBackend.wrap(["python3", "-c", "1"], opts);
    const s = argv.join(" ");
    expect(s).toMatch(/--ro-bind \/ \/ --dev \/dev --proc \/proc --tmpfs \/tmp/);
    expect(s).toMatch(/--bind \/tmp\/lmr-run-x \/tmp\/lmr-run-x --ro-bind \/tmp\/lmr-run-x\/tree\/lmr_tests \/tmp\/lmr-run-x\/tree\/lmr_tests/);
    expect(argv).toContain("--unshare-net");
    expect(argv).toContain("--die-with-parent");
    expect(s).toMatch(/--cap-drop ALL/);
    expect(argv.slice(-4)).toEqual(["--", "python3", "-c", "1"]);
    expect(bwrapBackend.describe(opts)).toEqual({ network: "off", filesystem: "readonly" });
  });

  it("never hides /, hides after keeping, and re-keeps only what a hidden folder covers", () => {
    const s = bwrapBackend.wrap(["true"], opts).join(" ");
    expect(s).not.toMatch(/--tmpfs \/ /);
    const keepUsr = s.indexOf("--ro-bind /usr /usr");
    const hideEtc = s.indexOf("--tmpfs /etc");
    expect(keepUsr).toBeGreaterThan(0);
    expect(hideEtc).toBeGreaterThan(keepUsr);
    expect(s.lastIndexOf("--ro-bind /etc/ssl /etc/ssl")).toBeGreaterThan(hideEtc);
    expect(s.lastIndexOf("--ro-bind /usr /usr")).toBe(keepUsr);
  });

  it("keeps the network when asked", () => {
    expect(bwrapBackend.wrap(["true"], { ...opts, network: true })).not.toContain("--unshare-net");
    expect(localBackend.wrap(["a", "b"], opts)).toEqual(["a", "b"]);
  });
});

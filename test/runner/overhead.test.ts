import { execFileSync, spawnSync } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeBwrap, resolvePython, runTests, type PythonEnv } from "../../src/runner/index.js";

const FIX = resolve(fileURLToPath(new URL(".", import.meta.url)), "../fixtures/runner");
const REPS = 5;
let python: PythonEnv;
let bare: string;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
async function timeMs(f: () => unknown): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

beforeAll(async () => {
  python = await resolvePython({});
  bare = await mkdtemp(join(tmpdir(), "lmr-overhead-"));
  await cp(join(FIX, "trees", "good"), bare, { recursive: true });
  await cp(join(FIX, "grader"), join(bare, "lmr_tests"), { recursive: true });
});
afterAll(async () => {
  await rm(bare, { recursive: true, force: true });
});

describe("runner overhead (figures printed; bounds are loose on purpose)", () => {
  it("runTests costs a small multiple of a bare pytest (with its candidate, unsandboxed) on the same tree", async () => {
    // the tests reach the code through a candidate process: the bare run starts one too (lmr_bridge/by_hand.py)
    const byHand = resolve(FIX, "..", "..", "..", "python", "lmr_bridge", "by_hand.py");
    const bareRun = (): void => {
      const r = spawnSync(python.path, [byHand, "--tree", ".", "--", "-q", "-p", "no:cacheprovider", "lmr_tests"], {
        cwd: bare,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
      });
      expect(r.status, String(r.stdout)).toBe(0);
    };
    const req = { tree: join(FIX, "trees", "good"), grader: join(FIX, "grader"), python, timeoutTotalS: 30 };
    const bwrapOk = (await probeBwrap()).ok;
    const t: Record<string, number[]> = { bare: [], local: [], bwrap: [] };
    for (let i = 0; i < REPS; i++) {
      t.bare!.push(await timeMs(bareRun));
      t.local!.push(await timeMs(async () => expect((await runTests({ ...req, sandbox: "none" })).status).toBe("passed")));
      if (bwrapOk) t.bwrap!.push(await timeMs(async () => expect((await runTests({ ...req, sandbox: "bwrap" })).status).toBe("passed")));
    }
    const m = { bare: median(t.bare!), local: median(t.local!), bwrap: bwrapOk ? median(t.bwrap!) : NaN };
    console.log(
      `[overhead] median of ${REPS}: bare pytest ${m.bare.toFixed(0)} ms, runTests local ${m.local.toFixed(0)} ms (x${(m.local / m.bare).toFixed(2)}), ` +
        `runTests bwrap ${m.bwrap.toFixed(0)} ms (x${(m.bwrap / m.bare).toFixed(2)})`,
    );
    expect(m.local / m.bare).toBeLessThan(4);
    if (bwrapOk) expect(m.bwrap / m.bare).toBeLessThan(5);
  });

  it.skipIf(!spawnSync("bwrap", ["--version"]).stdout)("bwrap startup cost", async () => {
    const flags = [
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--tmpfs",
      "/tmp",
      "--unshare-pid",
      "--unshare-net",
      "--die-with-parent",
      "--new-session",
      "--cap-drop",
      "ALL",
    ];
    const plain: number[] = [];
    const boxed: number[] = [];
    for (let i = 0; i < 10; i++) {
      plain.push(await timeMs(() => execFileSync("true")));
      boxed.push(await timeMs(() => execFileSync("bwrap", [...flags, "true"])));
    }
    const cost = median(boxed) - median(plain);
    console.log(`[overhead] bwrap startup: ${median(boxed).toFixed(1)} ms vs ${median(plain).toFixed(1)} ms plain, +${cost.toFixed(1)} ms`);
    expect(cost).toBeLessThan(500);
  });
});

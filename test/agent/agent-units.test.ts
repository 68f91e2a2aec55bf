import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runAgentSample, submissionRow, type AgentSampleInput } from "../../src/agent/run-agent.js";
import { bwrapAgentArgs } from "../../src/agent/sandbox.js";
import { AGENT_PATHS, AGENT_PRESETS, expandTemplate, presetTemplate, shellQuote, templateVariables } from "../../src/agent/template.js";
import { commitBaseline, diffWorkspace } from "../../src/agent/workspace-diff.js";
import { LmrError } from "../../src/core/errors.js";
import { probeBwrap } from "../../src/runner/backends.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";

afterAll(removeTempDirs);

const values = {
  instruction: AGENT_PATHS.instruction,
  workspace: AGENT_PATHS.workspace,
  out: AGENT_PATHS.out,
  model: "gpt-4o-mini",
  task: "pref-loss",
  sample: "0",
};

describe("command templates", () => {
  it("replaces every variable with a shell-quoted value and keeps {{ }} as braces", () => {
    expect(expandTemplate("agent --repo {workspace} --task {instruction} --json '{{\"a\": 1}}'", values)).toBe(
      `agent --repo /workspace --task /lmr/instruction.md --json '{"a": 1}'`,
    );
    expect(expandTemplate("x {model}", { ...values, model: "it's; rm -rf /" })).toBe(`x 'it'\\''s; rm -rf /'`);
    expect(shellQuote("a b")).toBe("'a b'");
  });

  it("an unknown variable or a missing value is a usage error naming the fix", () => {
    const err = (() => {
      try {
        templateVariables("run {workdir}");
      } catch (e) {
        return e as LmrError;
      }
    })();
    expect(err).toBeInstanceOf(LmrError);
    expect(err!.kind).toBe("usage");
    expect(err!.message).toContain("{workdir}");
    expect(err!.hint).toContain("{workspace}");
    expect(() => expandTemplate("run {model}", { workspace: "/w" })).toThrow(/no value is given for it/);
  });

  it("each preset expands with the sandbox's paths and the model, and is documented", () => {
    const expected: Record<string, RegExp[]> = {
      "claude-code": [/^cd \/workspace && claude --print --model gpt-4o-mini /, /"\$\(cat \/lmr\/instruction\.md\)"/, /tee \/lmr\/out\/trajectory\.jsonl$/],
      codex: [/^cd \/workspace && codex exec --model gpt-4o-mini --full-auto/, /"\$\(cat \/lmr\/instruction\.md\)"/, /\/lmr\/out\/trajectory\.jsonl$/],
      aider: [
        /^cd \/workspace && aider --model gpt-4o-mini --message-file \/lmr\/instruction\.md/,
        /--chat-history-file \/lmr\/out\/aider\.chat\.history\.md$/,
      ],
      openhands: [/WORKSPACE_BASE=\/workspace LLM_MODEL=gpt-4o-mini SAVE_TRAJECTORY_PATH=\/lmr\/out\/trajectory\.json python -m openhands\.core\.main -t/],
    };
    expect(Object.keys(AGENT_PRESETS).sort()).toEqual(Object.keys(expected).sort());
    for (const [name, patterns] of Object.entries(expected)) {
      const cmd = expandTemplate(presetTemplate(name), values, "--preset");
      for (const p of patterns) expect(cmd, name).toMatch(p);
      expect(AGENT_PRESETS[name]!.about.length, name).toBeGreaterThan(20);
    }
    expect(() => presetTemplate("devin")).toThrow(/no agent preset 'devin'/);
  });
});

describe("the agent's sandbox", () => {
  it("starts from an empty root: system folders, the agent's paths, no network unless asked", () => {
    const m = { workspace: "/s/ws", instruction: "/s/i.md", out: "/s/out", home: "/s/home", readOnly: [], hide: [], network: false };
    const args = bwrapAgentArgs("/usr/bin/bwrap", m);
    const pairs = (flag: string): string[][] => args.flatMap((a, i) => (a === flag ? [[args[i + 1]!, args[i + 2]!]] : []));
    // never the host's root: only named system folders
    expect([...pairs("--ro-bind"), ...pairs("--bind")].map(([from]) => from)).not.toContain("/");
    expect(args.slice(args.indexOf("--remount-ro"), args.indexOf("--remount-ro") + 2)).toEqual(["--remount-ro", "/"]);
    expect(pairs("--bind")).toEqual([
      ["/s/ws", "/workspace"],
      ["/s/out", "/lmr/out"],
      ["/s/home", "/lmr/home"],
    ]);
    expect(pairs("--ro-bind")).toContainEqual(["/s/i.md", "/lmr/instruction.md"]);
    expect(args).toContain("--unshare-net");
    expect(args).toContain("--die-with-parent");
    expect(bwrapAgentArgs("/usr/bin/bwrap", { ...m, network: true })).not.toContain("--unshare-net");
  });

  it("hides a folder under a bound one, and lets only the agent's own folder inside it show through", async () => {
    const root = await makeTempDir("agent-hide");
    const toolkit = join(root, "toolkit");
    await mkdir(join(toolkit, "agents"), { recursive: true });
    await mkdir(join(toolkit, "tasks"), { recursive: true });
    const args = bwrapAgentArgs("/usr/bin/bwrap", {
      workspace: "/s/ws",
      instruction: "/s/i.md",
      out: "/s/out",
      home: "/s/home",
      readOnly: [root, join(toolkit, "agents")],
      hide: [toolkit, "/nonexistent"],
      network: false,
    });
    const at = (flag: string, path: string): number[] => args.flatMap((a, i) => (a === flag && args[i + 1] === path ? [i] : []));
    const tmpfs = at("--tmpfs", toolkit);
    expect(tmpfs).toHaveLength(1);
    expect(at("--ro-bind", root)[0]).toBeLessThan(tmpfs[0]!);
    const agentBinds = at("--ro-bind", join(toolkit, "agents"));
    expect(agentBinds.some((i) => i > tmpfs[0]!)).toBe(true);
    expect(args).not.toContain("/nonexistent");
  });
});

describe("the workspace diff", () => {
  it("gives a git patch of changed, new and deleted files; an emptied workspace is 'deleted'", async () => {
    const root = await makeTempDir("agent-diff");
    const ws = join(root, "ws");
    await mkdir(join(ws, "pkg"), { recursive: true });
    await writeFile(join(ws, "a.py"), "x = 1\n");
    await writeFile(join(ws, "pkg", "b.py"), "y = 2\n");
    await writeFile(join(ws, ".gitignore"), "*.py\n");
    const base = await commitBaseline(join(root, "g"), ws, root);
    expect(base.files).toBe(3);
    await writeFile(join(ws, "a.py"), "x = 2\n");
    await writeFile(join(ws, "new.py"), "z = 3\n");
    const { rm } = await import("node:fs/promises");
    await rm(join(ws, "pkg"), { recursive: true });
    const d = await diffWorkspace(base, root);
    expect(d.kind).toBe("patch");
    if (d.kind !== "patch") return;
    expect(d.changed.sort()).toEqual(["a.py", "new.py", "pkg/b.py"]);
    expect(d.patch).toContain("--- a/a.py\n+++ b/a.py\n");
    expect(d.patch).toContain("+++ b/new.py");
    expect(d.patch).toContain("deleted file mode");
    for (const n of await readdir(ws)) await rm(join(ws, n), { recursive: true });
    const gone = await diffWorkspace(base, root);
    expect(gone).toEqual({ kind: "deleted", reason: "the agent deleted its workspace: none of its 3 files is left" });
  });

  it("each agent outcome becomes one submission row", () => {
    const r = { task_id: "t", model: "m", sample: "0", exit_code: 0, signal: null } as const;
    expect(submissionRow({ ...r, status: "timeout", reason: "late" } as never, "")).toEqual({ task_id: "t", model: "m", sample: "0", timeout: "late" });
    expect(submissionRow({ ...r, status: "workspace-deleted", reason: "gone" } as never, "")).toEqual({
      task_id: "t",
      model: "m",
      sample: "0",
      invalid: "gone",
    });
    expect(submissionRow({ ...r, status: "finished" } as never, "")).toMatchObject({ invalid: "the agent changed nothing in its workspace (exit 0)" });
    expect(submissionRow({ ...r, status: "finished" } as never, "diff")).toMatchObject({ patch: "diff" });
  });
});

const bwrap = await probeBwrap();
if (!bwrap.ok) console.warn(`skipping runAgentSample tests: ${bwrap.reason}`);

describe.skipIf(!bwrap.ok)("runAgentSample (the library step a queue can carry)", () => {
  it("runs a shell agent in the sandbox on a copy, keeps its logs and out files, and never touches the original", async () => {
    const root = await makeTempDir("agent-sample");
    const ws = join(root, "ws");
    await mkdir(ws);
    await writeFile(join(ws, "solve.py"), "def f():\n    raise NotImplementedError\n");
    await writeFile(join(root, "instruction.md"), "Implement f: return 42.\n");
    await mkdir(join(root, "tools"));
    await writeFile(join(root, "tools", "tool.txt"), "the agent's own tool\n");
    await mkdir(join(root, "tools", "bin"));
    await writeFile(join(root, "tools", "bin", "my-tool"), "#!/bin/sh\necho my-tool on PATH\n", { mode: 0o755 });
    const input: AgentSampleInput = {
      task_id: "t",
      model: "m",
      sample: "0",
      workspace: ws,
      instruction: join(root, "instruction.md"),
      command:
        "cat {instruction}; sed -i 's/raise NotImplementedError/return 42/' {workspace}/solve.py; echo step > {out}/traj.txt; ls " +
        root +
        " 2>&1; cat " +
        join(root, "tools", "tool.txt") +
        "; my-tool; echo to-stderr >&2; exit 3",
      timeout_s: 20,
      network: false,
      sandbox: "bwrap",
      env_names: [],
      read_only: [join(root, "tools")],
      hide: [root],
      out_dir: join(root, "out"),
      scratch_parent: join(root, "scratch"),
      key: "k1",
    };
    const rec = await runAgentSample(input);
    expect(rec).toMatchObject({ status: "finished", exit_code: 3, backend: "bwrap", changed: ["solve.py"], kept: ["traj.txt"] });
    const stdout = await readFile(join(root, "out", "stdout.txt"), "utf8");
    expect(stdout).toContain("Implement f: return 42.");
    // of the folder above the bound tools folder only the tools folder is there: not the workspace, instruction or outputs
    expect(stdout).toContain("Implement f: return 42.\ntools\nthe agent's own tool\nmy-tool on PATH\n");
    expect(await readFile(join(root, "out", "stderr.txt"), "utf8")).toBe("to-stderr\n");
    expect(await readFile(join(root, "out", "patch.diff"), "utf8")).toContain("+    return 42");
    expect(await readFile(join(ws, "solve.py"), "utf8")).toContain("raise NotImplementedError");
    expect(JSON.parse(await readFile(join(root, "out", "agent.json"), "utf8"))).toEqual(JSON.parse(JSON.stringify(rec)));
    expect(await readdir(join(root, "scratch"))).toEqual([]);
  }, 30_000);

  it("has no network but loopback unless asked", async () => {
    const root = await makeTempDir("agent-net");
    await mkdir(join(root, "ws"));
    await writeFile(join(root, "ws", "a.txt"), "a\n");
    await writeFile(join(root, "i.md"), "x\n");
    const base: AgentSampleInput = {
      task_id: "t",
      model: "m",
      sample: "0",
      workspace: join(root, "ws"),
      instruction: join(root, "i.md"),
      command: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
      timeout_s: 20,
      network: false,
      sandbox: "bwrap",
      env_names: [],
      read_only: [],
      hide: [],
      out_dir: join(root, "off"),
      scratch_parent: join(root, "scratch"),
      key: "k",
    };
    await runAgentSample(base);
    expect((await readFile(join(root, "off", "stdout.txt"), "utf8")).trim()).toBe("lo");
    await runAgentSample({ ...base, network: true, out_dir: join(root, "on") });
    const host = (await readFile("/proc/net/dev", "utf8"))
      .split("\n")
      .slice(2)
      .map((l) => l.split(":")[0]!.trim())
      .filter(Boolean);
    expect((await readFile(join(root, "on", "stdout.txt"), "utf8")).trim().split("\n").sort()).toEqual(host.sort());
  }, 30_000);
});

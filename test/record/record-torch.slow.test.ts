import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallsFile, RecordedCall } from "../../src/record/calls.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { buildTask, copyTaskWithoutRecord, pythonWith, RECORD_FIXTURES, runReplay, type Built } from "./helpers.js";

afterAll(removeTempDirs);

/*
 * Record fidelity on torch code (test/fixtures/record/optim-upstream, ours): a Lion-like
 * optimizer's step (Parameters with .grad, per-parameter state keyed by those Parameters,
 * two param groups with their own lr), seeded sampling (torch.multinomial), a generator
 * target (random minibatch order, one iteration stopped early) and an nn.Module's forward.
 */

const torchPython = await pythonWith(["torch"]);

const DRIVER = `import torch
from lion import Lion
from model import TinyRegressor
from sampling import minibatches, sample_tokens

x = torch.randn(32, 4)
y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1
model = TinyRegressor(4, 8)
opt = Lion([{"params": model.body.parameters()}, {"params": model.head.parameters(), "lr": 0.003}], lr=0.01, weight_decay=0.1)
for epoch in range(2):
    for idx in minibatches(32, 8):
        opt.zero_grad()
        loss = ((model(x[idx]) - y[idx]) ** 2).mean()
        loss.backward()
        opt.step()
logits = torch.randn(3, 6)
for t in (0.5, 1.0, 2.0):
    sample_tokens(logits, t, num_samples=4)
for k, idx in enumerate(minibatches(10, 3)):
    if k == 1:
        break
`;
const TEST_FILE = "tests/test_pref_loss_replay.py";

async function optimTask(label: string): Promise<string> {
  const root = await makeTempDir(label);
  const taskDir = await copyTaskWithoutRecord(root, "pref-loss", async (m) => {
    await cp(join(RECORD_FIXTURES, "optim-upstream"), join(root, "upstreams", "optim"), { recursive: true });
    m.upstream.path = "../../upstreams/optim";
    m.targets = [
      { file: "lion.py", symbol: "Lion.step", mode: "body" },
      { file: "sampling.py", symbol: "sample_tokens", mode: "body" },
      { file: "sampling.py", symbol: "minibatches", mode: "body" },
      { file: "model.py", symbol: "TinyRegressor.forward", mode: "body", record: { max_calls: 3 } },
    ];
    m.context_files = [];
    delete m.verification;
    delete m.workspace;
  });
  await writeFile(join(taskDir, "driver.py"), DRIVER);
  return taskDir;
}

const failedIds = (r: { tests: { id: string; status: string }[] }, test: string): string[] =>
  r.tests.filter((t) => t.status === "failed" && t.id.includes(test)).map((t) => t.id.replace(/^.*\[/, "").replace("]", ""));

describe.skipIf(!torchPython)(`torch: optimizer state, .grad, sampling, generators (${torchPython ?? "skipped: no interpreter here imports torch"})`, () => {
  const py = torchPython!;
  let taskDir: string;
  let calls: CallsFile;
  let built: Built;

  beforeAll(async () => {
    taskDir = await optimTask("record-torch");
  });

  it("records Parameters with .grad and requires_grad, optimizer state keyed by the same Parameters, byte-identical twice", async () => {
    const record = () => runCli(["record", taskDir, "--driver-file", "driver.py", "--python", py, "--json"]);
    const first = await record();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(jsonData(first.stdout).targets.map((t: { symbol: string; calls_recorded: number }) => [t.symbol, t.calls_recorded])).toEqual([
      ["Lion.step", 8],
      ["sample_tokens", 3],
      ["minibatches", 3],
      ["TinyRegressor.forward", 3],
    ]);
    const json1 = await readFile(join(taskDir, "fixtures/calls.json"));
    const npz1 = await readFile(join(taskDir, "fixtures/calls.npz"));
    expect((await record()).exitCode).toBe(0);
    expect((await readFile(join(taskDir, "fixtures/calls.json"))).equals(json1)).toBe(true);
    expect((await readFile(join(taskDir, "fixtures/calls.npz"))).equals(npz1)).toBe(true);

    calls = JSON.parse(json1.toString("utf8")) as CallsFile;
    const step = calls.targets[0]!.calls[1]!;
    const groups = step.self!.before.param_groups as { __lmr__: string; items: [string, unknown][] }[];
    expect(groups.map((g) => Object.fromEntries(g.items).lr)).toEqual([0.01, 0.003]);
    const [weight] = Object.fromEntries(groups[0]!.items).params as Record<string, unknown>[];
    // the Parameter, its gradient and requires_grad: what the Lion task's first recording dropped
    expect(weight).toMatchObject({ __lmr__: "tensor", parameter: true, requires_grad: true, shape: [8, 4], grad: { __lmr__: "tensor", shape: [8, 4] } });
    const state = step.self!.before.state as { __lmr__: string; factory: string; items: [unknown, unknown][] };
    expect(state).toMatchObject({ __lmr__: "defaultdict", factory: "builtins:dict" });
    // keyed by that very Parameter: a reference to it, not a copy
    expect(state.items[0]![0]).toEqual({ __lmr__: "ref", id: weight!.id });
    expect(state.items).toHaveLength(4);
    // after the step the same Parameter is marked as the one the call was given
    const after = Object.fromEntries((step.self!.after!.param_groups as { items: [string, unknown][] }[])[0]!.items).params as Record<string, unknown>[];
    expect(after[0]).toMatchObject({ was: weight!.id });
    expect(after[0]!.key).not.toBe(weight!.key);
  });

  it("keeps the random-number state of calls that draw, and every item of a generator", () => {
    const [, sample, batches, forward] = calls.targets;
    for (const c of sample!.calls) expect(Object.keys(c.rng ?? {})).toEqual(["torch"]);
    expect(calls.targets[0]!.calls.every((c: RecordedCall) => c.rng === undefined)).toBe(true);
    expect(batches).toMatchObject({ generator: true, calls_recorded: 3 });
    expect(batches!.calls.map((c) => [c.yields!.length, c.closed ?? false, c.result ?? null])).toEqual([
      [4, false, 4],
      [4, false, 4],
      [2, true, null],
    ]);
    expect(forward!.calls[0]!.self!.before._modules).toMatchObject({ __lmr__: "dict", type: "collections:OrderedDict" });
  });

  it("the replay tests pass on the reference and fail on the stub", async () => {
    const scaffold = await runCli(["scaffold", "tests", taskDir]);
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    built = await buildTask(taskDir);
    const reference = await runReplay(built, TEST_FILE, built.reference, py);
    expect(reference.status, reference.log).toBe("passed");
    expect(reference.counts).toEqual({ passed: 17, failed: 0, errors: 0, skipped: 0 });
    const stub = await runReplay(built, TEST_FILE, undefined, py);
    expect(stub.counts).toMatchObject({ passed: 0, failed: 17, errors: 0 });
  });

  it("fails a wrong update rule, and an update that replaces the Parameters instead of changing them in place", async () => {
    const lion = built.reference["lion.py"]!;
    // Adam's order: momentum first, then its sign; the same as Lion on the first step only
    const adamish = lion
      .replace("                update = exp_avg * beta1 + p.grad * (1.0 - beta1)\n", "")
      .replace(
        '                p.add_(torch.sign(update), alpha=-group["lr"])\n                exp_avg.mul_(beta2).add_(p.grad, alpha=1.0 - beta2)\n',
        '                exp_avg.mul_(beta2).add_(p.grad, alpha=1.0 - beta2)\n                p.add_(torch.sign(exp_avg), alpha=-group["lr"])\n',
      );
    expect(adamish).not.toBe(lion);
    const r1 = await runReplay(built, TEST_FILE, { ...built.reference, "lion.py": adamish }, py);
    expect(failedIds(r1, "lion_step")).toEqual(["call-001", "call-002", "call-003", "call-004", "call-005", "call-006", "call-007"]);
    expect(r1.tests.find((t) => t.status === "failed")!.message).toMatch(/call 1, self\.param_groups after the call \[0\]\['params'\]\[0\]: at index/);

    const noDecay = lion.replace('p.mul_(1.0 - group["lr"] * group["weight_decay"])', "pass");
    expect(noDecay).not.toBe(lion);
    const r2 = await runReplay(built, TEST_FILE, { ...built.reference, "lion.py": noDecay }, py);
    expect(failedIds(r2, "lion_step")).toHaveLength(8);

    const replacing = lion.replace(
      '                p.add_(torch.sign(update), alpha=-group["lr"])\n',
      '                fresh = torch.nn.Parameter(p - group["lr"] * torch.sign(update))\n                fresh.grad = p.grad\n                group["params"][[q is p for q in group["params"]].index(True)] = fresh\n                self.state[fresh] = self.state.pop(p)\n',
    );
    expect(replacing).not.toBe(lion);
    const r3 = await runReplay(built, TEST_FILE, { ...built.reference, "lion.py": replacing }, py);
    expect(failedIds(r3, "lion_step")).toHaveLength(8);
    expect(r3.tests.find((t) => t.status === "failed")!.message).toContain("expected the tensor the call was given, updated in place; got another Parameter");
  });

  it("replays seeded sampling and generators exactly, and fails other sampling or another order", async () => {
    const sampling = built.reference["sampling.py"]!;
    const hotter = sampling.replace("torch.softmax(logits / temperature", "torch.softmax(logits * temperature");
    const sorted = sampling.replace("order = torch.randperm(n)", "order = torch.arange(n)");
    expect(hotter).not.toBe(sampling);
    const r = await runReplay(
      built,
      TEST_FILE,
      { ...built.reference, "sampling.py": hotter.replace("order = torch.randperm(n)", "order = torch.arange(n)") },
      py,
    );
    expect(failedIds(r, "sample_tokens")).toEqual(["call-000", "call-002"]); // temperature 1.0 is the same either way
    expect(failedIds(r, "minibatches")).toEqual(["call-000", "call-001", "call-002"]);
    expect(r.tests.find((t) => t.status === "failed" && t.id.includes("minibatches"))!.message).toMatch(/call 0, item 0: at index \(0,\)/);
    const short = sorted.replace("    return (n + batch_size - 1) // batch_size\n", "    return 0\n");
    const r2 = await runReplay(
      built,
      TEST_FILE,
      { ...built.reference, "sampling.py": short.replace("order = torch.arange(n)", "order = torch.randperm(n)") },
      py,
    );
    expect(failedIds(r2, "minibatches")).toEqual(["call-000", "call-001"]); // the early-closed one has no return value
    expect(r2.tests.find((t) => t.status === "failed" && t.id.includes("minibatches"))!.message).toContain("call 0, return value: expected 4, got 0");
  });

  it("a value the codec cannot store stops the recording, naming the call, the argument and its type, and writes nothing", async () => {
    const before = await readFile(join(taskDir, "fixtures/calls.json"));
    const files = await readdir(join(taskDir, "fixtures"));
    const driver = DRIVER.replace("        opt.step()\n", "        opt.step(closure=lambda: loss) if epoch == 1 else opt.step()\n");
    expect(driver).not.toBe(DRIVER);
    const r = await runCli(["record", taskDir, "--driver", driver, "--python", py]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("call 4 of Lion.step: argument 'closure' has type builtins.function, which lmr cannot record");
    expect(r.stderr).toContain("/targets/0/record/skip_args");
    expect((await readFile(join(taskDir, "fixtures/calls.json"))).equals(before)).toBe(true);
    expect(await readdir(join(taskDir, "fixtures"))).toEqual(files);

    const sub = await runCli([
      "record",
      taskDir,
      "--python",
      py,
      "--driver",
      "import torch\nfrom sampling import sample_tokens\nclass Logits(torch.Tensor):\n    pass\nsample_tokens(torch.zeros(2, 3).as_subclass(Logits))\n",
    ]);
    expect(sub.exitCode).toBe(2);
    expect(sub.stderr).toContain(
      "call 0 of sample_tokens: argument 'logits' has type __main__.Logits, which lmr cannot record (a tensor subclass would come back as a plain tensor",
    );
  });
});

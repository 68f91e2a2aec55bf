import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CallsFile } from "../../src/record/calls.js";
import { makeTempDir, removeTempDirs } from "../helpers/git-fixture.js";
import { runCli, jsonData } from "../helpers/run-cli.js";
import { copyTask } from "../helpers/task-copy.js";
import { buildTask, copyTaskWithoutRecord, runReplay } from "./helpers.js";

afterAll(removeTempDirs);

describe("recording methods", () => {
  it("OpenLoopMCTS.find_best_action: self_attrs before and after, tuple-keyed dicts, replayed on a rebuilt self", async () => {
    const root = await makeTempDir("record-mcts");
    const taskDir = await copyTask(root, "mcts-best-action", (m) => {
      m.targets[0].record = { self_attrs: ["Q", "N", "Ns", "c_puct"] };
      m.record = { driver: "driver.py", max_calls: 30 };
      // with a record section every file under fixtures/ needs a maker; the example's own goes
      m.tests.fixtures = [];
    });
    await rm(join(taskDir, "fixtures", "search_runs.json"));
    await writeFile(
      join(taskDir, "driver.py"),
      [
        "from core import OpenLoopMCTS, PersuasionGame",
        "game = PersuasionGame(max_turns=3)",
        "for c in (0.3, 3.0):",
        "    OpenLoopMCTS(game, c_puct=c, num_simulations=40).choose_action(game.initial_state())",
        "",
      ].join("\n"),
    );
    // the driver comes from the manifest's record.driver
    const rec = await runCli(["record", taskDir]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    expect(rec.stdout).toMatch(/OpenLoopMCTS\.find_best_action \(core\/mcts\.py, method\): 30 calls recorded \(\d+ made; raise --max-calls/);

    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    const target = calls.targets[0]!;
    expect(target).toMatchObject({
      symbol: "OpenLoopMCTS.find_best_action",
      owner: "OpenLoopMCTS",
      kind: "method",
      self_attrs: ["Q", "N", "Ns", "c_puct"],
      calls_recorded: 30,
    });
    expect(target.calls_seen).toBeGreaterThan(30);
    const call = target.calls[5]!;
    expect(call.arg_names).toEqual(["key", "actions", "priors"]);
    expect(Object.keys(call.self!.before)).toEqual(["N", "Ns", "Q", "c_puct"]);
    expect(Object.keys(call.self!.after!)).toEqual(["N", "Ns", "Q", "c_puct"]);
    // node keys are tuples of acts: a dict with non-str keys, tagged
    expect(call.self!.before.Ns).toMatchObject({ __lmr__: "dict" });

    const scaffold = await runCli(["scaffold", "tests", taskDir]);
    expect(scaffold.exitCode, scaffold.stderr).toBe(0);
    const testFile = "tests/test_open_loop_mcts_find_best_action_replay.py";
    expect(await readFile(join(taskDir, testFile), "utf8")).toContain(
      `OPEN_LOOP_MCTS_FIND_BEST_ACTION = RECORDING.target("core/mcts.py", "OpenLoopMCTS.find_best_action")`,
    );

    const built = await buildTask(taskDir);
    const reference = await runReplay(built, testFile, built.reference);
    expect(reference.status, reference.log).toBe("passed");
    expect(reference.counts.passed).toBe(30);
    const stub = await runReplay(built, testFile, undefined);
    expect(stub.status).toBe("failed");
    expect(stub.counts).toMatchObject({ failed: 30, errors: 0 });
    // exploitation without exploration picks other actions on some of the recorded states
    const greedy = built.reference["core/mcts.py"]!.replace("score = exploit + explore", "score = exploit");
    expect(greedy).not.toBe(built.reference["core/mcts.py"]);
    const mutant = await runReplay(built, testFile, { "core/mcts.py": greedy });
    expect(mutant.status).toBe("failed");
    expect(mutant.tests.find((t) => t.status === "failed")!.message).toMatch(/call \d+, return value: expected '\w+', got '\w+'/);
  });

  it("a whole class: __init__, property, static method, async method, plain objects of the code base", async () => {
    const root = await makeTempDir("record-class");
    const taskDir = await copyTaskWithoutRecord(root, "trainer-class");
    await writeFile(join(taskDir, "driver.py"), 'import train\ntrain.main(["--steps", "3", "--batch-size", "3"])\n');
    const rec = await runCli(["record", taskDir, "--driver-file", "driver.py", "--max-calls", "3", "--json"]);
    expect(rec.exitCode, rec.stderr).toBe(0);
    const kinds = Object.fromEntries((jsonData(rec.stdout).targets as { symbol: string; kind: string }[]).map((t) => [t.symbol, t.kind]));
    expect(kinds).toEqual({
      "Trainer.__init__": "method",
      "Trainer.learning_rate": "property",
      "Trainer.batch_logps": "staticmethod",
      "Trainer.compute_metrics": "method",
      "Trainer.train_step": "method",
      "Trainer.evaluate": "method",
    });
    const calls = JSON.parse(await readFile(join(taskDir, "fixtures/calls.json"), "utf8")) as CallsFile;
    const evaluate = calls.targets.find((t) => t.name === "evaluate")!;
    expect(evaluate.async).toBe(true);
    const before = calls.targets.find((t) => t.name === "train_step")!.calls[0]!.self!.before;
    expect(before.policy).toMatchObject({ __lmr__: "object", type: "models:BagOfWordsPolicy" });
    expect(before.config).toMatchObject({ __lmr__: "dataclass", type: "trainers:TrainerConfig" });

    const one = await runCli(["scaffold", "tests", taskDir, "--target", "Trainer.train_step", "--out", "tests/test_step_replay.py", "--json"]);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(jsonData(one.stdout).targets).toEqual([{ file: "trainers.py", symbol: "Trainer.train_step", calls: 3 }]);
    const unknown = await runCli(["scaffold", "tests", taskDir, "--target", "Trainer.fit"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("no recorded target 'Trainer.fit' (hint: recorded: Trainer.__init__, Trainer.learning_rate");
    const badOut = await runCli(["scaffold", "tests", taskDir, "--out", "tests/replay.py"]);
    expect(badOut.exitCode).toBe(2);
    expect(badOut.stderr).toContain("does not start with test_");

    expect((await runCli(["scaffold", "tests", taskDir])).exitCode).toBe(0);
    const testFile = "tests/test_trainer_replay.py";
    const built = await buildTask(taskDir);
    const reference = await runReplay(built, testFile, built.reference);
    expect(reference.status, reference.log).toBe("passed");
    const stub = await runReplay(built, testFile, undefined);
    expect(stub.status).toBe("failed");
    expect(stub.counts.passed).toBe(0);
    expect(stub.counts.errors).toBe(0);
    expect(stub.counts.failed).toBe(reference.counts.passed);
  });
});

import { describe, expect, it } from "vitest";
import { COMMANDS, commandNamed, createProgram } from "./program.js";

describe("the CLI program", () => {
  it("loads, for a run of one command, exactly that command", async () => {
    for (const [name] of COMMANDS) {
      const program = await createProgram(name);
      expect(program.commands.map((c) => c.name())).toEqual([name]);
    }
  });

  it("loads every command, in help's order, for help, an unknown command or none", async () => {
    const all = COMMANDS.map(([name]) => name);
    for (const only of [undefined, "help", "no-such-command"]) {
      expect((await createProgram(only)).commands.map((c) => c.name())).toEqual(all);
    }
  });

  it("finds the command a run names past its options, and knows a bare --version", () => {
    expect(commandNamed(["verify", "tasks/x", "--force"])).toBe("verify");
    expect(commandNamed(["--no-color", "env", "build"])).toBe("env");
    expect(commandNamed([])).toBeUndefined();
    expect(commandNamed(["-V"])).toBe(commandNamed(["--version"]));
    expect(commandNamed(["--version"])).not.toBeUndefined();
    expect(commandNamed(["--help"])).toBeUndefined();
  });
});

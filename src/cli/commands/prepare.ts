import type { Command } from "commander";

// Placeholder until the command lands; replaced by its implementation.
export function registerPrepare(program: Command): void {
  program.command("prepare").description("(not yet implemented)");
}

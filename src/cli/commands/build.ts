import type { Command } from "commander";

// Placeholder until the command lands; replaced by its implementation.
export function registerBuild(program: Command): void {
  program.command("build").description("(not yet implemented)");
}

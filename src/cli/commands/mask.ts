import type { Command } from "commander";

// Placeholder until the command lands; replaced by its implementation.
export function registerMask(program: Command): void {
  program.command("mask").description("(not yet implemented)");
}

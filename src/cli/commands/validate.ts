import type { Command } from "commander";

// Placeholder until the command lands; replaced by its implementation.
export function registerValidate(program: Command): void {
  program.command("validate").description("(not yet implemented)");
}

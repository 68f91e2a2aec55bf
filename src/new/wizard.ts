import type { Asker, Choice } from "./types.js";

/**
 * The terminal implementation of Asker, on @inquirer/prompts. The prompts are
 * imported here, on demand, so a command run from a script never loads them.
 */
export async function makeTerminalAsker(): Promise<Asker> {
  const prompts = await import("@inquirer/prompts");
  return {
    text: (q) =>
      prompts.input({
        message: q.message,
        ...(q.default !== undefined ? { default: q.default } : {}),
        ...(q.validate ? { validate: async (raw: string) => (await q.validate!(raw)) ?? true } : {}),
      }),
    select: <T>(q: { message: string; choices: Choice<T>[]; default?: T }) =>
      prompts.select<T>({ message: q.message, choices: q.choices, ...(q.default !== undefined ? { default: q.default } : {}), pageSize: 12 }),
    search: <T>(q: { message: string; choices: Choice<T>[] }) =>
      prompts.search<T>({ message: q.message, source: (term) => filterChoices(q.choices, term), pageSize: 12 }),
    confirm: (q) => prompts.confirm({ message: q.message, ...(q.default !== undefined ? { default: q.default } : {}) }),
  };
}

/** Choices whose name holds every word typed (any case, any order). */
export function filterChoices<T>(choices: Choice<T>[], term: string | undefined): Choice<T>[] {
  const words = (term ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "");
  return choices.filter((c) => words.every((w) => c.name.toLowerCase().includes(w)));
}

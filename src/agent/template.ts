import { LmrError } from "../core/errors.js";

/**
 * Where things are inside the agent's sandbox: the same fixed paths under
 * bwrap and docker, so one command template works with either.
 */
export const AGENT_PATHS = {
  workspace: "/workspace",
  instruction: "/lmr/instruction.md",
  /** Writable; whatever the agent leaves here (a trajectory) is kept in the run folder. */
  out: "/lmr/out",
  home: "/lmr/home",
} as const;

/** The variables a command template may use, as `{name}`; `{{` and `}}` are literal braces. */
export const TEMPLATE_VARIABLES = ["instruction", "workspace", "out", "model", "task", "sample"] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];

export interface AgentPreset {
  name: string;
  /** What it runs and what it needs, for --help and docs/agents.md. */
  about: string;
  template: string;
}

/**
 * Command templates for well-known CLI agents. They assume the agent is
 * installed where the sandbox can run it (on PATH in the docker image, or a
 * system folder for bwrap) and its API key passed with --agent-env; lmr
 * cannot run them without network, so only their expansion is tested here.
 */
export const AGENT_PRESETS: Record<string, AgentPreset> = {
  "claude-code": {
    name: "claude-code",
    about: "Claude Code in print mode, every tool allowed; the stream-json transcript is kept as out/trajectory.jsonl. Needs ANTHROPIC_API_KEY.",
    template:
      'cd {workspace} && claude --print --model {model} --output-format stream-json --verbose --dangerously-skip-permissions "$(cat {instruction})" | tee {out}/trajectory.jsonl',
  },
  codex: {
    name: "codex",
    about: "Codex CLI's non-interactive `codex exec` with --full-auto; its JSON event stream is kept as out/trajectory.jsonl. Needs OPENAI_API_KEY.",
    template: 'cd {workspace} && codex exec --model {model} --full-auto --skip-git-repo-check --json "$(cat {instruction})" | tee {out}/trajectory.jsonl',
  },
  aider: {
    name: "aider",
    about:
      "Aider with one message from the instruction file, no git commits, every question answered yes; the chat history is kept as out/aider.chat.history.md. Needs the model provider's key (e.g. OPENAI_API_KEY).",
    template:
      "cd {workspace} && aider --model {model} --message-file {instruction} --yes-always --no-git --no-auto-commits --no-show-model-warnings --chat-history-file {out}/aider.chat.history.md",
  },
  openhands: {
    name: "openhands",
    about:
      "OpenHands headless (python -m openhands.core.main) with the local runtime working in the workspace; the trajectory is saved as out/trajectory.json. Needs LLM_API_KEY.",
    template:
      'cd {workspace} && RUNTIME=local WORKSPACE_BASE={workspace} LLM_MODEL={model} SAVE_TRAJECTORY_PATH={out}/trajectory.json python -m openhands.core.main -t "$(cat {instruction})"',
  },
};

/** A string as one word for /bin/sh. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The variables a template names, in order of first use; an unknown `{name}` is a usage error. */
export function templateVariables(template: string, flag = "--cmd"): TemplateVariable[] {
  const used: TemplateVariable[] = [];
  for (const m of template.replace(/\{\{|\}\}/g, "").matchAll(/\{([^{}]*)\}/g)) {
    const name = m[1]!;
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
      throw new LmrError({
        code: "agent/bad-template",
        pointer: flag,
        message: `the command template uses {${name}}, which is not a variable`,
        hint: `variables: ${TEMPLATE_VARIABLES.map((v) => `{${v}}`).join(", ")}; write {{ and }} for literal braces`,
      });
    }
    if (!used.includes(name as TemplateVariable)) used.push(name as TemplateVariable);
  }
  return used;
}

/** The shell command a template becomes: every variable replaced by its value, quoted for /bin/sh. */
export function expandTemplate(template: string, values: Partial<Record<TemplateVariable, string>>, flag = "--cmd"): string {
  for (const v of templateVariables(template, flag)) {
    if (values[v] === undefined) {
      throw new LmrError({
        code: "agent/missing-variable",
        pointer: flag,
        message: `the command template uses {${v}} but no value is given for it`,
        hint: v === "model" ? "pass --model NAME" : `drop {${v}} from the template`,
      });
    }
  }
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (all, name: string | undefined) => {
    if (all === "{{") return "{";
    if (all === "}}") return "}";
    return shellQuote(values[name as TemplateVariable]!);
  });
}

/** --preset NAME's template; an unknown name is a usage error listing the presets. */
export function presetTemplate(name: string): string {
  const p = AGENT_PRESETS[name];
  if (!p)
    throw new LmrError({
      code: "agent/unknown-preset",
      pointer: "--preset",
      message: `no agent preset '${name}'`,
      hint: `presets: ${Object.keys(AGENT_PRESETS).join(", ")}; or give your own --cmd`,
    });
  return p.template;
}

import { describe, expect, it } from "vitest";
import { GIVEAWAY_THRESHOLD, codeFeatures, contractNames, scoreGiveaway } from "./giveaway.js";

// A DPO-like loss written for this test (not any upstream's code).
const BODY = `def pair_loss(chosen, rejected, ref_chosen, ref_rejected, beta, smoothing=0.0):
    """Per-pair loss. Args: chosen (Tensor): log-probabilities."""
    margin = (chosen - ref_chosen) - (rejected - ref_rejected)
    logits = beta * margin
    losses = -F.logsigmoid(logits) * (1 - smoothing) - F.logsigmoid(-logits) * smoothing
    rewards = beta * (chosen - ref_chosen).detach()
    return losses, torch.clamp(rewards, min=-50.0)
`;

const CONTRACT_ONLY = `# Implement pair_loss

Fill in \`pair_loss(chosen, rejected, ref_chosen, ref_rejected, beta, smoothing=0.0)\` in \`loss.py\`.
It returns \`(losses, rewards)\`, one value per pair, float tensors shaped like the inputs.
The loss is the paper's preference objective (Section 4, Equation 7); \`smoothing\` is the label
smoothing of Section 5.1. Empty batches give empty tensors. Keep it finite for large margins.
`;

const SPELLED_OUT = `# Implement pair_loss

Let the margin be \`(chosen - ref_chosen) - (rejected - ref_rejected)\` and \`logits = beta * margin\`.
The loss is \`-logsigmoid(logits)\` weighted by \`1 - smoothing\` plus \`-logsigmoid(-logits)\` weighted
by \`smoothing\`; rewards are β · (chosen − ref_chosen), clamped below at -50.
`;

describe("the giveaway score", () => {
  it("reads the body's calls, chains, constants and operators, leaving out the contract (name, parameters, locals, docstring)", () => {
    const known = contractNames(BODY);
    expect([...known].sort()).toEqual(
      ["beta", "chosen", "logits", "losses", "margin", "pair_loss", "ref_chosen", "ref_rejected", "rejected", "rewards", "smoothing"].sort(),
    );
    const f = codeFeatures(BODY.slice(BODY.indexOf("\n") + 1), known);
    expect(f).toContain("call:logsigmoid");
    expect(f).toContain("chain:F.logsigmoid");
    expect(f).toContain("const:50");
    expect(f).toContain("op:beta * margin");
    expect(f).toContain("op:chosen - ref_chosen");
    // the docstring's words are not code
    expect([...f].some((x) => x.includes("Args") || x.includes("Tensor"))).toBe(false);
  });

  it("scores a contract-only instruction low and one that spells the method out high, with what it revealed", () => {
    const low = scoreGiveaway([BODY], CONTRACT_ONLY);
    const high = scoreGiveaway([BODY], SPELLED_OUT);
    expect(low.score).toBeLessThanOrEqual(0.1);
    expect(high.score).toBeGreaterThan(GIVEAWAY_THRESHOLD);
    expect(high.score).toBeGreaterThan(low.score + 0.4);
    // prose mathematics (β, ·, −) counts as the operator it writes
    expect(high.revealed).toEqual(expect.arrayContaining(["call:logsigmoid", "op:beta * margin", "op:chosen - ref_chosen", "const:50"]));
  });

  it("a code fence repeating the body's lines gives it away whatever the prose says", () => {
    const fenced = `Implement it as follows:\n\n\`\`\`python\n${BODY.split("\n").slice(2).join("\n")}\`\`\`\n`;
    const r = scoreGiveaway([BODY], fenced);
    expect(r.fenced).toBeGreaterThan(0.8);
    expect(r.score).toBe(r.fenced);
  });

  it("an apostrophe in prose opens no string, and a body of one feature is not judged on one word", () => {
    const tiny = "def f(x):\n    return special_transform(x)\n";
    expect(scoreGiveaway([tiny], "The model's output goes through special_transform.").score).toBeLessThan(0.5);
  });
});

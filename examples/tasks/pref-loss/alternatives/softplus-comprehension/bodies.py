# Alternative 'softplus-comprehension' for pref-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::preference_loss
    import math

    columns = [
        list(policy_chosen_logps),
        list(policy_rejected_logps),
        list(reference_chosen_logps),
        list(reference_rejected_logps),
    ]
    if len({len(column) for column in columns}) != 1:
        raise ValueError(f"all four inputs must have the same length, got {[len(c) for c in columns]}")
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta}")

    def softplus(z: float) -> float:
        # log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)).
        return max(z, 0.0) + math.log1p(math.exp(-abs(z)))

    pc, pr, rc, rr = columns
    margins = [(a - b) - (c - d) for a, b, c, d in zip(pc, pr, rc, rr)]
    if ipo:
        target = 1.0 / (2.0 * beta)
        losses = [(h - target) * (h - target) for h in margins]
    else:
        eps = float(label_smoothing)
        # -log sigmoid(x) = softplus(-x) and -log sigmoid(-x) = softplus(x).
        losses = [(1.0 - eps) * softplus(-beta * h) + eps * softplus(beta * h) for h in margins]
    chosen_rewards = [beta * (a - c) for a, c in zip(pc, rc)]
    rejected_rewards = [beta * (b - d) for b, d in zip(pr, rr)]
    return [float(x) for x in losses], [float(x) for x in chosen_rewards], [float(x) for x in rejected_rewards]

# Alternative 'utils-loop' for pref-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::preference_loss
    if beta <= 0:
        raise ValueError(f"beta must be positive, got {beta}")
    n_pairs = check_same_length(
        policy_chosen_logps, policy_rejected_logps, reference_chosen_logps, reference_rejected_logps
    )
    losses: List[float] = []
    chosen_rewards: List[float] = []
    rejected_rewards: List[float] = []
    for i in range(n_pairs):
        # Equation (1): policy log-ratio margin minus the reference's.
        h = (policy_chosen_logps[i] - policy_rejected_logps[i]) - (
            reference_chosen_logps[i] - reference_rejected_logps[i]
        )
        if ipo:
            # Equation (4); label smoothing does not apply to IPO.
            loss = (h - 1.0 / (2.0 * beta)) ** 2
        else:
            # Equation (3) (equation (2) when label_smoothing == 0).
            loss = -(1.0 - label_smoothing) * log_sigmoid(beta * h) - label_smoothing * log_sigmoid(-beta * h)
        losses.append(float(loss))
        # Equation (5): implicit rewards.
        chosen_rewards.append(float(beta * (policy_chosen_logps[i] - reference_chosen_logps[i])))
        rejected_rewards.append(float(beta * (policy_rejected_logps[i] - reference_rejected_logps[i])))
    return losses, chosen_rewards, rejected_rewards

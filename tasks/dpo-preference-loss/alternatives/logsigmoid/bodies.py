# Alternative 'logsigmoid' for dpo-preference-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::preference_loss
    # Log-ratio margin of Eq. 7: h = log pi(y_w)/pi(y_l) - log pi_ref(y_w)/pi_ref(y_l).
    pi_logratios = policy_chosen_logps - policy_rejected_logps
    if reference_free:
        # A reference that gives every response the same probability has a log-ratio of 0,
        # so the given reference log-probabilities do not enter the loss at all.
        logits = pi_logratios
    else:
        ref_logratios = reference_chosen_logps - reference_rejected_logps
        logits = pi_logratios - ref_logratios

    if ipo:
        # IPO (Azar et al., Eq. 17): squared distance of the margin to 1 / (2 tau), tau = beta.
        losses = (logits - 1 / (2 * beta)) ** 2
    else:
        # DPO (Eq. 7) with the label flipped with probability label_smoothing (cDPO, Eq. 3).
        # F.logsigmoid is computed stably, so very large margins stay finite.
        losses = (-F.logsigmoid(beta * logits) * (1 - label_smoothing)
                  - F.logsigmoid(-beta * logits) * label_smoothing)

    # Implicit rewards r(x, y) = beta * log pi(y|x) / pi_ref(y|x), always w.r.t. the given reference.
    chosen_rewards = beta * (policy_chosen_logps - reference_chosen_logps).detach()
    rejected_rewards = beta * (policy_rejected_logps - reference_rejected_logps).detach()

    return losses, chosen_rewards, rejected_rewards

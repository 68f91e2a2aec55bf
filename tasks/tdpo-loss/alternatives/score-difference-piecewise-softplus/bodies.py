# Alternative 'score-difference-piecewise-softplus' for tdpo-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::tdpo_loss
    # Per-response scores s = beta * (log pi/pi_ref (y) + w * SeqKL(y)); the preference
    # logit is s_w - s_l.  TDPO1: w = 1.  TDPO2: w = alpha and the chosen response's
    # SeqKL passes through a stop-gradient.
    if if_tdpo2:
        kl_weight = alpha
        chosen_kl_term = chosen_position_kl.detach()
    else:
        kl_weight = 1.0
        chosen_kl_term = chosen_position_kl
    chosen_score = beta * chosen_logps_margin + (kl_weight * beta) * chosen_kl_term
    rejected_score = beta * rejected_logps_margin + (kl_weight * beta) * rejected_position_kl
    z = chosen_score - rejected_score

    # -log sigmoid(z) = softplus(-z), written out piecewise so that no branch overflows:
    #   z >= 0: log(1 + exp(-z));   z < 0: -z + log(1 + exp(z)).
    z_pos = torch.clamp(z, min=0)
    z_neg = torch.clamp(z, max=0)
    loss_pos = torch.log1p(torch.exp(-z_pos))
    loss_neg = torch.log1p(torch.exp(z_neg)) - z_neg
    losses = torch.where(z >= 0, loss_pos, loss_neg)

    with torch.no_grad():
        chosen_rewards = beta * (chosen_logps_margin + chosen_position_kl)
        rejected_rewards = beta * (rejected_logps_margin + rejected_position_kl)

    return losses, chosen_rewards.detach(), rejected_rewards.detach()

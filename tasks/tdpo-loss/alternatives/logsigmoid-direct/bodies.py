# Alternative 'logsigmoid-direct' for tdpo-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::tdpo_loss
    # u: DPO-style implicit reward difference, beta * (log-ratio(y_w) - log-ratio(y_l)).
    pi_logratios_margin = chosen_logps_margin - rejected_logps_margin
    u = beta * pi_logratios_margin

    if if_tdpo2:
        # TDPO2: delta_2 = beta * SeqKL(y_l) - sg(beta * SeqKL(y_w)), weighted by alpha.
        delta = beta * rejected_position_kl - beta * chosen_position_kl.detach()
        logits = u - alpha * delta
    else:
        # TDPO1: delta = beta * SeqKL(y_l) - beta * SeqKL(y_w).
        delta = beta * (rejected_position_kl - chosen_position_kl)
        logits = u - delta

    # -log sigmoid(logits), computed stably by logsigmoid.
    losses = -F.logsigmoid(logits)

    chosen_rewards = (beta * (chosen_logps_margin + chosen_position_kl)).detach()
    rejected_rewards = (beta * (rejected_logps_margin + rejected_position_kl)).detach()

    return losses, chosen_rewards, rejected_rewards

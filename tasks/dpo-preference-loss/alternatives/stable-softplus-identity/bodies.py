# Alternative 'stable-softplus-identity' for dpo-preference-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: trainers.py::preference_loss
    def _softplus(t: torch.Tensor) -> torch.Tensor:
        # log(1 + exp(t)) from first principles, without overflow for any t:
        # t + log1p(exp(-t)) for t >= 0 and log1p(exp(t)) for t < 0. Each branch only sees
        # the half-line where it is evaluated (clamp), so neither branch can overflow and
        # the gradient (sigmoid(t)) is exact everywhere, t = 0 included.
        t_pos = t.clamp(min=0)
        t_neg = t.clamp(max=0)
        return torch.where(t >= 0, t_pos + torch.log1p(torch.exp(-t_pos)), torch.log1p(torch.exp(t_neg)))

    # Per-response log-ratios log pi(y|x) - log pi_ref(y|x). Without a reference model, a
    # uniform reference has the same log-probability c for every response; c cancels in the
    # margin, so c = 0 is used and the given reference tensors stay out of the loss.
    if reference_free:
        chosen_logratio = policy_chosen_logps
        rejected_logratio = policy_rejected_logps
    else:
        chosen_logratio = policy_chosen_logps - reference_chosen_logps
        rejected_logratio = policy_rejected_logps - reference_rejected_logps
    margin = chosen_logratio - rejected_logratio

    if ipo:
        # IPO, Azar et al. Eq. 17 with tau = beta: (h - tau^{-1} / 2)^2.
        target = 0.5 / beta
        diff = margin - target
        losses = diff * diff
    else:
        z = beta * margin
        eps = float(label_smoothing)
        # cDPO: (1 - eps) * (-log sigmoid(z)) + eps * (-log sigmoid(-z)), with
        # -log sigmoid(z) = softplus(-z). As softplus(t) - softplus(-t) = t, this equals
        # softplus(-z) + eps * z, and also softplus(z) - (1 - eps) * z; the form whose
        # linear term has the smaller coefficient is used (exact for eps = 0 and eps = 1).
        if eps <= 0.5:
            losses = _softplus(-z) + eps * z if eps != 0 else _softplus(-z)
        else:
            losses = _softplus(z) - (1 - eps) * z if eps != 1 else _softplus(z)

    # Implicit rewards (Sec. 4 / 5.1), for logging only: beta times the log-ratio to the
    # given reference model, also when the loss is reference-free.
    with torch.no_grad():
        chosen_rewards = (beta * (policy_chosen_logps - reference_chosen_logps)).detach()
        rejected_rewards = (beta * (policy_rejected_logps - reference_rejected_logps)).detach()

    return losses, chosen_rewards, rejected_rewards

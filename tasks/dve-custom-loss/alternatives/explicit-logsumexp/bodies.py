# Alternative 'explicit-logsumexp': the same pairwise logistic loss
#   l_i = log(1 + exp(-y_i * (s_u,i - s_p,i)))
# computed from first principles as a two-term log-sum-exp log(e^0 + e^{-z}) with a
# detached max-shift (no overflow, exact gradient), and an explicit sum / count mean.

# lmr-body: Evaluator/visual_text_training.py::CustomLoss.forward
        s_p = score_hypo_premise.reshape(-1)
        s_u = score_hypo_update.reshape(-1)
        y = labels.reshape(-1).to(dtype=s_u.dtype)
        # Signed margin: positive when the update moves the score in the labelled direction
        # (up for a strengthener, y = +1; down for a weakener, y = -1).
        z = y * (s_u - s_p)
        # l = log(e^0 + e^{-z}).  Shift both exponents by m = max(0, -z), so that the larger
        # one becomes e^0 = 1 and nothing overflows:
        #   l = m + log(e^{-m} + e^{-z-m}) = m + log1p(expm1(-m) + e^{-z-m}).
        # m is detached: the value does not depend on it and neither does the gradient, which
        # stays dl/dz = -e^{-z} / (1 + e^{-z}) = -sigmoid(-z) (also at z = 0).  log1p/expm1
        # keep the small tail (z >> 0) accurate instead of rounding 1 + e^{-z} to 1.
        m = torch.clamp(-z, min=0.0).detach()
        per_example = m + torch.log1p(torch.expm1(-m) + torch.exp(-z - m))
        # Mean over the batch.
        return per_example.sum() / per_example.numel()

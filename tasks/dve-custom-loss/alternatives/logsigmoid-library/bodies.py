# Alternative 'logsigmoid-library': the pairwise logistic (RankNet / Bradley-Terry) loss
#   l_i = -log sigmoid(y_i * (s_u,i - s_p,i))
# evaluated with PyTorch's fused, numerically stable F.logsigmoid, then averaged.

# lmr-body: Evaluator/visual_text_training.py::CustomLoss.forward
        # Flatten (B, 1) -> (B,) so that the scores pair element-wise with the labels
        # (a (B, 1) x (B,) product would silently broadcast to (B, B)).
        s_p = score_hypo_premise.reshape(-1)
        s_u = score_hypo_update.reshape(-1)
        y = labels.reshape(-1).to(dtype=s_u.dtype)
        # Shift in entailment strength caused by the update relative to the premise caption,
        # signed by the label: +1 strengthener (want s_u > s_p), -1 weakener (want s_u < s_p).
        margin = y * (s_u - s_p)
        # sigmoid(margin) is the modelled probability that the pair is ordered as labelled.
        per_example = -F.logsigmoid(margin)
        return per_example.mean()

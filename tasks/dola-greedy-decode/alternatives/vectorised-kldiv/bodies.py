# Alternative 'vectorised-kldiv': candidate layers stacked into one tensor, the selection
# divergence from torch.nn.functional.kl_div, the plausibility threshold in log space
# (log max-prob + log alpha, lowered to the k-th best log-prob for min_tokens_to_keep),
# and the raw-logit difference when relative_top == 0.

# lmr-body: transformers-4.28.1/src/transformers/generation/utils.py::GenerationMixin.relative_top_filter
        import math
        log_probs = torch.log_softmax(scores, dim=-1)
        vocab_size = log_probs.shape[-1]
        threshold = log_probs.max(dim=-1, keepdim=True).values + math.log(relative_top)
        k = min(int(min_tokens_to_keep), vocab_size)
        if k > 0:
            kth_best = torch.topk(log_probs, k, dim=-1).values[..., -1:]
            threshold = torch.minimum(threshold, kth_best)
        return log_probs.masked_fill(log_probs < threshold, filter_value)
# lmr-body: transformers-4.28.1/src/transformers/generation/utils.py::GenerationMixin.dola_contrast
        import torch.nn.functional as F
        mature_logits = dict_outputs[mature_layer][:, -1, :]
        if candidate_premature_layers is not None:
            # (num_candidates, batch, vocab)
            stacked = torch.stack(
                [dict_outputs[layer][:, -1, :].to(mature_logits.device) for layer in candidate_premature_layers], dim=0
            )
            log_q_mature = F.log_softmax(mature_logits, dim=-1)[None, :, :]
            log_q_cands = F.log_softmax(stacked, dim=-1)
            M = 0.5 * (log_q_mature.exp() + log_q_cands.exp())
            # F.kl_div(input=log q, target=M) = M * (log M - log q), i.e. KL(M || q)
            kl_mature = F.kl_div(log_q_mature.expand_as(M), M, reduction="none").mean(dim=-1)
            kl_cand = F.kl_div(log_q_cands, M, reduction="none").mean(dim=-1)
            criterion = (0.5 * (kl_mature + kl_cand)).mean(dim=-1)  # average over the batch
            chosen = int(torch.argmax(criterion).item())  # first index on exact ties
            premature_layer = candidate_premature_layers[chosen]
            premature_layer_dist[premature_layer] += 1
        else:
            premature_layer = base_layer
        premature_logits = dict_outputs[premature_layer][:, -1, :].to(mature_logits.device)

        if relative_top > 0.0:
            mature_lp = self.relative_top_filter(mature_logits, relative_top)
            ruled_out = torch.isneginf(mature_lp)
            premature_lp = F.log_softmax(premature_logits, dim=-1)
            next_token_logits = (mature_lp - premature_lp).masked_fill(ruled_out, -float("Inf"))
        else:
            next_token_logits = mature_logits - premature_logits
        return next_token_logits

# Alternative 'explicit-loops-logprob': one candidate layer at a time in a Python loop,
# KL(M || q) written out from log-probabilities (summed over the vocabulary), the
# plausibility set computed in probability space with a rank-based min_tokens_to_keep,
# and the log-softmax difference when relative_top == 0.

# lmr-body: transformers-4.28.1/src/transformers/generation/utils.py::GenerationMixin.relative_top_filter
        log_probs = scores.log_softmax(dim=-1)
        probs = log_probs.exp()
        max_prob = probs.max(dim=-1, keepdim=True).values
        keep = probs >= max_prob * relative_top
        k = min(int(min_tokens_to_keep), scores.shape[-1])
        if k > 0:
            order = torch.argsort(log_probs, dim=-1, descending=True)
            top_k_mask = torch.zeros_like(keep)
            top_k_mask.scatter_(-1, order[..., :k], True)
            keep = keep | top_k_mask
        out = torch.full_like(log_probs, filter_value)
        out[keep] = log_probs[keep]
        return out
# lmr-body: transformers-4.28.1/src/transformers/generation/utils.py::GenerationMixin.dola_contrast
        import math

        def last_log_probs(layer):
            return torch.log_softmax(dict_outputs[layer][:, -1, :], dim=-1)

        def kl_from_mix(log_m, log_q):
            # KL(M || q) = sum_v M_v (log M_v - log q_v), with 0 * log 0 taken as 0
            m = log_m.exp()
            terms = torch.where(m > 0, m * (log_m - log_q), torch.zeros_like(m))
            return terms.sum(dim=-1)

        log_mature = last_log_probs(mature_layer)
        if candidate_premature_layers is not None:
            best_layer, best_value = None, None
            for layer in candidate_premature_layers:
                log_cand = last_log_probs(layer).to(log_mature.device)
                log_m = torch.logaddexp(log_mature, log_cand) - math.log(2.0)
                value = 0.5 * (kl_from_mix(log_m, log_mature) + kl_from_mix(log_m, log_cand))
                value = float(value.mean().item())  # average over the batch
                if best_value is None or value > best_value:  # strict: first wins ties
                    best_layer, best_value = layer, value
            premature_layer = best_layer
            premature_layer_dist[premature_layer] = premature_layer_dist.get(premature_layer, 0) + 1
        else:
            premature_layer = base_layer
        log_premature = last_log_probs(premature_layer).to(log_mature.device)

        contrast = log_mature - log_premature
        if relative_top > 0.0:
            mature_probs = log_mature.exp()
            top_prob = mature_probs.max(dim=-1, keepdim=True).values
            # the most probable token always stays (min_tokens_to_keep = 1)
            plausible = (mature_probs >= relative_top * top_prob) | (mature_probs == top_prob)
            contrast = torch.where(plausible, contrast, torch.full_like(contrast, -float("Inf")))
        return contrast

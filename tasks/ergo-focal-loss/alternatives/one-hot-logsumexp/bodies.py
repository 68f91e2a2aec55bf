# Alternative 'one-hot-logsumexp' for ergo-focal-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: model.py::focal_loss.forward
        # Focal loss FL(p_t) = -alpha_t (1 - p_t)^gamma log(p_t), computed from first
        # principles with a one-hot mask of the gold classes.
        num_classes = preds.shape[-1]
        logits = preds.contiguous().view(-1, num_classes)    # (n, C), one row per example
        target = labels.contiguous().view(-1)
        n = logits.shape[0]

        one_hot = torch.zeros_like(logits)
        one_hot[torch.arange(n, device=logits.device), target] = 1.0

        # log p_t = z_t - logsumexp(z), with the row maximum taken out for stability
        row_max = logits.max(dim=1, keepdim=True)[0].detach()
        shifted = logits - row_max
        log_norm = torch.log(torch.exp(shifted).sum(dim=1))
        log_pt = (shifted * one_hot).sum(dim=1) - log_norm

        # 1 - p_t = -expm1(log p_t): accurate even when p_t is close to 1; clamped away
        # from exact 0 so that a fractional gamma keeps a finite gradient
        one_minus_pt = -torch.expm1(log_pt)
        if self.gamma == 0:
            modulating = torch.ones_like(one_minus_pt)
        else:
            tiny = torch.finfo(one_minus_pt.dtype).tiny
            modulating = torch.pow(one_minus_pt.clamp(min=tiny), self.gamma)

        # class weight of the gold class
        alpha_t = (one_hot * self.alpha.to(logits.device).type_as(logits)).sum(dim=1)

        per_example = -(alpha_t * modulating * log_pt)
        total = per_example.sum()
        if self.size_average:
            return total / n                                 # divide by the number of examples
        return total

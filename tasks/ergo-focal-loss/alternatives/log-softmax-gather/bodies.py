# Alternative 'log-softmax-gather' for ergo-focal-loss: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: model.py::focal_loss.forward
        # alpha-balanced focal loss (Lin et al., 2017) of each example's gold class y:
        #     FL = -alpha_y * (1 - p_y) ** gamma * log(p_y),  p_y = softmax(preds)[y]
        num_classes = preds.size(-1)
        preds = preds.reshape(-1, num_classes)              # every leading position is one example
        labels = labels.reshape(-1, 1).long()

        log_probs = F.log_softmax(preds, dim=-1)             # stable log-probabilities
        log_pt = log_probs.gather(1, labels).squeeze(1)      # log p_y, shape (n,)
        pt = log_pt.exp()

        # per-example weight of the gold class, on the logits' device
        alpha = self.alpha.to(device=preds.device, dtype=preds.dtype)
        alpha_t = alpha.index_select(0, labels.squeeze(1))

        # modulating factor (1 - p_y) ** gamma; where 1 - p_y is exactly 0 (saturated
        # softmax) it is evaluated on a dummy base so that a fractional gamma gives a
        # zero, not NaN, gradient (0 ** 0 = 1 for gamma = 0)
        one_minus_pt = 1.0 - pt
        positive = one_minus_pt > 0
        safe_base = torch.where(positive, one_minus_pt, torch.ones_like(one_minus_pt))
        modulating = torch.where(positive, safe_base ** self.gamma,
                                 torch.full_like(one_minus_pt, 1.0 if self.gamma == 0 else 0.0))

        loss = -alpha_t * modulating * log_pt                # shape (n,)

        if self.size_average:
            loss = loss.mean()                               # plain mean over the n examples
        else:
            loss = loss.sum()
        return loss

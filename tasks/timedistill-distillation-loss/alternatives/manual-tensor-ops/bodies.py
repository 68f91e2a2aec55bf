# Alternative 'manual-tensor-ops'. Works channel-first throughout and spells every step out by hand: reshape-mean
# pooling, exp/normalise softmax, xlogy-based KL; levels are processed in a loop over (weight, student, teacher).

# lmr-body: exp/exp_long_term_forecasting.py::Exp_Long_Term_Forecast.distillation_loss
        temperature = 0.5
        eps = 1e-8
        n_down = 3
        window = 2

        def distribution(series_cf):
            # series_cf: (batch, channels, seq); softmax over non-DC frequency bins
            spec = torch.fft.rfft(series_cf, dim=-1)
            amp = torch.abs(spec)[..., 1:] / temperature
            amp = amp - amp.max(dim=-1, keepdim=True)[0]
            ex = torch.exp(amp)
            return ex / ex.sum(dim=-1, keepdim=True)

        def period_term(stu_cf, tea_cf):
            p_s = distribution(stu_cf)
            p_t = distribution(tea_cf)
            # teacher entries equal to zero contribute zero (xlogy(0, 0) == 0)
            pointwise = torch.xlogy(p_t, p_t) - p_t * torch.log(p_s + eps)
            return pointwise.mean()

        def pool_once(x):
            n = x.shape[-1] // window
            return x[..., :n * window].reshape(x.shape[0], x.shape[1], n, window).mean(dim=-1)

        def scale_term(stu_cf, tea_cf):
            cur_s, cur_t = stu_cf, tea_cf
            terms = [criterion(cur_s, cur_t)]
            for _ in range(n_down):
                cur_s = pool_once(cur_s)
                cur_t = pool_once(cur_t)
                terms.append(criterion(cur_s, cur_t))
            return torch.stack(terms).mean()

        # teacher features: flatten everything after the channel axis, then map to student width
        tea_feat = torch.flatten(features_t[0], start_dim=2)
        tea_feat = self.regressor(tea_feat)

        levels = [
            (self.args.alpha, outputs.transpose(1, 2), outputs_t[0].transpose(1, 2)),
            (self.args.beta, features[-2], tea_feat),
        ]
        level_losses = []
        for weight, stu_cf, tea_cf in levels:
            level_losses.append(weight * period_term(stu_cf, tea_cf) + weight * scale_term(stu_cf, tea_cf))
        loss_logit, loss_feature = level_losses

        loss_gt = criterion(outputs, batch_y)
        loss = loss_gt + loss_logit + loss_feature
        return loss, loss_gt, loss_logit, loss_feature

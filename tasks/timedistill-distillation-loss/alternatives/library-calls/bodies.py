# Alternative 'library-calls'. Leans on torch library pieces: F.softmax + F.kl_div for the period term and the
# file's multi_scale_process_inputs module for the scales; one shared helper applied to both levels.

# lmr-body: exp/exp_long_term_forecasting.py::Exp_Long_Term_Forecast.distillation_loss
        scales = multi_scale_process_inputs()

        def period_kl(student, teacher):
            # student/teacher: (batch, seq, channels); spectrum along dim 1
            amp_s = torch.fft.rfft(student, dim=1).abs()[:, 1:, :]
            amp_t = torch.fft.rfft(teacher, dim=1).abs()[:, 1:, :]
            p_s = F.softmax(amp_s / 0.5, dim=1)
            p_t = F.softmax(amp_t / 0.5, dim=1)
            return F.kl_div(torch.log(p_s + 1e-8), p_t, reduction='mean')

        def scale_mse(student, teacher):
            # student/teacher: channel-first (batch, channels, seq)
            views_s = scales(student)
            views_t = scales(teacher)
            total = 0
            for v_s, v_t in zip(views_s, views_t):
                total = total + criterion(v_s, v_t)
            return total / len(views_s)

        alpha = self.args.alpha
        beta = self.args.beta

        # prediction level: series along time, per channel
        pred_s = outputs
        pred_t = outputs_t[0]
        loss_logit = alpha * period_kl(pred_s, pred_t) \
            + alpha * scale_mse(pred_s.permute(0, 2, 1), pred_t.permute(0, 2, 1))

        # feature level: series along the hidden axis, per channel
        feat_t_raw = features_t[0]
        feat_t = self.regressor(feat_t_raw.reshape(feat_t_raw.shape[0], feat_t_raw.shape[1], -1))
        feat_s = features[-2]
        loss_feature = beta * period_kl(feat_s.permute(0, 2, 1), feat_t.permute(0, 2, 1)) \
            + beta * scale_mse(feat_s, feat_t)

        loss_gt = criterion(outputs, batch_y)
        loss = loss_gt + loss_logit + loss_feature
        return loss, loss_gt, loss_logit, loss_feature

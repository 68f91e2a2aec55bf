# Alternative 'reshape-mean': window means computed directly with truncation + reshape + mean,
# working in the (batch, time, channels) layout.

# lmr-body: exp/exp_long_term_forecasting.py::multi_scale_process_inputs.forward
        w = int(self.down_sampling_window)
        level = x_enc.transpose(1, 2)  # (batch, time, channels), a view, x_enc untouched
        out = [level]
        for _ in range(int(self.down_sampling_layers)):
            b, t, c = level.shape
            n = t // w
            blocks = level[:, : n * w, :].reshape(b, n, w, c)
            level = blocks.mean(dim=2)
            out.append(level)
        return out

# Alternative 'explicit-einsum': layers appended one by one in explicit loops; forward
# first moves every scale to the (batch, time, channels) layout and applies each
# step's two linear maps as explicit einsum contractions over the time axis, using the
# weights/biases (and the GELU module) of the stored Sequential layers.

# lmr-body: models/TimeMixer.py::MultiScaleSeasonMixing.__init__
        super(MultiScaleSeasonMixing, self).__init__()
        seq_len = configs.seq_len
        window = configs.down_sampling_window
        n_down = configs.down_sampling_layers
        self.down_sampling_layers = nn.ModuleList()
        for i in range(n_down):
            t_in = seq_len // (window ** i)
            t_out = seq_len // (window ** (i + 1))
            step = nn.Sequential(
                nn.Linear(in_features=t_in, out_features=t_out),
                nn.GELU(),
                nn.Linear(in_features=t_out, out_features=t_out),
            )
            self.down_sampling_layers.append(step)

# lmr-body: models/TimeMixer.py::MultiScaleSeasonMixing.forward
        def _time_mix(step, x_btc):
            # x_btc: (B, T_in, C); linear maps act on the time axis (dim 1)
            lin1, act, lin2 = step[0], step[1], step[2]
            h = torch.einsum('btc,ot->boc', x_btc, lin1.weight)
            if lin1.bias is not None:
                h = h + lin1.bias.view(1, -1, 1)
            h = act(h)
            y = torch.einsum('btc,ot->boc', h, lin2.weight)
            if lin2.bias is not None:
                y = y + lin2.bias.view(1, -1, 1)
            return y

        n_scales = len(season_list)
        inputs = [torch.transpose(s, 1, 2) for s in season_list]  # (B, T_i, C)
        outputs = [None] * n_scales
        outputs[0] = inputs[0]
        for m in range(1, n_scales):
            residual = _time_mix(self.down_sampling_layers[m - 1], outputs[m - 1])
            outputs[m] = inputs[m] + residual
        return outputs

# lmr-body: models/TimeMixer.py::MultiScaleTrendMixing.__init__
        super(MultiScaleTrendMixing, self).__init__()
        seq_len = configs.seq_len
        window = configs.down_sampling_window
        n_down = configs.down_sampling_layers
        self.up_sampling_layers = nn.ModuleList()
        for scale in range(n_down, 0, -1):
            t_in = seq_len // (window ** scale)
            t_out = seq_len // (window ** (scale - 1))
            step = nn.Sequential(
                nn.Linear(in_features=t_in, out_features=t_out),
                nn.GELU(),
                nn.Linear(in_features=t_out, out_features=t_out),
            )
            self.up_sampling_layers.append(step)

# lmr-body: models/TimeMixer.py::MultiScaleTrendMixing.forward
        def _time_mix(step, x_btc):
            # x_btc: (B, T_in, C); linear maps act on the time axis (dim 1)
            lin1, act, lin2 = step[0], step[1], step[2]
            h = torch.einsum('btc,ot->boc', x_btc, lin1.weight)
            if lin1.bias is not None:
                h = h + lin1.bias.view(1, -1, 1)
            h = act(h)
            y = torch.einsum('btc,ot->boc', h, lin2.weight)
            if lin2.bias is not None:
                y = y + lin2.bias.view(1, -1, 1)
            return y

        n_scales = len(trend_list)
        inputs = [torch.transpose(t, 1, 2) for t in trend_list]  # (B, T_i, C)
        outputs = [None] * n_scales
        outputs[n_scales - 1] = inputs[n_scales - 1]
        # entry k of up_sampling_layers maps scale (n_scales-1-k) to (n_scales-2-k)
        for k in range(n_scales - 1):
            m = n_scales - 2 - k
            residual = _time_mix(self.up_sampling_layers[k], outputs[m + 1])
            outputs[m] = inputs[m] + residual
        return outputs

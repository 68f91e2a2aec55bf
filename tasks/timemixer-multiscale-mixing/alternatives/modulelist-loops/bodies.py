# Alternative 'modulelist-loops': layers built with list comprehensions, forward is a
# running-residual loop on the time-last tensors, one Sequential call per step.

# lmr-body: models/TimeMixer.py::MultiScaleSeasonMixing.__init__
        super(MultiScaleSeasonMixing, self).__init__()
        w = configs.down_sampling_window
        lens = [configs.seq_len // (w ** i) for i in range(configs.down_sampling_layers + 1)]
        self.down_sampling_layers = nn.ModuleList(
            [
                nn.Sequential(
                    nn.Linear(lens[i], lens[i + 1]),
                    nn.GELU(),
                    nn.Linear(lens[i + 1], lens[i + 1]),
                )
                for i in range(configs.down_sampling_layers)
            ]
        )

# lmr-body: models/TimeMixer.py::MultiScaleSeasonMixing.forward
        # bottom-up: s_0 unchanged, s_m <- s_m + BottomUp_{m-1}(mixed s_{m-1})
        mixed = season_list[0]
        out_season_list = [mixed.permute(0, 2, 1)]
        for i in range(len(season_list) - 1):
            mixed = season_list[i + 1] + self.down_sampling_layers[i](mixed)
            out_season_list.append(mixed.permute(0, 2, 1))
        return out_season_list

# lmr-body: models/TimeMixer.py::MultiScaleTrendMixing.__init__
        super(MultiScaleTrendMixing, self).__init__()
        w = configs.down_sampling_window
        M = configs.down_sampling_layers
        lens = [configs.seq_len // (w ** i) for i in range(M + 1)]
        self.up_sampling_layers = nn.ModuleList(
            [
                nn.Sequential(
                    nn.Linear(lens[M - k], lens[M - k - 1]),
                    nn.GELU(),
                    nn.Linear(lens[M - k - 1], lens[M - k - 1]),
                )
                for k in range(M)
            ]
        )

# lmr-body: models/TimeMixer.py::MultiScaleTrendMixing.forward
        # top-down: t_M unchanged, t_m <- t_m + TopDown(mixed t_{m+1}), m = M-1 ... 0
        n = len(trend_list)
        mixed = trend_list[n - 1]
        rev_out = [mixed.permute(0, 2, 1)]
        for k in range(n - 1):
            mixed = trend_list[n - 2 - k] + self.up_sampling_layers[k](mixed)
            rev_out.append(mixed.permute(0, 2, 1))
        return rev_out[::-1]

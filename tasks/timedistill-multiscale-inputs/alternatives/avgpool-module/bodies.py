# Alternative 'avgpool-module': repeated torch.nn.AvgPool1d on the channels-first series.

# lmr-body: exp/exp_long_term_forecasting.py::multi_scale_process_inputs.forward
        import torch
        window = int(self.down_sampling_window)
        pool = torch.nn.AvgPool1d(kernel_size=window, stride=window)
        current = x_enc  # (batch, channels, time)
        views = [current.permute(0, 2, 1)]
        for _ in range(int(self.down_sampling_layers)):
            current = pool(current)
            views.append(current.permute(0, 2, 1))
        return views

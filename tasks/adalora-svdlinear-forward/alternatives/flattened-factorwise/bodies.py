# Alternative 'flattened-factorwise' for adalora-svdlinear-forward: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: loralib/loralib/adalora.py::SVDLinear.forward
        in_features, out_features = self.in_features, self.out_features
        lead_shape = x.shape[:-1]
        # The pre-trained weight as an (in_features, out_features) matrix, whatever its storage.
        w_in_out = self.weight if self.fan_in_fan_out else self.weight.t()

        x2d = x.reshape(-1, in_features)
        out = torch.mm(x2d, w_in_out)
        if self.bias is not None:
            out = out + self.bias

        if self.r > 0 and not self.merged:
            # Incremental update Delta = P diag(lambda) Q applied factor by factor:
            # project onto the r right singular vectors (rows of Q = lora_A), scale each
            # coordinate by its singular value lambda_i (lora_E), map back with P = lora_B.
            # A pruned triplet (lambda_i = 0) contributes nothing.
            dropped = self.lora_dropout(x).reshape(-1, in_features)
            coords = torch.mm(dropped, self.lora_A.t())           # (N, r)
            coords = coords * self.lora_E.reshape(1, -1)          # (N, r), times lambda_i
            delta = torch.mm(coords, self.lora_B.t())             # (N, out_features)
            factor = self.scaling / (self.ranknum + 1e-5)         # one-element tensor
            out = out + delta * factor

        return out.reshape(*lead_shape, out_features)

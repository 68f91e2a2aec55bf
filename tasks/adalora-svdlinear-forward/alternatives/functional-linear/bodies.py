# Alternative 'functional-linear' for adalora-svdlinear-forward: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: loralib/loralib/adalora.py::SVDLinear.forward
        def T(w):
            return w.T if self.fan_in_fan_out else w
        # Frozen (possibly already merged) pre-trained layer: x W^T + b, on the unchanged input.
        result = F.linear(x, T(self.weight), bias=self.bias)
        if self.r > 0 and not self.merged:
            # SVD-form update P Lambda Q (Sec. 3.1): Q is lora_A, diag(Lambda) is lora_E,
            # P is lora_B. Dropout acts on the input of the update only.
            h = self.lora_dropout(x)
            update = F.linear(F.linear(h, self.lora_A * self.lora_E), self.lora_B)
            result = result + update * self.scaling / (self.ranknum + 1e-5)
        return result

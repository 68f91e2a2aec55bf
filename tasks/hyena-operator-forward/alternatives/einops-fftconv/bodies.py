# Alternative 'einops-fftconv' for hyena-operator-forward: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: standalone_hyena.py::HyenaOperator.forward
        L = u.size(-2)
        l_filter = min(L, self.l_max)

        # Projections (dense, then causal depthwise short convolution), channels first
        z = self.in_proj(u)
        z = rearrange(z, 'b l d -> b d l')
        z = self.short_filter(z)[..., :l_filter]

        # N + 1 chunks of d_model channels: gates x_0 ... x_{N-1}, then the value v
        *x, v = z.split(self.d_model, dim=1)

        # Implicit long filters and their biases, one group of d_model channels per convolution
        k = self.filter_fn.filter(l_filter)
        k = k[0] if type(k) is tuple else k
        k = rearrange(k[0], 'l (o d) -> o d l', o=self.order - 1)
        bias = rearrange(self.filter_fn.bias, '(o d) -> o d', o=self.order - 1)

        # Recurrence: gate with x_{N-1}, ..., x_1, each followed by a long convolution
        for j, x_j in enumerate(reversed(x[1:])):
            v = self.dropout(v * x_j)
            v = self.filter_fn(v, l_filter, k=k[j], bias=bias[j])

        # Last gate x_0, back to (batch, L, d_model), output projection
        y = rearrange(v * x[0], 'b d l -> b l d')
        y = self.out_proj(y)
        return y

# Alternative 'plain-direct-conv1d' for hyena-operator-forward: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: standalone_hyena.py::HyenaOperator.forward
        batch, L, d = u.shape
        N = self.order

        # Dense projection, then the depthwise width-3 short filter made causal by
        # padding two zeros on the left only (= first L outputs of the padded conv)
        z = self.in_proj(u).transpose(1, 2)                      # (b, d*(N+1), L)
        conv = self.short_filter
        z = F.conv1d(F.pad(z, (2, 0)), conv.weight, conv.bias, groups=conv.groups)
        z = z.reshape(batch, N + 1, d, L)                        # chunk index on dim 1
        gates = [z[:, i] for i in range(N)]                      # x_0 ... x_{N-1}
        v = z[:, N]                                              # value: last chunk

        # Implicit long filters h_j (d channels each) and their bias terms
        h = self.filter_fn.filter(L)
        h = h[0] if type(h) is tuple else h
        h = h.reshape(L, N - 1, d).permute(1, 2, 0)              # (N-1, d, L)
        D = self.filter_fn.bias.reshape(N - 1, d)                # (N-1, d)

        for j in range(N - 1):
            # gate with x_{N-1-j}, then dropout
            v = self.dropout((v * gates[N - 1 - j]).contiguous())
            # direct causal (linear) convolution: y[t] = sum_{s<=t} h[t-s] v[s],
            # as a grouped cross-correlation with the time-reversed filter over a
            # left zero-padded signal, plus the bias (skip) term D * v
            w = h[j].flip(-1).unsqueeze(1)                       # (d, 1, L)
            y = F.conv1d(F.pad(v, (L - 1, 0)), w.to(v.dtype), groups=d)
            v = y + v * D[j].unsqueeze(-1)

        y = (v * gates[0]).transpose(1, 2)                       # (b, L, d)
        return self.out_proj(y)

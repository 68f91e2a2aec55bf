# Alternative 'sdpa-prefix-slot'. Prepend the per-head bias key/value as slot 0 along time and call
# torch's scaled_dot_product_attention with a boolean (T, T+1) mask whose first column is always open.

# lmr-body: gpt-2/model_attn_bias.py::CausalSelfAttention.forward
        B, T, C = x.size()
        nh = self.n_head
        hd = C // nh

        # project and split into heads: (B, nh, T, hd)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, nh, hd).transpose(1, 2)
        k = k.view(B, T, nh, hd).transpose(1, 2)
        v = v.view(B, T, nh, hd).transpose(1, 2)

        # bias slot in front of the real keys/values: (B, nh, T + 1, hd)
        kb = self.k_bias.to(dtype=k.dtype).expand(B, nh, 1, hd)
        vb = self.v_bias.to(dtype=v.dtype).expand(B, nh, 1, hd)
        k_ext = torch.cat([kb, k], dim=2)
        v_ext = torch.cat([vb, v], dim=2)

        # boolean mask (True = may attend): column 0 is the bias slot, the rest is causal
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        always = torch.ones(T, 1, dtype=torch.bool, device=x.device)
        mask = torch.cat([always, causal], dim=1)  # (T, T + 1)

        y = F.scaled_dot_product_attention(
            q, k_ext, v_ext,
            attn_mask=mask,
            dropout_p=self.dropout if self.training else 0,
            is_causal=False,
        )

        # heads back side by side, then output projection
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y

# Alternative 'explicit-split-softmax'. Manual attention with einsum: token logits and the bias logit
# are computed separately, joined for one stable softmax, and the weights split back to mix v and v_bias.

# lmr-body: gpt-2/model_attn_bias.py::CausalSelfAttention.forward
        B, T, C = x.size()
        H = self.n_head
        D = C // H
        scale = 1.0 / math.sqrt(D)

        qkv = self.c_attn(x)                      # (B, T, 3C)
        qkv = qkv.reshape(B, T, 3, H, D)          # channel block, then head, then head dim
        q = qkv[:, :, 0].permute(0, 2, 1, 3)      # (B, H, T, D)
        k = qkv[:, :, 1].permute(0, 2, 1, 3)
        v = qkv[:, :, 2].permute(0, 2, 1, 3)

        kb = self.k_bias[0, :, 0, :].to(q.dtype)  # (H, D): one extra key per head
        vb = self.v_bias[0, :, 0, :].to(v.dtype)  # (H, D): one extra value per head

        # logits against the sequence tokens and against the head's bias key
        tok_logits = torch.einsum('bhtd,bhsd->bhts', q, k) * scale   # (B, H, T, T)
        bias_logit = torch.einsum('bhtd,hd->bht', q, kb) * scale     # (B, H, T)

        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        tok_logits = tok_logits.masked_fill(future, float('-inf'))

        # one softmax over [tokens 0..T-1 (future masked), bias slot]; softmax subtracts the row max
        logits = torch.cat([tok_logits, bias_logit.unsqueeze(-1)], dim=-1)  # (B, H, T, T + 1)
        weights = torch.softmax(logits, dim=-1)
        weights = self.attn_dropout(weights)

        w_tok = weights[..., :T]                   # (B, H, T, T)
        w_bias = weights[..., T]                   # (B, H, T)
        y = torch.einsum('bhts,bhsd->bhtd', w_tok, v) \
            + torch.einsum('bht,hd->bhtd', w_bias, vb)           # (B, H, T, D)

        y = y.permute(0, 2, 1, 3).reshape(B, T, C)
        y = self.resid_dropout(self.c_proj(y))
        return y

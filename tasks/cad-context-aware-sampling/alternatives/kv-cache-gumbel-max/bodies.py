# Alternative 'kv-cache-gumbel-max' for cad-context-aware-sampling: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: cad.py::context_aware_sampling
    # Context-aware decoding (Eq. 2), written as logit_c + alpha * (logit_c - logit_no_c),
    # with one key/value cache per input (with and without the context) and the
    # Gumbel-max trick for the draw: argmax(z / T + G) == argmax(z + T * G), G ~ Gumbel(0, 1),
    # is an exact sample from softmax(z / T) and tends to argmax(z) as T -> 0.
    n_context = int(context_ids.numel())  # batch size is 1: the number of context tokens
    eos_token_id = tokenizer.eos_token_id
    generated = []
    if max_length > 0:
        with torch.no_grad():
            out_c = model(input_ids, use_cache=True)
            out_nc = model(input_ids[:, n_context:], use_cache=True)
            past_c, past_nc = out_c.past_key_values, out_nc.past_key_values
            logit_c = out_c.logits[0, -1, :].double()
            logit_nc = out_nc.logits[0, -1, :].double()
            for step in range(max_length):
                z = logit_c + alpha * (logit_c - logit_nc)
                u = torch.rand(z.shape, dtype=torch.float64)
                gumbel = -torch.log(-torch.log(u))
                token = int(torch.argmax(z + temperature * gumbel).item())
                generated.append(token)
                if eos_token_id is not None and token == eos_token_id:
                    break
                if step + 1 == max_length:
                    break
                step_ids = torch.tensor([[token]], dtype=input_ids.dtype, device=input_ids.device)
                out_c = model(step_ids, past_key_values=past_c, use_cache=True)
                out_nc = model(step_ids, past_key_values=past_nc, use_cache=True)
                past_c, past_nc = out_c.past_key_values, out_nc.past_key_values
                logit_c = out_c.logits[0, -1, :].double()
                logit_nc = out_nc.logits[0, -1, :].double()
    new_tokens = torch.tensor([generated], dtype=input_ids.dtype, device=input_ids.device).reshape(1, -1)
    return torch.cat([input_ids, new_tokens], dim=-1)

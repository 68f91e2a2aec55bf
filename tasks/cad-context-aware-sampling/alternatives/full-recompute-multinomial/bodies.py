# Alternative 'full-recompute-multinomial' for cad-context-aware-sampling: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: cad.py::context_aware_sampling
    # Context-aware decoding (Eq. 1-2): sample y_t from
    #   softmax[((1 + alpha) * logit(y_t | c, x, y_<t) - alpha * logit(y_t | x, y_<t)) / temperature]
    # Both predictions are recomputed from the whole sequence at every step.
    context_len = context_ids.shape[-1]  # only the number of context tokens matters
    eos_token_id = tokenizer.eos_token_id
    output_ids = input_ids.clone()
    with torch.no_grad():
        for _ in range(max_length):
            # prediction with the context: the prompt followed by the tokens generated so far
            logits_with_context = model(output_ids).logits[:, -1, :]
            # prediction without the context: drop the first C tokens
            logits_without_context = model(output_ids[:, context_len:]).logits[:, -1, :]
            adjusted_logits = (1 + alpha) * logits_with_context - alpha * logits_without_context
            probs = F.softmax(adjusted_logits / temperature, dim=-1)
            next_token = torch.multinomial(probs, num_samples=1)  # (1, 1), torch's default generator
            output_ids = torch.cat([output_ids, next_token.to(output_ids.device, dtype=output_ids.dtype)], dim=-1)
            if eos_token_id is not None and next_token.item() == eos_token_id:
                break
    return output_ids

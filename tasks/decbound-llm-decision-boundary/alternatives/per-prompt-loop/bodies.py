# Alternative 'per-prompt-loop'. Explicit loops: grid built row by row, one prompt encoded and answered at a time (batch of 1),
# reusing a prefix cache only when a prompt's own token ids start with it; labels decided point by point.

# lmr-body: get_llm_decision_boundary.py::probe_decision_boundary
    import copy

    def last_token_id(text):
        ids = tokenizer(text)["input_ids"]
        return int(ids[-1]) if len(ids) > 0 else None

    def class_score(logit_row, name):
        best = None
        for variant in (name, " " + name):
            tid = last_token_id(variant)
            if tid is None:
                continue
            val = float(logit_row[tid])
            if best is None or val > best:
                best = val
        return float("-inf") if best is None else best

    def fresh_cache(cache):
        # tuples of tensors are never modified in place; cache objects are, so copy them
        if cache is None or isinstance(cache, (tuple, list)):
            return cache
        return copy.deepcopy(cache)

    # 1. grid over the context points, one unit of margin on each side
    data = np.asarray(task_context_x, dtype=float)
    lo1, hi1 = data[:, 0].min() - 1, data[:, 0].max() + 1
    lo2, hi2 = data[:, 1].min() - 1, data[:, 1].max() + 1
    x1 = np.linspace(lo1, hi1, args.grid_size)
    x2 = np.linspace(lo2, hi2, args.grid_size)
    xx1, xx2 = np.meshgrid(x1, x2)
    n_rows, n_cols = xx1.shape

    # 2. query texts in the order of xx1.ravel() (row-major: rows follow x2, columns follow x1)
    inputs = []
    for r in range(n_rows):
        for c in range(n_cols):
            inputs.append(f"{int(xx1[r, c])} {int(xx2[r, c])}")

    # 3. prompts
    context_prompt = generate_context_prompt(X=task_context_x, y=task_context_y, class_names=class_names)
    prompts = create_prompts(args, system_prompt, context_prompt, query_prompt, inputs)

    device = model.device
    encoded = [tokenizer(p, return_tensors="pt")["input_ids"] for p in prompts]

    # shared beginning: tokens common to the first two prompts, leaving at least one token each
    prefix_len = 0
    if len(encoded) > 1:
        a, b = encoded[0][0].tolist(), encoded[1][0].tolist()
        limit = min(len(a), len(b)) - 1
        while prefix_len < limit and a[prefix_len] == b[prefix_len]:
            prefix_len += 1
    prefix_ids = encoded[0][:, :prefix_len]
    prefix_cache = None
    cache_checked = False

    name0, name1 = class_names[0].lower(), class_names[1].lower()
    llm_predictions = np.zeros(len(prompts), dtype=float)

    with torch.no_grad():
        if prefix_len > 0:
            try:
                prefix_cache = model(prefix_ids.to(device), use_cache=True).past_key_values
            except Exception:
                prefix_cache = None

        for k, ids in enumerate(encoded):
            logits = None
            usable = (
                prefix_cache is not None
                and ids.shape[1] > prefix_len
                and torch.equal(ids[:, :prefix_len], prefix_ids)
            )
            if usable:
                try:
                    out = model(
                        ids[:, prefix_len:].to(device),
                        past_key_values=fresh_cache(prefix_cache),
                        attention_mask=torch.ones((1, ids.shape[1]), dtype=torch.long, device=device),
                        use_cache=True,
                    )
                    logits = out.logits[0, -1, :].float().cpu()
                except Exception:
                    prefix_cache = None
                    logits = None
                if logits is not None and not cache_checked:
                    # first use: the cached answer must agree with a plain pass over the whole prompt
                    plain = model(ids.to(device)).logits[0, -1, :].float().cpu()
                    tol = 1e-3 * max(1.0, float(plain.abs().max()))
                    if not torch.allclose(logits, plain, rtol=1e-3, atol=tol):
                        prefix_cache = None
                        logits = plain
                    cache_checked = True
            if logits is None:
                logits = model(ids.to(device)).logits[0, -1, :].float().cpu()

            # 4. greedy next token
            answer_id = int(torch.argmax(logits).item())
            answer_text = tokenizer.decode([answer_id], skip_special_tokens=True).lower()

            # 5-6. label from the text, else from the class scores (ties go to class 0)
            if name0 in answer_text:
                label = 0
            elif name1 in answer_text:
                label = 1
            else:
                label = 1 if class_score(logits, class_names[1]) > class_score(logits, class_names[0]) else 0
            llm_predictions[k] = label

    # 7. same layout as the grid
    return xx1, xx2, llm_predictions.reshape(xx1.shape)

# Alternative 'torch-hooks-stacked'. Plain PyTorch forward hooks (removed in a finally) and torch.cat over the batch axis;
# collects one (layers, hidden) slice per question, stacks to a 3-D array and splits it per layer.

# lmr-body: utils.py::LLM.get_hidden_states
        enc = tok(prefix)
        ids = torch.as_tensor(enc["input_ids"], dtype=torch.long).unsqueeze(0)
        mask = enc.get("attention_mask") if hasattr(enc, "get") else None
        if mask is not None:
            mask = torch.as_tensor(mask, dtype=torch.long).unsqueeze(0)
        if self.quant == 32:
            dev = "cuda:" + str(self.cuda_id)
            model.to(dev)
            ids = ids.to(dev)
            if mask is not None:
                mask = mask.to(dev)
        modules = dict(model.named_modules())
        captured = {}

        def make_hook(layer_name):
            def hook(module, args, output):
                captured[layer_name] = output
            return hook

        handles = []
        try:
            for layer_name in self.layer_names:
                handles.append(modules[layer_name].register_forward_hook(make_hook(layer_name)))
            call_kwargs = {"input_ids": ids}
            if mask is not None:
                call_kwargs["attention_mask"] = mask
            model(**call_kwargs)
        finally:
            for h in handles:
                h.remove()
        return torch.cat([captured[layer_name] for layer_name in self.layer_names], dim=0)
# lmr-body: main.py::collect_hidden_states
    def group_features(questions):
        rows = []
        for question in questions:
            text = DP.get_prompt(prompt, cot, question)
            with torch.no_grad():
                hs = Model.get_hidden_states(model, tokenizer, text)
                last = hs[:tot_layer, -1, :].detach().cpu()
            if last.dtype == torch.bfloat16:
                last = last.float()
            rows.append(last.numpy())
        cube = np.stack(rows, axis=0)  # (questions, layers, hidden)
        return [np.ascontiguousarray(cube[:, layer, :]) for layer in range(tot_layer)]

    first_group = group_features(p_question)
    second_group = group_features(n_question)
    return first_group, second_group

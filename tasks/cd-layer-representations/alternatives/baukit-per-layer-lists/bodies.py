# Alternative 'baukit-per-layer-lists'. Traces the named modules with baukit.TraceDict and stacks squeezed outputs;
# collects last-token vectors with explicit per-question / per-layer loops into per-layer Python lists.

# lmr-body: utils.py::LLM.get_hidden_states
        encoded = tok(prefix)
        inputs = {}
        for key in ("input_ids", "attention_mask"):
            if key in encoded:
                inputs[key] = torch.tensor([list(encoded[key])])
        if self.quant == 32:
            target = f"cuda:{self.cuda_id}"
            model.to(target)
            for key in list(inputs.keys()):
                inputs[key] = inputs[key].to(target)
        with TraceDict(model, self.layer_names) as tr:
            model(**inputs)
            per_layer = [tr[name].output[0] for name in self.layer_names]
        return torch.stack(per_layer, dim=0)
# lmr-body: main.py::collect_hidden_states
    first_lists = [[] for _ in range(tot_layer)]
    second_lists = [[] for _ in range(tot_layer)]

    def to_numpy(vec):
        vec = vec.cpu()
        if vec.dtype == torch.bfloat16:
            vec = vec.float()
        return vec.numpy()

    for questions, store in ((p_question, first_lists), (n_question, second_lists)):
        for q in questions:
            text = DP.get_prompt(prompt, cot, q)
            with torch.no_grad():
                hs = Model.get_hidden_states(model, tokenizer, text)
                for i in range(tot_layer):
                    store[i].append(to_numpy(hs[i, -1, :]))

    first_group = [np.array(first_lists[i]) for i in range(tot_layer)]
    second_group = [np.array(second_lists[i]) for i in range(tot_layer)]
    return first_group, second_group

# Alternative 'layout-table-join' for steplength-get-sentence: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: run_inference.py::get_sentence
    # Each method = (use the demonstrations?, name of the trigger attribute on args or None).
    layouts = {
        "zero_shot": (False, "direct_answer_trigger_for_zeroshot"),
        "zero_shot_cot": (False, "cot_trigger"),
        "few_shot": (True, None),
        "few_shot_cot": (True, None),
        "auto_cot": (True, "cot_trigger"),
    }
    if args.method not in layouts:
        raise ValueError("Unknown prompting method: {!r}".format(args.method))
    use_demo, trigger_name = layouts[args.method]

    prefix = "{}{}".format(demo1, x) if use_demo else "{}".format(x)
    if trigger_name is None:
        k = prefix
    else:
        k = " ".join([prefix, getattr(args, trigger_name)])
    return k

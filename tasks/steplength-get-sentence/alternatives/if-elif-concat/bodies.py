# Alternative 'if-elif-concat' for steplength-get-sentence: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: run_inference.py::get_sentence
    # Build the prompt sent to the model for one question, depending on the prompting method.
    if args.method == "zero_shot":
        k = x + " " + args.direct_answer_trigger_for_zeroshot
    elif args.method == "zero_shot_cot":
        k = x + " " + args.cot_trigger
    elif args.method == "few_shot":
        k = demo1 + x
    elif args.method == "few_shot_cot":
        k = demo1 + x
    elif args.method == "auto_cot":
        k = demo1 + x + " " + args.cot_trigger
    else:
        raise ValueError("method is not properly defined ...")
    return k

# Alternative 'context-knowledge-helpers' for knowprob-counter-parametric-dataset: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/data.py::generate_counter_parametric_knowledge_dataset
    # object -> id of its first generated token (over the whole dataset)
    all_dataset_objects_to_their_first_token_id = get_objects_to_first_token_id_dict(parametric_knowledge)

    # the parametric knowledge restricted to each relation (counter-objects must share the relation)
    parametric_knowledge_by_relation = {
        rel_lemma: parametric_knowledge_rel
        for rel_lemma, parametric_knowledge_rel in parametric_knowledge.groupby("rel_lemma", sort=False)
    }

    counter_parametric_knowledge = []
    for _, example in tqdm(
        parametric_knowledge.iterrows(),
        total=parametric_knowledge.shape[0],
        desc="Generating counter-parametric knowledge...",
    ):
        counter_parametric_knowledge += build_counter_parametric_knowledge(
            statement_subject=example["statement_subject"],
            rel_lemma=example["rel_lemma"],
            statement_object=example["statement_object"],
            relation_group_id=example["relation_group_id"],
            parametric_object=example["parametric_object"],
            parametric_object_first_token_log_probas_distribution=example[
                "log_probability_parametric_object_first_token"
            ],
            statement=example["statement"],
            nb_counter_parametric_knowledge=nb_counter_parametric_knowledge,
            all_dataset_objects_to_their_first_token_id=all_dataset_objects_to_their_first_token_id,
            parametric_knowledge_rel=parametric_knowledge_by_relation[example["rel_lemma"]],
        )

    return pd.DataFrame(counter_parametric_knowledge)

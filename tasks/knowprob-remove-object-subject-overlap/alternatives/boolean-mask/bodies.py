# Alternative 'boolean-mask' for knowprob-remove-object-subject-overlap: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/data.py::generate_counter_parametric_knowledge_dataset

    object_to_first_token_id = get_objects_to_first_token_id_dict(parametric_knowledge)

    counter_parametric_knowledge_list = []
    # tqdm.pandas(desc="Generating counter parametric knowledge...")
    for _, param_knowledge_record in tqdm(parametric_knowledge.iterrows()):
        # build nb_counter_parametric_knowledge counter parametric knowledge triplets for each parametric knowledge element

        counter_parametric_knowledge_list += build_counter_parametric_knowledge(
            statement_subject=param_knowledge_record.statement_subject,
            rel_lemma=param_knowledge_record.rel_lemma,
            statement_object=param_knowledge_record.statement_object,
            relation_group_id=param_knowledge_record.relation_group_id,
            parametric_object=param_knowledge_record.parametric_object,
            statement=param_knowledge_record.statement,
            parametric_object_first_token_log_probas_distribution=param_knowledge_record.log_probability_parametric_object_first_token,
            nb_counter_parametric_knowledge=nb_counter_parametric_knowledge,
            all_dataset_objects_to_their_first_token_id=object_to_first_token_id,
            parametric_knowledge_rel=parametric_knowledge[
                parametric_knowledge.rel_lemma == param_knowledge_record.rel_lemma
            ],
        )

    counter_parametric_knowledge_df = pd.DataFrame(counter_parametric_knowledge_list)

    return counter_parametric_knowledge_df

# lmr-body: src/data.py::remove_object_subject_overlap
    frame = parametric_knowledge_dataset

    # one boolean per example: True when its subject and its parametric object overlap
    # (containment either way, lower-cased, or cased Jaro-Winkler similarity >= threshold),
    # exactly as decided by `detect_subject_object_overlap`.
    overlaps = np.fromiter(
        (
            detect_subject_object_overlap(subject, parametric_object, string_similarity_ratio)
            for subject, parametric_object in zip(
                frame["statement_subject"].tolist(), frame["parametric_object"].tolist()
            )
        ),
        dtype=bool,
        count=len(frame),
    )

    # positional boolean selection: keeps columns, dtypes, the original index labels and row order,
    # and gives an empty frame with all the columns when nothing is kept.
    return frame.loc[~overlaps].copy()

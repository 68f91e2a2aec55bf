# Alternative 'positional-loop' for knowprob-remove-object-subject-overlap: the bodies it writes into the workspace's masked stubs.
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
    subjects = parametric_knowledge_dataset["statement_subject"]
    parametric_objects = parametric_knowledge_dataset["parametric_object"]

    # walk the examples one by one, by position, and remember those whose subject and
    # parametric object do not overlap
    kept_positions = []
    for position in range(len(parametric_knowledge_dataset)):
        subject = subjects.iat[position]
        parametric_object = parametric_objects.iat[position]
        if not detect_subject_object_overlap(subject, parametric_object, string_similarity_ratio):
            kept_positions.append(position)

    # `take` selects rows by position, so duplicated or unordered index labels are kept as they are;
    # an empty list of positions gives an empty frame that still has every column and dtype.
    return parametric_knowledge_dataset.take(np.asarray(kept_positions, dtype=np.intp), axis=0)

# Alternative 'incidence-matrix' for knowprob-entity-overlap: the bodies it writes into the workspace's masked stubs.
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

# lmr-body: src/data.py::return_entity_overlap_between_relation_groups
    if len(parametric_knowledge_dataset) == 0:
        return {}

    # integer codes for the relation groups, the subjects and the parametric objects
    # (subjects and objects are coded separately: a subject is only compared with subjects)
    group_codes, relation_groups = pd.factorize(parametric_knowledge_dataset["relation_group_id"], sort=False)
    subject_codes, subject_values = pd.factorize(parametric_knowledge_dataset["statement_subject"], sort=False)
    object_codes, object_values = pd.factorize(parametric_knowledge_dataset["parametric_object"], sort=False)
    nb_groups = len(relation_groups)

    # incidence matrices: does this subject (resp. object) occur in this relation group?
    subject_in_group = np.zeros((len(subject_values), nb_groups), dtype=bool)
    subject_in_group[subject_codes, group_codes] = True
    object_in_group = np.zeros((len(object_values), nb_groups), dtype=bool)
    object_in_group[object_codes, group_codes] = True

    # example_shares_entity_with_group[i, b]: example i shares its subject or its object with group b
    example_shares_entity_with_group = subject_in_group[subject_codes] | object_in_group[object_codes]

    # one-hot membership of the examples in their own group, then sum the examples of each group:
    # overlap_matrix[a, b] = number of examples of group a sharing an entity with group b
    example_in_group = np.zeros((len(group_codes), nb_groups), dtype=np.int64)
    example_in_group[np.arange(len(group_codes)), group_codes] = 1
    overlap_matrix = example_in_group.T @ example_shares_entity_with_group.astype(np.int64)

    relation_groups = list(relation_groups)
    return {
        group_a: {group_b: int(overlap_matrix[a, b]) for b, group_b in enumerate(relation_groups)}
        for a, group_a in enumerate(relation_groups)
    }

# Alternative 'explicit-loops' for knowprob-entity-overlap: the bodies it writes into the workspace's masked stubs.
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
    group_ids = parametric_knowledge_dataset["relation_group_id"].tolist()
    subjects = parametric_knowledge_dataset["statement_subject"].tolist()
    parametric_objects = parametric_knowledge_dataset["parametric_object"].tolist()

    # collect, for each relation group, its examples and the sets of subjects and objects it contains
    relation_groups = list(dict.fromkeys(group_ids))  # distinct ids, in order of first appearance
    examples_by_group = {group_id: [] for group_id in relation_groups}
    subjects_by_group = {group_id: set() for group_id in relation_groups}
    objects_by_group = {group_id: set() for group_id in relation_groups}
    for group_id, subject, parametric_object in zip(group_ids, subjects, parametric_objects):
        examples_by_group[group_id].append((subject, parametric_object))
        subjects_by_group[group_id].add(subject)
        objects_by_group[group_id].add(parametric_object)

    # entity_overlap[a][b]: number of examples of group a whose subject is a subject of group b
    # or whose parametric object is a parametric object of group b (counted once if both)
    entity_overlap = {}
    for group_a in relation_groups:
        entity_overlap[group_a] = {}
        for group_b in relation_groups:
            nb_overlapping_examples = 0
            for subject, parametric_object in examples_by_group[group_a]:
                if subject in subjects_by_group[group_b] or parametric_object in objects_by_group[group_b]:
                    nb_overlapping_examples += 1
            entity_overlap[group_a][group_b] = nb_overlapping_examples

    return entity_overlap

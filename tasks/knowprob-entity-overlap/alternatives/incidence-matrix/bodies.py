# Alternative 'incidence-matrix' for knowprob-entity-overlap: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

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

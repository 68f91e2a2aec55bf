# Alternative 'explicit-loops' for knowprob-entity-overlap: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

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

# Alternative 'numpy-argsort' for knowprob-counter-parametric-dataset: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/data.py::generate_counter_parametric_knowledge_dataset
    import re

    output_columns = [
        "statement_subject",
        "rel_lemma",
        "statement_object",
        "counter_knowledge_object",
        "statement",
        "statement_query",
        "parametric_knowledge_object",
        "relation_group_id",
    ]

    subjects = parametric_knowledge["statement_subject"].tolist()
    relations = parametric_knowledge["rel_lemma"].tolist()
    statement_objects = parametric_knowledge["statement_object"].tolist()
    statements = parametric_knowledge["statement"].tolist()
    relation_group_ids = parametric_knowledge["relation_group_id"].tolist()
    parametric_objects = parametric_knowledge["parametric_object"].tolist()
    output_tokens_ids = parametric_knowledge["model_output_tokens_ids"].tolist()
    first_token_log_probas = parametric_knowledge["log_probability_parametric_object_first_token"].tolist()

    # first token id of every parametric object of the dataset
    object_first_token_id = {}
    for parametric_object, tokens_ids in zip(parametric_objects, output_tokens_ids):
        if parametric_object not in object_first_token_id:
            object_first_token_id[parametric_object] = int(tokens_ids[0])

    # distinct parametric objects of each relation and their first token ids; the objects of a relation are
    # kept in the order in which they first appear in the whole dataset (this only decides the order of
    # candidates that are exactly as likely, as the stable sort below keeps it)
    first_appearance_rank = {obj: rank for rank, obj in enumerate(object_first_token_id)}
    relation_objects = {}
    for rel_lemma, parametric_object in zip(relations, parametric_objects):
        relation_objects.setdefault(rel_lemma, set()).add(parametric_object)
    relation_objects = {
        rel_lemma: sorted(objects, key=first_appearance_rank.__getitem__) for rel_lemma, objects in relation_objects.items()
    }
    relation_candidates = {
        rel_lemma: (
            np.array(objects, dtype=object),
            np.array([object_first_token_id[obj] for obj in objects], dtype=np.int64),
        )
        for rel_lemma, objects in relation_objects.items()
    }

    columns = {column: [] for column in output_columns}
    k = max(int(nb_counter_parametric_knowledge), 0)

    for i in range(len(parametric_objects)):
        if k == 0:
            break
        candidate_objects, candidate_token_ids = relation_candidates[relations[i]]
        is_candidate = np.array([obj != parametric_objects[i] for obj in candidate_objects], dtype=bool)
        if not is_candidate.any():
            continue
        candidate_objects = candidate_objects[is_candidate]
        # log-probabilities (under the example's own first-token distribution) of the candidates' first tokens
        candidate_log_probas = np.asarray(first_token_log_probas[i], dtype=np.float64)[candidate_token_ids[is_candidate]]
        # the least likely first (Equation 3)
        order = np.argsort(candidate_log_probas, kind="stable")[:k]

        # the query: the statement without its object (same pattern as in `build_counter_parametric_knowledge`)
        statement_query = re.compile(statement_objects[i] + ".", re.IGNORECASE).sub("", statements[i]).strip()

        for counter_object in candidate_objects[order]:
            columns["statement_subject"].append(subjects[i])
            columns["rel_lemma"].append(relations[i])
            columns["statement_object"].append(statement_objects[i])
            columns["counter_knowledge_object"].append(counter_object)
            columns["statement"].append(statements[i])
            columns["statement_query"].append(statement_query)
            columns["parametric_knowledge_object"].append(parametric_objects[i])
            columns["relation_group_id"].append(relation_group_ids[i])

    if len(columns["counter_knowledge_object"]) == 0:
        return pd.DataFrame(columns=output_columns)

    return pd.DataFrame(columns, columns=output_columns)

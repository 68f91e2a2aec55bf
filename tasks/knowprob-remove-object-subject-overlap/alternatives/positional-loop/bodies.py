# Alternative 'positional-loop' for knowprob-remove-object-subject-overlap: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

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

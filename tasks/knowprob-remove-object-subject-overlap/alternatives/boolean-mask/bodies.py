# Alternative 'boolean-mask' for knowprob-remove-object-subject-overlap: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

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

# Alternative 'explicit-loop-sets' for knowprob-parametric-object-not-in-prompt: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/parametric_knowledge.py::is_parametric_object_not_in_the_prompt
    target = parametric_object.lower()

    one_shot_subjects = set()
    one_shot_objects = set()
    for subject, object_ in zip(
        relations_with_generated_description["generation_subject_1"].tolist(),
        relations_with_generated_description["generation_object_1"].tolist(),
    ):
        # a missing cell (NaN / None) matches nothing
        if not pd.isna(subject):
            one_shot_subjects.add(str(subject).lower())
        if not pd.isna(object_):
            one_shot_objects.add(str(object_).lower())

    found_in_objects = target in one_shot_objects
    found_in_subjects = target in one_shot_subjects

    if found_in_objects and found_in_subjects:
        return False
    return True

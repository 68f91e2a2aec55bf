# Alternative 'vectorised-pandas' for knowprob-parametric-object-not-in-prompt: the bodies it writes into the workspace's masked stubs.
# lmr build splices each block below in place of the stub it names (CONTRIBUTING.md, "Alternatives").

# lmr-body: src/parametric_knowledge.py::is_parametric_object_not_in_the_prompt
    def _matches_some_cell(column_name: str) -> bool:
        # keep only the non-missing cells: a missing cell matches nothing
        cells = relations_with_generated_description[column_name]
        cells = cells[cells.notna()].astype(str)
        if cells.empty:
            return False
        # whole-cell, case-insensitive equality
        return bool((cells.str.lower() == parametric_object.lower()).any())

    is_an_example_object = _matches_some_cell("generation_object_1")
    is_an_example_subject = _matches_some_cell("generation_subject_1")

    # the parametric object is considered as coming from the prompt only when
    # it is both a one-shot example object and a one-shot example subject
    return not (is_an_example_object and is_an_example_subject)

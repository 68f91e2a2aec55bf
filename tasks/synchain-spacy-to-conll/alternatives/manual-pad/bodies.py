# Alternative 'manual-pad': first-principles padding (value + spaces up to the
# width, never truncating), columns driven by a table of (width, getter) pairs,
# and the output built by incremental string concatenation.

# lmr-body: conll_tree.py::spacy_result_to_conll
    def pad(value, width):
        value = str(value)
        missing = width - len(value)
        if missing > 0:
            value = value + " " * missing
        return value

    columns = [
        ("ID", 5, lambda t: t.i + 1),
        ("text", 10, lambda t: t.text),
        ("LEMMA", 10, lambda t: t.lemma_),
        ("POS", 6, lambda t: t.pos_),
        ("Tag", 6, lambda t: t.tag_),
        ("FEATS", 6, lambda t: "_"),
        ("HEAD", 6, lambda t: t.head.i + 1),
        ("DEPREL", 8, lambda t: t.dep_),
        ("DEPS", 6, lambda t: "_"),
        ("MISC", 6, lambda t: "_"),
    ]

    doc = spacy.load("en_core_web_sm-3.7.1")(sentence)

    result = ""
    line = ""
    for index, (name, width, _getter) in enumerate(columns):
        if index:
            line += " "
        line += pad(name, width)
    result += line + "\n"

    position = 0
    while position < len(doc):
        token = doc[position]
        line = ""
        for index, (_name, width, getter) in enumerate(columns):
            if index:
                line += " "
            line += pad(getter(token), width)
        result += line + "\n"
        position += 1
    return result

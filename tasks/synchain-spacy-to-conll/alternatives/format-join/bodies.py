# Alternative 'format-join': rows as lists of values, each formatted with a
# left-aligned str.format field of the column width, joined by one space;
# all lines collected in a list and joined at the end.

# lmr-body: conll_tree.py::spacy_result_to_conll
    nlp = spacy.load("en_core_web_sm-3.7.1")
    doc = nlp(sentence)
    widths = (5, 10, 10, 6, 6, 6, 6, 8, 6, 6)
    header = ("ID", "text", "LEMMA", "POS", "Tag", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
    rows = [header]
    for token in doc:
        rows.append((
            str(token.i + 1),
            token.text,
            token.lemma_,
            token.pos_,
            token.tag_,
            "_",
            str(token.head.i + 1),
            token.dep_,
            "_",
            "_",
        ))
    lines = []
    for row in rows:
        cells = ["{:<{w}}".format(value, w=width) for value, width in zip(row, widths)]
        lines.append(" ".join(cells) + "\n")
    return "".join(lines)

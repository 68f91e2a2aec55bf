"""Driver for `lmr record`: calls `is_parametric_object_not_in_the_prompt` as scripts/main.py does.

scripts/main.py calls it once per parametric object (the model's answer, cut at the first
separator, stripped and lower-cased) with the whole table of relations and their one-shot
examples, read from paper_data/relation_groups_by_row_with_rel_gen_desc.xlsx. The tables
here have that file's columns; their rows are written for this task, with the shapes the
real table has: entities that are the example object of one relation and the example
subject of another, subjects written with a trailing comma or a possessive, a relation
with no example at all (missing values), and generation_object_2 mostly empty.
"""
import math

import pandas as pd

from src.parametric_knowledge import is_parametric_object_not_in_the_prompt

COLUMNS = [
    "relation_group_id",
    "relation",
    "object_generation_description",
    "raw_subject",
    "raw_object",
    "generation_statement_1",
    "generation_subject_1",
    "generation_relation_1",
    "generation_object_1",
    "generation_statement_2",
    "generation_object_2",
]
NA = math.nan

# (group, relation, description, subject, relation phrase, object, second object)
EXAMPLES = [
    ("geographic", "is-headquarter", "the city of the headquarters", "Siemens", "is headquartered in", "Munich", NA),
    ("geographic", "capital-of", "the country of the capital", "Vienna", "is the capital of", "Austria", "Vienna"),
    ("geographic", "share-border", "a neighbouring country", "Austria", "shares a border with", "Hungary", NA),
    ("geographic", "is-twin-city-of", "a twin city", "Munich", "is a twin city of", "Verona", NA),
    ("geographic", "part-of-continent", "the continent", "Austria", "is a part of the continent of", "Europe", NA),
    ("geographic", "born-in", "the place of birth", "Wolfgang Amadeus Mozart", "was born in", "Salzburg", NA),
    ("geographic", "is-citizen-of", "the country of citizenship", "Winston Churchill", "is a citizen of", "the UK", NA),
    ("geographic", "tie-diplomatic-relations", "a country", "The UK", "maintains diplomatic relations with", "Japan", NA),
    ("geographic", "located-in", "the city", "The Colosseum", "is located in", "Rome", NA),
    ("geographic", "is-in", "the city", "Rome", "is a twin city of", "Paris", NA),
    ("geographic", "located", "the city", "The São Paulo Museum of Art", "is located in", "São Paulo", NA),
    ("geographic", "found-in", "the country", "São Paulo", "is found in", "Brazil", "Suwon"),
    ("geographic", "mother-tongue", "the language", "Angela Merkel's", "mother tongue is", "German", NA),
    ("corporate", "owned-by", "the owner company", "Skype", "is owned by", "Microsoft", NA),
    ("corporate", "headquarter", "the city of the headquarters", "Microsoft", "is headquartered in", "Redmond", NA),
    ("corporate", "product-manufacture-by", "the manufacturer", "The Walkman", "is manufactured by", "Sony", NA),
    ("corporate", "who-works-for", "the employer", "Demis Hassabis,", "who works for", "Google DeepMind", NA),
    ("corporate", "employed-by", "the employer", "Demis Hassabis", "is employed by", "Google DeepMind", NA),
    ("media", "premiere-on", "the network", "Breaking Bad", "premiered on", "AMC", NA),
    ("religion", "official-religion", "the religion", "Thailand", "has the official religion", "Buddhism", NA),
    ("hierarchy", "is-subclass", "the class", "Salmon", "is a subclass of", "Fish", "Bird"),
    ("naming-reference", "is-name-after", "the person", "Darwinism is", "named after", "Charles Darwin", NA),
    ("naming-reference", "is-name-for", "the thing", NA, NA, NA, NA),
    ("occupy-position", "play-in-position", "the position", "Lionel Messi", "plays in the position of", "forward", NA),
    ("play-instrument", "play-the", "the instrument", "Yo-Yo Ma", "plays the", "cello", NA),
]


def table(examples, index=None):
    rows = []
    for group, relation, description, subject, phrase, obj, obj2 in examples:
        statement = NA if isinstance(subject, float) else "%s %s" % (subject, phrase)
        rows.append({
            "relation_group_id": group,
            "relation": relation,
            "object_generation_description": description,
            "raw_subject": subject,
            "raw_object": obj,
            "generation_statement_1": statement,
            "generation_subject_1": subject,
            "generation_relation_1": phrase,
            "generation_object_1": obj,
            "generation_statement_2": NA if isinstance(obj2, float) else statement,
            "generation_object_2": obj2,
        })
    return pd.DataFrame(rows, columns=COLUMNS, index=index)


full = table(EXAMPLES)

# parametric objects as the pipeline leaves them (stripped, lower-cased model outputs)
for parametric_object in [
    "munich",  # object of one relation and subject of another
    "the uk",  # 'the UK' as an object, 'The UK' as a subject
    "são paulo",  # non-ASCII
    "vienna",  # a subject only (and a second-example object)
    "hungary",  # an object only
    "bird",  # only in generation_object_2
    "uk",  # a piece of an example entity, never the whole of one
    "nan",  # the word, not a missing value
    "",  # an answer that was only a separator
]:
    is_parametric_object_not_in_the_prompt(parametric_object, full)

# answers in other casings: the comparison ignores case on both sides
for parametric_object in ["SÃO PAULO", "Hungary"]:
    is_parametric_object_not_in_the_prompt(parametric_object, full)

# a smaller table: the example objects of some relations are the example subjects of others
small = table([EXAMPLES[k] for k in (0, 1, 2, 3, 6, 7, 13, 14, 15, 16, 22)])
for parametric_object in [
    "austria", "MICROSOFT", "The UK", "siemens", "sony", "demis hassabis,", "Demis Hassabis", "merkel",
]:
    is_parametric_object_not_in_the_prompt(parametric_object, small)

# a part of the table, with its original (non-contiguous) index
part = full.iloc[[1, 2, 9, 13, 20, 22]]
for parametric_object in ["austria", "rome", "microsoft", "salmon"]:
    is_parametric_object_not_in_the_prompt(parametric_object, part)

# a relation whose example object is its own subject
singapore = table([("geographic", "capital-of", "the country", "Singapore", "is the capital of", "Singapore", NA)])
for parametric_object in ["singapore", "singapore city"]:
    is_parametric_object_not_in_the_prompt(parametric_object, singapore)

# the object of one example row and the subject of another, with string index labels
pair = table(EXAMPLES[13:15], index=["owned-by", "headquarter"])
for parametric_object in ["microsoft", "skype", "redmond"]:
    is_parametric_object_not_in_the_prompt(parametric_object, pair)

"""Decryption pairs as the notebook's decryption loop builds them (ours).

Keys are the encrypted feature levels, "Feature: <column>, Value: <value>", with values as
pandas reads the census CSV (numbers as they are, text with the leading space the file's
", " separators leave); values are the same feature with the model's decryption,
"Feature: <column>, Value: <decryption>" (lower case, sometimes on a new line, sometimes
wrong).
"""

LEVELS = [
    ("age", "39", "39"),
    ("age", "50", "fifty"),
    ("age", "38", "\n38"),
    ("workclass", " State-gov", "state-gov"),
    ("workclass", " Self-emp-not-inc", "self-employed"),
    ("workclass", " Private", "private"),
    ("education", " Bachelors", "bachelors"),
    ("education", " HS-grad", "high school graduate"),
    ("education", " Masters", "\nmasters degree"),
    ("marital-status", " Never-married", "never-married"),
    ("marital-status", " Married-civ-spouse", "married"),
    ("occupation", " Adm-clerical", "administrative clerk"),
    ("occupation", " Exec-managerial", "executive"),
    ("occupation", " Handlers-cleaners", "cleaner"),
    ("relationship", " Not-in-family", "not in family"),
    ("relationship", " Husband", "husband"),
    ("race", " White", "white"),
    ("race", " Black", "asian"),
    ("sex", " Male", "male"),
    ("sex", " Female", "female"),
    ("capital-gain", "2174", "2000"),
    ("capital-gain", "0", "0"),
    ("capital-loss", "0", "none"),
    ("hours-per-week", "40", "40"),
    ("hours-per-week", "13", "part-time"),
    ("native-country", " United-States", "united states"),
    ("native-country", " Cuba", "cuba"),
]


def pairs(levels=LEVELS):
    """{encrypted level: decrypted level}, in the order given."""
    return {f"Feature: {c}, Value: {v}": f"Feature: {c}, Value: {d}" for c, v, d in levels}

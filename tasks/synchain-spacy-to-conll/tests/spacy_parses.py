"""An offline stand-in for spaCy's `en_core_web_sm` pipeline (ours).

The target parses a sentence with `spacy.load("en_core_web_sm-3.7.1")`. That statistical
model cannot be installed here (it is not on PyPI, and nothing may be downloaded), and its
parses would make the tests depend on a model rather than on the conversion. So
`install()` makes `spacy.load` (for the names `en_core_web_sm-3.7.1` and `en_core_web_sm`)
and `import en_core_web_sm` (`.load()`) return a real `spacy.Language` (a blank English
pipeline) whose tokenizer answers each known sentence with a real `spacy.tokens.Doc`,
built with the words, whitespace, lemmas, coarse and fine tags, heads and dependency labels
that the table below gives for it, and morphological features by fine tag (MORPH):
annotations written by hand the way en_core_web_sm 3.7 annotates review sentences (PTB
tags, ClearNLP labels, the root its own head). Other names raise OSError as spaCy does for
a model it cannot find; an unknown sentence raises KeyError.

`register(tokens)` adds a parse (tests use it for seeded random trees): `tokens` is a
list of (text, space_after, lemma, pos, tag, head, dep) with `head` the absolute index
of the head token (a root names itself). It returns the sentence text.

spaCy is imported only where a Doc or a pipeline is made (build_doc, pipeline, install): the
tests' own process reads PARSES and text_of without it (it never parses); the candidate,
whose set-up calls install(), has it.
"""
import sys
import types

MODEL_NAMES = ("en_core_web_sm-3.7.1", "en_core_web_sm")

# (text, space_after, lemma, pos, tag, head, dep)
PARSES = [
    [
        ("The", True, "the", "DET", "DT", 2, "det"),
        ("battery", True, "battery", "NOUN", "NN", 2, "compound"),
        ("life", True, "life", "NOUN", "NN", 3, "nsubj"),
        ("is", True, "be", "AUX", "VBZ", 3, "ROOT"),
        ("amazing", False, "amazing", "ADJ", "JJ", 3, "acomp"),
        (",", True, ",", "PUNCT", ",", 3, "punct"),
        ("but", True, "but", "CCONJ", "CC", 3, "cc"),
        ("the", True, "the", "DET", "DT", 8, "det"),
        ("screen", True, "screen", "NOUN", "NN", 9, "nsubj"),
        ("is", True, "be", "AUX", "VBZ", 3, "conj"),
        ("too", True, "too", "ADV", "RB", 11, "advmod"),
        ("dim", False, "dim", "ADJ", "JJ", 9, "acomp"),
        (".", False, ".", "PUNCT", ".", 9, "punct"),
    ],
    [
        ("I", True, "I", "PRON", "PRP", 3, "nsubj"),
        ("do", False, "do", "AUX", "VBP", 3, "aux"),
        ("n't", True, "not", "PART", "RB", 3, "neg"),
        ("like", True, "like", "VERB", "VB", 3, "ROOT"),
        ("the", True, "the", "DET", "DT", 5, "det"),
        ("keyboard", False, "keyboard", "NOUN", "NN", 3, "dobj"),
        (".", False, ".", "PUNCT", ".", 3, "punct"),
    ],
    [
        ("The", True, "the", "DET", "DT", 1, "det"),
        ("configuration", True, "configuration", "NOUN", "NN", 4, "nsubjpass"),
        ("was", True, "be", "AUX", "VBD", 4, "auxpass"),
        ("unbelievably", True, "unbelievably", "ADV", "RB", 4, "advmod"),
        ("overcomplicated", True, "overcomplicate", "VERB", "VBN", 4, "ROOT"),
        ("by", True, "by", "ADP", "IN", 4, "agent"),
        ("manufacturers", False, "manufacturer", "NOUN", "NNS", 5, "pobj"),
        (".", False, ".", "PUNCT", ".", 4, "punct"),
    ],
    [
        ("Great", True, "great", "ADJ", "JJ", 1, "amod"),
        ("food", False, "food", "NOUN", "NN", 1, "ROOT"),
        (".", True, ".", "PUNCT", ".", 1, "punct"),
        ("Service", True, "service", "NOUN", "NN", 4, "nsubj"),
        ("was", True, "be", "AUX", "VBD", 4, "ROOT"),
        ("slow", False, "slow", "ADJ", "JJ", 4, "acomp"),
        ("!", False, "!", "PUNCT", ".", 4, "punct"),
    ],
    [
        ("Worth", True, "worth", "ADJ", "JJ", 0, "ROOT"),
        ("every", True, "every", "DET", "DT", 2, "det"),
        ("$", False, "$", "SYM", "$", 0, "npadvmod"),
        ("350", True, "350", "NUM", "CD", 2, "nummod"),
        (" ", False, " ", "SPACE", "_SP", 3, "dep"),
        ("of", True, "of", "ADP", "IN", 2, "prep"),
        ("it", False, "it", "PRON", "PRP", 5, "pobj"),
        (".", False, ".", "PUNCT", ".", 0, "punct"),
    ],
    [
        ("The", True, "the", "DET", "DT", 2, "det"),
        ("crème", True, "crème", "NOUN", "NN", 2, "compound"),
        ("brûlée", True, "brûlée", "NOUN", "NN", 6, "nsubj"),
        ("at", True, "at", "ADP", "IN", 2, "prep"),
        ("Café", True, "Café", "PROPN", "NNP", 5, "compound"),
        ("Rouge", True, "Rouge", "PROPN", "NNP", 3, "pobj"),
        ("was", True, "be", "AUX", "VBD", 6, "ROOT"),
        ("heavenly", False, "heavenly", "ADJ", "JJ", 6, "acomp"),
        (".", False, ".", "PUNCT", ".", 6, "punct"),
    ],
    [
        ("Excellent", False, "excellent", "ADJ", "JJ", 0, "ROOT"),
        ("!", False, "!", "PUNCT", ".", 0, "punct"),
    ],
    [
        ("Boot", True, "boot", "NOUN", "NN", 2, "nsubj"),
        ("up", True, "up", "ADP", "RP", 0, "prt"),
        ("takes", True, "take", "VERB", "VBZ", 2, "ROOT"),
        ("35", True, "35", "NUM", "CD", 4, "nummod"),
        ("seconds", True, "second", "NOUN", "NNS", 2, "dobj"),
        ("(", False, "(", "PUNCT", "-LRB-", 2, "punct"),
        ("industry", True, "industry", "NOUN", "NN", 7, "compound"),
        ("standard", False, "standard", "NOUN", "NN", 2, "appos"),
        (")", True, ")", "PUNCT", "-RRB-", 2, "punct"),
        ("and", True, "and", "CCONJ", "CC", 2, "cc"),
        ("the", True, "the", "DET", "DT", 13, "det"),
        ("touch", True, "touch", "NOUN", "NN", 13, "compound"),
        ("-", True, "-", "PUNCT", "HYPH", 13, "punct"),
        ("pad", True, "pad", "NOUN", "NN", 14, "nsubj"),
        ("works", True, "work", "VERB", "VBZ", 2, "conj"),
        ("flawlessly", False, "flawlessly", "ADV", "RB", 14, "advmod"),
        ("...", False, "...", "PUNCT", "NFP", 14, "punct"),
    ],
    [],
]

# Morphological features the way en_core_web_sm's morphologizer gives them, by fine tag:
# real parses carry them, so a FEATS column that leaked them would show.
MORPH = {
    "DT": "Definite=Def|PronType=Art", "NN": "Number=Sing", "NNS": "Number=Plur",
    "NNP": "NounType=Prop|Number=Sing", "VBZ": "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
    "VBD": "Mood=Ind|Tense=Past|VerbForm=Fin", "VBP": "Mood=Ind|Tense=Pres|VerbForm=Fin",
    "VBN": "Aspect=Perf|Tense=Past|VerbForm=Part", "VB": "VerbForm=Inf", "JJ": "Degree=Pos",
    "PRP": "Case=Nom|Number=Sing|Person=1|PronType=Prs", "CD": "NumType=Card",
    ",": "PunctType=Comm", ".": "PunctType=Peri", "-LRB-": "PunctSide=Ini|PunctType=Brck",
    "-RRB-": "PunctSide=Fin|PunctType=Brck", "HYPH": "PunctType=Dash", "CC": "ConjType=Cmp",
}

_docs = {}
_nlp = None


def text_of(tokens):
    return "".join(t[0] + (" " if t[1] else "") for t in tokens)


def register(tokens):
    """Add a parse; return its sentence text (the key the stand-in pipeline answers)."""
    tokens = [tuple(t) for t in tokens]
    n = len(tokens)
    for i, t in enumerate(tokens):
        if not (0 <= t[5] < n):
            raise ValueError(f"token {i}: head {t[5]} is outside the sentence")
    text = text_of(tokens)
    _docs[text] = tokens
    return text


def build_doc(vocab, text):
    from spacy.tokens import Doc

    if text not in _docs:
        raise KeyError(f"the grader's en_core_web_sm stand-in has no parse for {text!r}")
    tokens = _docs[text]
    doc = Doc(
        vocab,
        words=[t[0] for t in tokens],
        spaces=[t[1] for t in tokens],
        lemmas=[t[2] for t in tokens],
        pos=[t[3] for t in tokens],
        tags=[t[4] for t in tokens],
        heads=[t[5] for t in tokens],
        deps=[t[6] for t in tokens],
        morphs=[MORPH.get(t[4], "") for t in tokens],
    )
    assert doc.text == text
    return doc


def pipeline():
    global _nlp
    if _nlp is None:
        import spacy

        nlp = spacy.blank("en")
        nlp.tokenizer = lambda text: build_doc(nlp.vocab, text)
        _nlp = nlp
    return _nlp


def fake_load(name, *args, **kwargs):
    if str(name) in MODEL_NAMES:
        return pipeline()
    raise OSError(
        f"[E050] Can't find model '{name}'. The grader provides only {', '.join(MODEL_NAMES)} (a stand-in)."
    )


def install():
    import spacy

    if getattr(spacy.load, "_synchain_stand_in", False):
        return
    fake_load._synchain_stand_in = True
    spacy.load = fake_load
    module = types.ModuleType("en_core_web_sm")
    module.load = lambda *args, **kwargs: pipeline()
    module.__version__ = "3.7.1"
    sys.modules["en_core_web_sm"] = module


for _tokens in PARSES:
    register(_tokens)

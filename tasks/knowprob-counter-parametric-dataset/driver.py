"""Driver for `lmr record`: calls `generate_counter_parametric_knowledge_dataset` on parametric-knowledge frames we build.

The frames come from tests/parametric_frames.py: the columns generate_parametric_knowledge_dataset
(src/data.py) returns, after scripts/main.py's filters, for ParaRel-like facts written for
this task, with a toy model's outputs (one token per word) and its first-step log-probability
distributions (seeded). In every recorded frame the objects of one relation have different
first tokens, so no two candidate counter-objects of an example are equally likely: the
recorded result is then the only correct one. Frames where candidates tie, and inputs that
give no row at all, are checked by tests/test_properties.py instead.

Some statements hold their object inside the subject too ("Belgian chocolate is a subclass
of chocolate."), as the real ParaRel data does; the model's answer differs from the object
there, so the subject/object filter keeps them.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))

from parametric_frames import parametric_knowledge  # noqa: E402

from src.data import generate_counter_parametric_knowledge_dataset  # noqa: E402

FACTS = [
    ("Caracas", "capital-of", "Venezuela", "venezuela"),
    ("Brussels", "capital-of", "Belgium", "belgium"),
    ("Harare", "capital-of", "Zimbabwe", "zimbabwe"),
    ("Bern", "capital-of", "Switzerland", "germany"),
    ("Quito", "capital-of", "Ecuador", "ecuador"),
    ("Slava Zaitsev's", "mother-tongue", "Russian", "russian"),
    ("Dominique Rocheteau's", "mother-tongue", "French", "french"),
    ("Maximilian Voloshin's", "mother-tongue", "Russian", "russian"),
    ("Simone Vagnozzi's", "mother-tongue", "Italian", "italian"),
    ("Jan Kowalski's", "mother-tongue", "Polish", "polish"),
    ("Luis Suarez's", "mother-tongue", "Spanish", "spanish"),
    ("The Deep Freeze Range", "part-of-continent", "Antarctica", "antarctica"),
    ("McMurdo Station", "part-of-continent", "Antarctica", "antarctica"),
    ("Mount Kenya", "part-of-continent", "Africa", "africa"),
    ("Aconcagua", "part-of-continent", "South America", "south america"),
    ("Lake Baikal", "part-of-continent", "Asia", "asia"),
    ("Mac OS X 10.0", "develop-by", "Apple", "apple"),
    ("The Bentley Continental GT", "develop-by", "Bentley", "volkswagen"),
    ("Windows Update", "develop-by", "Microsoft", "microsoft"),
    ("PlayStation 4", "develop-by", "Sony", "sony"),
    ("Android", "develop-by", "Google", "google"),
    ("Xbox One", "develop-by", "Microsoft", "microsoft"),
    ("Belgian chocolate", "is-subclass", "chocolate", "candy"),
    ("The G and H-class destroyer", "is-subclass", "destroyer", "warship"),
    ("Internet censorship", "is-subclass", "censorship", "political repression"),
    ("Iran", "official-religion", "Islam", "islam"),
    ("Thailand", "official-religion", "Buddhism", "buddhism"),
    ("Malta", "official-religion", "Catholicism", "roman catholicism"),
    ("Nepal", "official-religion", "Hinduism", "hinduism"),
]



def untied(frame):
    """Checks that no two candidate counter-objects of an example are equally likely; returns the frame."""
    first = {o: int(t[0]) for o, t in zip(frame.parametric_object, frame.model_output_tokens_ids)}
    for _, row in frame.iterrows():
        others = set(frame[frame.rel_lemma == row.rel_lemma].parametric_object) - {row.parametric_object}
        scores = [row.log_probability_parametric_object_first_token[first[o]] for o in others]
        assert len(set(scores)) == len(scores), (row.statement_subject, sorted(others))
    return frame


base = untied(parametric_knowledge(FACTS, seed=1))
generate_counter_parametric_knowledge_dataset(base, 3)  # k = 3, as in the paper (Appendix A)
generate_counter_parametric_knowledge_dataset(base, nb_counter_parametric_knowledge=1)

# other distributions, rows in another order, string index labels
order = [20, 3, 11, 27, 6, 15, 0, 23, 9, 18, 25, 13, 1, 21, 7, 16, 28, 4, 10, 24, 19, 2, 14, 8, 26, 5, 17, 12, 22]
shuffled = untied(parametric_knowledge([FACTS[k] for k in order], seed=2, index=["pk-%d" % (7 * k) for k in order]))
generate_counter_parametric_knowledge_dataset(shuffled, 2)

# a relation whose examples all got the same answer (no candidate at all), and one with a single other object
few = FACTS[:5] + [
    ("Jimi Hendrix", "play-the", "guitar", "guitar"),
    ("Slash", "play-the", "guitar", "guitar"),
    ("Nintendo", "is-headquarter", "Kyoto", "kyoto"),
    ("WWE", "is-headquarter", "Stamford", "new york"),
]
few = untied(parametric_knowledge(few, seed=3, index="range"))
generate_counter_parametric_knowledge_dataset(few, 3)
# more than any relation has: each example keeps every other object of its relation
generate_counter_parametric_knowledge_dataset(few, 6)

# relations that share a relation group (mother-tongue and capital-of): counter-objects stay within the relation
generate_counter_parametric_knowledge_dataset(untied(parametric_knowledge(FACTS[:11], seed=4, peak=0.2, scale=3.0)), 2)

"""Generator of fixtures/scores.json: the reference MoverScore on seeded and hand-written inputs.

`lmr record` cannot record word_mover_score from a driver: its idf arguments are defaultdicts
with a lambda as default factory, which the recorder cannot store. So this script calls the
reference itself and writes, per case, what tests/test_replay.py needs to make the same call
again: the reference and hypothesis texts, the idf specs (tests/moverscore_cases.py turns a
spec into the dictionary a caller passes), stop_words, n_gram, remove_subwords, batch_size,
and the reference's scores.

It runs from the root of the reference tree after tests/conftest.py, so moverscore_v2 loads
the tiny DistilBERT of tests/tiny_distilbert.py; every call passes device='cpu'. Writes only
$LMR_FIXTURES_OUT/fixtures/scores.json. Seeded and single-threaded here (with several threads the float32 sums, and so
the last digits, depend on the core count); scores rounded to 6 significant digits, far below
the tests' tolerance.
"""
import json
import os
import random

import numpy as np
import torch

random.seed(0)
np.random.seed(0)
torch.manual_seed(0)


def single_threaded():
    """One thread for torch and for the BLAS it calls (Debian's is OpenBLAS, whose own thread
    count OMP_NUM_THREADS sets when it loads): float32 sums in a fixed order, so the last digits
    of the scores do not depend on the machine's cores or environment."""
    import ctypes

    torch.set_num_threads(1)
    with open("/proc/self/maps", encoding="utf-8") as f:
        libs = sorted({line.split()[-1] for line in f if "openblas" in line and ".so" in line})
    for lib in libs:
        try:
            ctypes.CDLL(lib).openblas_set_num_threads(1)
        except (OSError, AttributeError):
            pass


single_threaded()

import moverscore_cases  # noqa: E402  (tests/, put on sys.path by tests/conftest.py)
import moverscore_v2  # noqa: E402
import tiny_distilbert  # noqa: E402

rng = random.Random(20191103)
CONTENT = [w for w in tiny_distilbert.WORDS if len(w) > 2]
PIECES = ["##s", "##ed", "##ing", "##ly"]


def random_sentence(low, high):
    words = []
    for _ in range(rng.randint(low, high)):
        word = rng.choice(CONTENT)
        if rng.random() < 0.2:
            word += rng.choice(PIECES)[2:]
        words.append(word)
        if rng.random() < 0.1:
            words.append(rng.choice([",", ".", "!", "?"]))
    return " ".join(words)


def perturb(sentence):
    words = sentence.split()
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(words))
        words[k] = rng.choice(CONTENT)
    if len(words) > 3 and rng.random() < 0.5:
        del words[rng.randrange(len(words))]
    return " ".join(words)


PARAPHRASES = [
    ("the dog bit the man .", "the man bit the dog ."),
    ("the dog bit the man .", "the dog bit the man ."),
    ("a small cat ate the bird", "the little cat ate a bird"),
    ("the police officer saw the boy in the park", "the officer saw a child in the park ."),
    ("it was not surprising", "it was unexpected !"),
    ("the teacher wrote a long letter", "rain"),
    ("she had bitten the dog yesterday", "he bit the dogs today"),
    ("the red car is very fast", "the blue bus is slow"),
]
SUBWORDS = [
    ("the dogs walked to the houses", "the dog walks to the house"),
    ("the boys played happily in the parks", "the boy is playing in the park"),
    ("sadness and happiness", "the saddest and happiest"),
    ("the quickest trains stopped", "the quick train stops"),
]
PUNCT = [
    ("the dog , the cat , and the bird !", "the dog the cat and the bird"),
    ("\"stop !\" she called .", "she called stop"),
    ("( the game ) - a story ; the end ?", "the game is a story"),
]
UNKNOWN = [
    ("the zebra bit the man", "the dog bit the man"),
    ("xylophones are loud", "music is loud"),
]
LONG = [
    (
        "the old man and the young woman walked to the city park in the morning and the dog ran "
        "after the red ball while the children played a game near the river",
        "in the morning the woman and the man walked to the park and a dog ran after a ball",
    ),
    (
        "this is a very long story about a teacher who wrote a letter to every student of the "
        "school and the students read the letter at home in the night",
        "the teacher wrote letters to the students",
    ),
]

RANDOM = []
for _ in range(8):
    ref = random_sentence(3, 12)
    RANDOM.append((ref, perturb(ref)))
for _ in range(4):
    RANDOM.append((random_sentence(2, 8), random_sentence(2, 8)))


def uniform(v=1.0):
    return {"kind": "uniform", "value": v}


def corpus(texts):
    return {"kind": "corpus", "texts": list(texts)}


def case(name, pairs, idf_ref, idf_hyp, **options):
    refs = [r for r, _ in pairs]
    hyps = [h for _, h in pairs]
    return {"name": name, "refs": refs, "hyps": hyps, "idf_ref": idf_ref, "idf_hyp": idf_hyp, "options": options}


def corpus_case(name, pairs, **options):
    refs = [r for r, _ in pairs]
    hyps = [h for _, h in pairs]
    return case(name, pairs, corpus(refs), corpus(hyps), **options)


BY_ID = {"kind": "by_id", "offset": 0.25, "scale": 0.5, "mod": 7}
BY_ID_2 = {"kind": "by_id", "offset": 1.0, "scale": 0.3, "mod": 5}

CASES = [
    case("paraphrases-uniform-idf", PARAPHRASES, uniform(), uniform()),
    corpus_case("paraphrases-corpus-idf", PARAPHRASES),
    case("single-pair", PARAPHRASES[:1], uniform(), uniform()),
    case("identical-pair", [PARAPHRASES[1]], uniform(), uniform()),
    case("uniform-idf-other-value", PARAPHRASES[2:6], uniform(2.5), uniform(0.5)),
    case("idf-by-token-id", PARAPHRASES + SUBWORDS, BY_ID, BY_ID_2),
    case("stop-words", PARAPHRASES, uniform(), uniform(), stop_words=["the", "a", "is", "was", "it", "in"]),
    corpus_case("stop-words-corpus-idf", PARAPHRASES + PUNCT, stop_words=["the", "a", "and", "of"]),
    case("subwords", SUBWORDS, uniform(), uniform()),
    case("subwords-keep-flag", SUBWORDS, uniform(), uniform(), remove_subwords=False),
    case("bigram-flag", SUBWORDS + PARAPHRASES[:3], uniform(), uniform(), n_gram=2),
    case("punctuation", PUNCT, uniform(), uniform()),
    corpus_case("punctuation-corpus-idf", PUNCT + PARAPHRASES[:2]),
    case("unknown-words", UNKNOWN, uniform(), uniform()),
    case("truncated-long-texts", LONG, uniform(), uniform()),
    corpus_case("truncated-long-texts-corpus-idf", LONG + PARAPHRASES[:2]),
    corpus_case("random-corpus-idf", RANDOM),
    case("random-uniform-idf", RANDOM, uniform(), uniform()),
    corpus_case("batches-of-2", PARAPHRASES[:5], batch_size=2),
    case("batches-of-3-by-id", RANDOM[:7], BY_ID_2, BY_ID, batch_size=3),
    case("batches-of-1", PARAPHRASES[:3], uniform(), uniform(), batch_size=1),
]


def r6(x):
    return float("%.6g" % float(x))


tokenizer = moverscore_v2.tokenizer
out = []
for c in CASES:
    idf_ref = moverscore_cases.idf_dict(c["idf_ref"], tokenizer)
    idf_hyp = moverscore_cases.idf_dict(c["idf_hyp"], tokenizer)
    scores = moverscore_v2.word_mover_score(c["refs"], c["hyps"], idf_ref, idf_hyp, device="cpu", **c["options"])
    assert len(scores) == len(c["refs"])
    out.append(dict(c, scores=[r6(s) for s in scores]))

path = os.path.join(os.environ["LMR_FIXTURES_OUT"], "fixtures", "scores.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w", encoding="utf-8") as f:
    f.write(json.dumps({"cases": out}, indent=1, sort_keys=True) + "\n")

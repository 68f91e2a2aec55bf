"""Synthetic `processed_results/` folders, as analysis/process_exp_results.py writes them (ours).

One TSV per (perceiver persona, experiencer) pair of a group option, named
`{group_option}_{prompt_variation}_{model_id}_{persona}_{experiencer}.tsv`, with the columns
idx, emotion, system_prompt, user_input, response, intensity and one row per narrative
(6050 of them, in the same order in every file). An intensity is the number parsed from the
model's answer, on a 0-100 scale (0-10 for the '10-scale' prompt variation), or -1 where the
model refused or gave no number.

Intensities are drawn from a seeded numpy RandomState: a per-narrative level shared by every
file, a perceiver effect, an experiencer effect, an in-group bonus, row noise, and a few
refusals (some narratives are refused under many pairs, as real ones are). Everything is a
pure function of the arguments, so the generator and the tests build the same folders.
"""
import os

import numpy as np

N_NARRATIVES = 6050
EMOTIONS = ["anger", "disgust", "fear", "guilt", "sadness", "shame", "boredom", "joy", "pride", "trust", "relief", "surprise"]


def file_name(group_option, prompt_variation, model_id, persona, experiencer):
    return f"{group_option}_{prompt_variation}_{model_id}_{persona}_{experiencer}.tsv"


def make_intensities(groups, same_group, seed, scale=100, perceiver_sd=3.0, experiencer_sd=3.0, bonus=4.0, refusal_rate=None, refusals=True):
    """{(persona, experiencer): int array of N_NARRATIVES} over the groups' pairs.

    A real folder also holds the pairs with the 'a person' baseline; get_filtered_matrix
    never reads them, so they are left out to keep the folders small.
    """
    rng = np.random.RandomState(seed)
    if refusal_rate is None:  # about 3% of the narratives end up excluded, whatever the number of pairs
        refusal_rate = 0.03 / len(groups) ** 2
    full = list(groups)
    level = rng.uniform(20.0, 80.0, size=N_NARRATIVES)
    perceiver = dict(zip(full, rng.normal(0.0, perceiver_sd, size=len(full))))
    experiencer = dict(zip(full, rng.normal(0.0, experiencer_sd, size=len(full))))
    often_refused = rng.choice(N_NARRATIVES, size=12, replace=False)
    out = {}
    for p in full:
        for e in full:
            ingroup = same_group(p, e)
            x = level + perceiver[p] + experiencer[e] + (bonus if ingroup else 0.0) + rng.normal(0.0, 8.0, size=N_NARRATIVES)
            x = np.clip(np.rint(x * scale / 100.0), 0, scale).astype(int)
            refused = rng.random_sample(N_NARRATIVES) < refusal_rate
            refused[often_refused[rng.random_sample(len(often_refused)) < 0.5]] = True
            if refusals:
                x[refused] = -1
            out[(p, e)] = x
    return out


def write_folder(root, group_option, prompt_variation, model_id, intensities):
    """Writes root/processed_results/<one TSV per pair>; returns the folder."""
    folder = os.path.join(root, "processed_results")
    os.makedirs(folder, exist_ok=True)
    for (p, e), values in intensities.items():
        lines = ["idx\temotion\tsystem_prompt\tuser_input\tresponse\tintensity"]
        for k, v in enumerate(values):
            answer = "I cannot rate that." if v < 0 else f"{v}"
            lines.append(f"{k}\t{EMOTIONS[k % 12]}\tYou are {p}.\tNarrative {k} of {e}.\t{answer}\t{v}")
        with open(os.path.join(folder, file_name(group_option, prompt_variation, model_id, p, e)), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return folder


def excluded_ids(groups, intensities):
    """Narratives refused under any pair of the groups, as the notebook's get_excluded_id_set_no_default excludes them."""
    out = set()
    for p in groups:
        for e in groups:
            out.update(int(k) for k in np.flatnonzero(intensities[(p, e)] == -1))
    return out


def same_label(p, e):
    return p == e

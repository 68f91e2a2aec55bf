"""Replay of the reference's SimCLR.info_nce_loss on the batches in fixtures/info_nce_cases.json.

generators/info_nce_cases.py wrote that file by running the reference (in float64) on
float32 feature batches laid out as SimCLR.train lays them out. Each case here feeds the
same float32 features to the workspace's method and compares the logits (within a
tolerance that float32 arithmetic meets) and the labels (exactly) with the recording.

The method runs in the candidate process (lmr_bridge): the probe below builds the SimCLR
object there and sends back the two tensors it returned; the recorded values, which never
leave this process, decide the test here.
"""
import json
import math
from pathlib import Path

import pytest
import torch
from lmr_bridge import probe

RTOL = 1e-5
ATOL = 5e-5  # logits are similarities divided by a temperature as low as 0.07

CASES = json.loads((Path(__file__).resolve().parent / "../fixtures/info_nce_cases.json").read_text())["cases"]


@probe
def info_nce_loss(batch_size, n_views, temperature, features):
    """In the candidate: a SimCLR made without its constructor, with only `args` set (the
    fields run.py gives it), and what info_nce_loss returns for `features`."""
    import types

    import torch
    from simclr import SimCLR

    model = object.__new__(SimCLR)
    model.args = types.SimpleNamespace(
        batch_size=batch_size,
        n_views=n_views,
        temperature=temperature,
        device=torch.device("cpu"),
        fp16_precision=False,
        log_every_n_steps=100,
    )
    return model.info_nce_loss(features)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_info_nce_loss_matches_recorded_case(case):
    features = torch.tensor(case["features"], dtype=torch.float32)
    result = info_nce_loss(case["batch_size"], case["n_views"], case["temperature"], features)
    assert isinstance(result, (tuple, list)) and len(result) == 2, type(result)
    logits, labels = result

    assert isinstance(logits, torch.Tensor) and isinstance(labels, torch.Tensor)
    expected = case["logits"]
    assert tuple(logits.shape) == (len(expected), len(expected[0])), tuple(logits.shape)
    assert logits.dtype == torch.float32, logits.dtype
    got = logits.detach().tolist()
    for i, (erow, grow) in enumerate(zip(expected, got)):
        for j, (e, g) in enumerate(zip(erow, grow)):
            assert math.isclose(g, e, rel_tol=RTOL, abs_tol=ATOL), "logits[%d][%d]: expected %r, got %r" % (i, j, e, g)

    assert labels.dtype == torch.int64, labels.dtype
    assert tuple(labels.shape) == (len(case["labels"]),), tuple(labels.shape)
    assert labels.tolist() == case["labels"]

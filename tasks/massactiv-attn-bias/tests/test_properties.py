"""Property tests for CausalSelfAttention.forward in gpt-2/model_attn_bias.py: causal
self-attention with explicit attention biases (one learned key and one learned value per head,
which every query attends to besides the tokens up to its own position).

The oracle below is written from that definition, in float64, independently of the
workspace: q, k, v from c_attn (in that order, heads as consecutive slices of head_dim
channels), per head the logits of the real keys and of the bias key, all scaled by
1/sqrt(head_dim), the real keys masked causally (the bias key never), one softmax over the
T + 1 slots, the weighted sum of the real values and the bias value, heads put back side by
side, then c_proj. It places the bias slot last (the upstream code places it first; the order
of the slots cannot change a softmax-weighted sum). A few tests also check closed forms that
need no oracle at all (the first token's two-slot softmax, a bias key that takes or gets all
of the attention).

Where the code runs: the module is built and called only in the candidate process
(lmr_bridge): the probes below build CausalSelfAttention (or the whole GPT) from a GPTConfig,
load the parameters chosen here with load_state_dict, call it and send back outputs,
gradients and state. Every expected value is computed in this process from the inputs and
parameters it chose.
"""
import math

import pytest
import torch
import torch.nn.functional as F
from lmr_bridge import probe, probe_helper

RTOL64 = 1e-10
ATOL64 = 1e-12


# ------------------------------------------------------------------------- the candidate


@probe_helper
def make_attention(cfg, state, dtype_name, train):
    """In the candidate: CausalSelfAttention for the GPTConfig fields `cfg`, in `dtype_name`,
    with the parameters `state` (a state_dict chosen by the tests), in training mode or not."""
    import importlib

    import torch

    mab = importlib.import_module("gpt-2.model_attn_bias")
    dtype = getattr(torch, dtype_name)
    m = mab.CausalSelfAttention(mab.GPTConfig(**cfg)).to(dtype)
    m.load_state_dict({k: v.to(dtype) for k, v in state.items()})
    m.train(train)
    return m


@probe
def attend(cfg, state, xs, dtype_name="float64", train=False):
    """In the candidate: the module's output for each input in `xs` (the same module each time)."""
    import torch

    m = make_attention(cfg, state, dtype_name, train)
    return [m(x.to(getattr(torch, dtype_name))).detach() for x in xs]


@probe
def attend_with_state(cfg, state, x):
    """In the candidate: the output, then the parameters and the input as they are after the call."""
    m = make_attention(cfg, state, "float64", False)
    x = x.clone()
    y = m(x)
    return {"y": y.detach(), "state": {k: v.detach().clone() for k, v in m.state_dict().items()}, "x": x}


@probe
def attend_gradients(cfg, state, x, weight):
    """In the candidate: the gradient of sum(output * weight) with respect to x and to the
    module's k_bias, v_bias, c_attn.weight and c_proj.weight (float64)."""
    import torch

    m = make_attention(cfg, state, "float64", False)
    x = x.clone().requires_grad_(True)
    y = m(x)
    wrt = [x, m.k_bias, m.v_bias, m.c_attn.weight, m.c_proj.weight]
    return {"requires_grad": bool(y.requires_grad), "grads": [g for g in torch.autograd.grad((y * weight).sum(), wrt)]}


@probe
def gpt_forward(cfg, state, idx, targets):
    """In the candidate: model_attn_bias.GPT for `cfg` with the parameters `state`, in float64
    and eval mode: (logits, loss) for idx and targets."""
    import importlib

    import torch

    mab = importlib.import_module("gpt-2.model_attn_bias")
    model = mab.GPT(mab.GPTConfig(**cfg)).double()
    model.load_state_dict(state)
    model.eval()
    logits, loss = model(idx, targets)
    return {"logits": logits.detach(), "loss": loss.detach()}


# ------------------------------------------------------------------------- the oracle


def oracle_attention(state, x, n_head):
    """Causal self-attention with one bias key and value per head, in float64."""
    x = x.double()
    B, T, C = x.shape
    hs = C // n_head
    qkv = F.linear(x, state["c_attn.weight"].double(), None if "c_attn.bias" not in state else state["c_attn.bias"].double())
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]

    def heads(t):
        return t.reshape(B, T, n_head, hs).permute(0, 2, 1, 3)

    q, k, v = heads(q), heads(k), heads(v)
    kb = state["k_bias"].double().reshape(1, n_head, 1, hs).expand(B, n_head, 1, hs)
    vb = state["v_bias"].double().reshape(1, n_head, 1, hs).expand(B, n_head, 1, hs)
    keys, values = torch.cat([k, kb], dim=2), torch.cat([v, vb], dim=2)
    logits = q @ keys.transpose(-1, -2) / math.sqrt(hs)  # (B, nh, T, T + 1): the bias slot last
    allowed = torch.zeros(T, T + 1, dtype=torch.bool)
    for t in range(T):
        allowed[t, : t + 1] = True
        allowed[t, T] = True
    weights = torch.softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)
    y = (weights @ values).permute(0, 2, 1, 3).reshape(B, T, C)
    return F.linear(y, state["c_proj.weight"].double(), None if "c_proj.bias" not in state else state["c_proj.bias"].double())


def oracle_layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * weight + bias


def oracle_gpt(state, idx, targets, n_layer, n_head):
    """The nanoGPT model around the attention (embeddings, pre-norm blocks with a GELU MLP,
    final norm, tied output head), in float64: (logits, mean cross-entropy)."""
    T = idx.shape[1]
    x = state["transformer.wte.weight"][idx] + state["transformer.wpe.weight"][:T]
    for i in range(n_layer):
        p = lambda name: state[f"transformer.h.{i}.{name}"]  # noqa: E731
        attn_state = {name: p("attn." + name) for name in ("c_attn.weight", "c_attn.bias", "c_proj.weight", "c_proj.bias", "k_bias", "v_bias")}
        x = x + oracle_attention(attn_state, oracle_layer_norm(x, p("ln_1.weight"), p("ln_1.bias")), n_head)
        h = oracle_layer_norm(x, p("ln_2.weight"), p("ln_2.bias"))
        h = F.linear(h, p("mlp.c_fc.weight"), p("mlp.c_fc.bias"))
        h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
        x = x + F.linear(h, p("mlp.c_proj.weight"), p("mlp.c_proj.bias"))
    x = oracle_layer_norm(x, state["transformer.ln_f.weight"], state["transformer.ln_f.bias"])
    logits = x @ state["lm_head.weight"].T
    logp = torch.log_softmax(logits, dim=-1)
    loss = -logp.gather(-1, targets.unsqueeze(-1)).mean()
    return logits, loss


# ------------------------------------------------------------------------- inputs


def config(n_head, n_embd, bias=True, dropout=0.0, block_size=16):
    return {"block_size": block_size, "vocab_size": 32, "n_layer": 1, "n_head": n_head, "n_embd": n_embd, "dropout": dropout, "bias": bias}


def attention_state(seed, n_head, n_embd, bias=True, bias_scale=1.0):
    """Parameters of one attention module, float64, drawn at the scale of a trained model."""
    gen = torch.Generator().manual_seed(seed)
    C, hs = n_embd, n_embd // n_head

    def draw(*shape, scale):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale

    state = {
        "k_bias": draw(1, n_head, 1, hs, scale=bias_scale),
        "v_bias": draw(1, n_head, 1, hs, scale=bias_scale),
        "c_attn.weight": draw(3 * C, C, scale=1.0 / math.sqrt(C)),
        "c_proj.weight": draw(C, C, scale=1.0 / math.sqrt(C)),
    }
    if bias:
        state["c_attn.bias"] = draw(3 * C, scale=0.2)
        state["c_proj.bias"] = draw(C, scale=0.2)
    return state


def tokens(seed, B, T, C, scale=1.0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(B, T, C, generator=gen, dtype=torch.float64) * scale


def close(got, want, rtol=RTOL64, atol=ATOL64):
    assert got.shape == want.shape, f"shape {tuple(got.shape)}, expected {tuple(want.shape)}"
    diff = (got.double() - want.double()).abs().max().item() if got.numel() else 0.0
    assert torch.allclose(got.double(), want.double(), rtol=rtol, atol=atol), f"largest difference {diff:.3e}"


# ------------------------------------------------------------------------- the tests

CASES = [
    # (n_head, n_embd, B, T, Linear biases)
    (2, 8, 2, 5, True),
    (4, 16, 1, 1, True),  # a single token: the bias slot and itself
    (1, 6, 2, 7, False),  # one head, no Linear biases
    (4, 32, 3, 16, True),  # a full block
    (3, 12, 1, 9, False),
]


@pytest.mark.parametrize("n_head,n_embd,B,T,bias", CASES, ids=[f"h{c[0]}-c{c[1]}-b{c[2]}-t{c[3]}-{'bias' if c[4] else 'nobias'}" for c in CASES])
def test_matches_the_oracle_in_float64(n_head, n_embd, B, T, bias):
    state = attention_state(10 + n_head + T, n_head, n_embd, bias)
    x = tokens(20 + T, B, T, n_embd)
    (y,) = attend(config(n_head, n_embd, bias), state, [x])
    assert y.dtype == torch.float64
    close(y, oracle_attention(state, x, n_head))


def test_float32_in_float32_out():
    state = {k: v.float() for k, v in attention_state(3, 4, 16).items()}
    x = tokens(4, 2, 10, 16).float()
    (y,) = attend(config(4, 16), state, [x], "float32")
    assert y.dtype == torch.float32
    close(y, oracle_attention(state, x, 4), rtol=1e-5, atol=1e-6)


def test_the_first_token_attends_to_the_bias_slot_and_to_itself():
    """Token 0 has two slots: the bias (key k', value v') and itself (k0, v0), each logit scaled by
    1/sqrt(head_dim). One head, c_proj the identity: its output is the two-slot softmax mix."""
    C = 4
    state = attention_state(5, 1, C, bias=False)
    state["c_proj.weight"] = torch.eye(C, dtype=torch.float64)
    x = tokens(6, 1, 3, C)
    (y,) = attend(config(1, C, bias=False), state, [x])
    qkv = state["c_attn.weight"] @ x[0, 0]
    q0, k0, v0 = qkv[:C], qkv[C:2 * C], qkv[2 * C:]
    kb, vb = state["k_bias"].reshape(C), state["v_bias"].reshape(C)
    a = float(q0 @ kb) / math.sqrt(C)
    b = float(q0 @ k0) / math.sqrt(C)
    wa = 1.0 / (1.0 + math.exp(b - a))
    close(y[0, 0], wa * vb + (1.0 - wa) * v0)


def _sink_state(n_head, hs, sign, value_scale):
    """Queries s*u_h (+ a small x-dependent part), keys of the tokens from c_attn, and a bias key
    sign*c*u_h per head: its logit is about sign*s*c/sqrt(hs) for every query."""
    C = n_head * hs
    gen = torch.Generator().manual_seed(41)
    u = torch.randn(n_head, hs, generator=gen, dtype=torch.float64)
    u = u / u.norm(dim=-1, keepdim=True)
    w = torch.randn(3 * C, C, generator=gen, dtype=torch.float64) / math.sqrt(C)
    w[:C] *= 0.01  # the query barely depends on x
    b = torch.zeros(3 * C, dtype=torch.float64)
    b[:C] = 10.0 * u.reshape(C)
    return {
        "c_attn.weight": w,
        "c_attn.bias": b,
        "c_proj.weight": torch.eye(C, dtype=torch.float64),
        "c_proj.bias": torch.zeros(C, dtype=torch.float64),
        "k_bias": (sign * 12.0 * u).reshape(1, n_head, 1, hs),
        "v_bias": torch.randn(1, n_head, 1, hs, generator=gen, dtype=torch.float64) * value_scale,
    }


def test_a_dominant_bias_key_makes_every_token_output_the_bias_value():
    n_head, hs, T = 2, 4, 6
    state = _sink_state(n_head, hs, +1.0, 1.0)
    x = tokens(42, 2, T, n_head * hs)
    (y,) = attend(config(n_head, n_head * hs), state, [x])
    want = state["v_bias"].reshape(n_head * hs).expand(2, T, n_head * hs)
    close(y, want, rtol=1e-9, atol=1e-9)


def test_a_bias_key_no_query_attends_to_gives_plain_causal_attention():
    n_head, hs, T = 2, 4, 7
    C = n_head * hs
    state = _sink_state(n_head, hs, -1.0, 1.0)
    x = tokens(43, 2, T, C)
    (y,) = attend(config(n_head, C), state, [x])
    qkv = F.linear(x, state["c_attn.weight"], state["c_attn.bias"])
    q, k, v = (t.reshape(2, T, n_head, hs).transpose(1, 2) for t in qkv.split(C, dim=-1))
    plain = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, T, C)
    close(y, plain, rtol=1e-9, atol=1e-9)


def test_future_tokens_do_not_change_earlier_outputs():
    n_head, C, T, t0 = 2, 8, 8, 4
    state = attention_state(7, n_head, C)
    x = tokens(8, 1, T, C)
    x2 = x.clone()
    x2[:, t0:] = tokens(9, 1, T - t0, C)
    y, y2 = attend(config(n_head, C), state, [x, x2])
    close(y, oracle_attention(state, x, n_head))
    close(y2[:, :t0], y[:, :t0])
    assert not torch.allclose(y2[:, t0], y[:, t0], rtol=1e-6, atol=1e-6)


def test_each_head_has_its_own_bias_key_and_value():
    """Changing head 1's bias key and value changes head 1's channels only (c_proj the identity)."""
    n_head, hs, T = 2, 4, 5
    C = n_head * hs
    state = attention_state(11, n_head, C, bias=False)
    state["c_proj.weight"] = torch.eye(C, dtype=torch.float64)
    other = dict(state)
    other["k_bias"] = state["k_bias"].clone()
    other["v_bias"] = state["v_bias"].clone()
    other["k_bias"][0, 1] += 1.5
    other["v_bias"][0, 1] -= 2.0
    x = tokens(12, 2, T, C)
    (y,) = attend(config(n_head, C, bias=False), state, [x])
    (y2,) = attend(config(n_head, C, bias=False), other, [x])
    close(y2, oracle_attention(other, x, n_head))
    close(y2[..., :hs], y[..., :hs])
    assert not torch.allclose(y2[..., hs:], y[..., hs:], rtol=1e-6, atol=1e-6)


def test_batch_rows_are_independent_and_share_the_biases():
    n_head, C, T = 2, 8, 6
    state = attention_state(13, n_head, C)
    x = tokens(14, 3, T, C)
    outs = attend(config(n_head, C), state, [x, x[0:1], x[1:2], x[2:3]])
    close(outs[0], oracle_attention(state, x, n_head))
    for b in range(3):
        close(outs[0][b : b + 1], outs[b + 1])


def test_gradients_match_the_oracle():
    n_head, C, B, T = 2, 8, 2, 5
    state = attention_state(15, n_head, C)
    x = tokens(16, B, T, C)
    weight = tokens(17, B, T, C)
    got = attend_gradients(config(n_head, C), state, x, weight)
    assert got["requires_grad"]
    leaves = [x.clone().requires_grad_(True)] + [state[k].clone().requires_grad_(True) for k in ("k_bias", "v_bias", "c_attn.weight", "c_proj.weight")]
    oracle_state = dict(state, **{"k_bias": leaves[1], "v_bias": leaves[2], "c_attn.weight": leaves[3], "c_proj.weight": leaves[4]})
    want = torch.autograd.grad((oracle_attention(oracle_state, leaves[0], n_head) * weight).sum(), leaves)
    names = ["x", "k_bias", "v_bias", "c_attn.weight", "c_proj.weight"]
    assert len(got["grads"]) == len(want)
    for name, g, w in zip(names, got["grads"], want):
        assert g is not None, f"no gradient reaches {name}"
        assert w.abs().max() > 1e-3
        close(g, w, rtol=1e-9, atol=1e-11)


def test_dropout_is_off_in_eval_mode():
    n_head, C = 3, 12
    state = attention_state(18, n_head, C)
    x = tokens(19, 2, 9, C)
    y, y2 = attend(config(n_head, C, dropout=0.5), state, [x, x])
    close(y, oracle_attention(state, x, n_head))
    close(y2, y)


def test_training_mode_without_dropout_matches_the_oracle():
    n_head, C = 2, 8
    state = attention_state(21, n_head, C)
    x = tokens(22, 2, 6, C)
    (y,) = attend(config(n_head, C, dropout=0.0), state, [x], "float64", True)
    close(y, oracle_attention(state, x, n_head))


def test_forward_leaves_the_parameters_and_the_input_unchanged():
    n_head, C = 2, 8
    state = attention_state(23, n_head, C)
    x = tokens(24, 2, 5, C)
    got = attend_with_state(config(n_head, C), state, x)
    close(got["y"], oracle_attention(state, x, n_head))
    assert torch.equal(got["x"], x)
    for name, value in state.items():
        assert torch.equal(got["state"][name], value), f"{name} changed"


def test_stable_when_massive_activations_make_the_logits_huge():
    """A massive activation (hundreds of times the other entries) on the first token, as the
    paper observes them, makes logits of order 1e3 in float64: the output stays finite and
    equal to the oracle's (whose softmax subtracts the row maximum)."""
    n_head, C, T = 2, 8, 6
    state = attention_state(25, n_head, C, bias_scale=30.0)
    x = tokens(26, 1, T, C)
    x[0, 0, 3] = 400.0
    x[0, 2, 5] = -300.0
    (y,) = attend(config(n_head, C), state, [x])
    want = oracle_attention(state, x, n_head)
    assert torch.isfinite(y).all()
    close(y, want, rtol=1e-9, atol=1e-9)


def gpt_state(seed, n_layer, n_head, n_embd, vocab, block):
    gen = torch.Generator().manual_seed(seed)
    C = n_embd

    def draw(*shape, scale):
        return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale

    wte = draw(vocab, C, scale=0.5)
    state = {"transformer.wte.weight": wte, "transformer.wpe.weight": draw(block, C, scale=0.5), "lm_head.weight": wte}
    for i in range(n_layer):
        h = f"transformer.h.{i}."
        state.update({
            h + "ln_1.weight": 1.0 + draw(C, scale=0.1), h + "ln_1.bias": draw(C, scale=0.1),
            h + "ln_2.weight": 1.0 + draw(C, scale=0.1), h + "ln_2.bias": draw(C, scale=0.1),
            h + "mlp.c_fc.weight": draw(4 * C, C, scale=1.0 / math.sqrt(C)), h + "mlp.c_fc.bias": draw(4 * C, scale=0.1),
            h + "mlp.c_proj.weight": draw(C, 4 * C, scale=0.5 / math.sqrt(C)), h + "mlp.c_proj.bias": draw(C, scale=0.1),
        })
        for name, value in attention_state(seed + 100 + i, n_head, C).items():
            state[h + "attn." + name] = value
    state["transformer.ln_f.weight"] = 1.0 + draw(C, scale=0.1)
    state["transformer.ln_f.bias"] = draw(C, scale=0.1)
    return state


def test_gpt_with_attention_biases_matches_the_oracle():
    n_layer, n_head, C, vocab, block = 2, 2, 8, 13, 8
    cfg = {"block_size": block, "vocab_size": vocab, "n_layer": n_layer, "n_head": n_head, "n_embd": C, "dropout": 0.0, "bias": True}
    state = gpt_state(27, n_layer, n_head, C, vocab, block)
    gen = torch.Generator().manual_seed(28)
    idx = torch.randint(0, vocab, (2, 6), generator=gen)
    targets = torch.randint(0, vocab, (2, 6), generator=gen)
    got = gpt_forward(cfg, state, idx, targets)
    logits, loss = oracle_gpt(state, idx, targets, n_layer, n_head)
    close(got["logits"], logits, rtol=1e-9, atol=1e-10)
    close(got["loss"], loss, rtol=1e-9, atol=1e-10)

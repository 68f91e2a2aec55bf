"""Tiny, randomly initialised causal LMs and a word-level tokenizer, built offline (ours).

Used on both sides of the bridge: the tests (oracle) build a model from a seed and send its
weights; probes (candidate) rebuild the same architecture and load those weights. Nothing is
downloaded. The models are Hugging Face LlamaForCausalLM / MistralForCausalLM, the layout
of the paper's LLaMA-family models (decoder layers at `model.layers.{i}`, each with an
`input_layernorm`, `self_attn`, `post_attention_layernorm` and `mlp`), scaled down.

Also here: CudaMoves, which lets code written for a GPU run on a CPU-only machine: inside
it, `.to(...)` and `.cuda(...)` of tensors and modules record a move to a CUDA device and
leave the object on the CPU (any other `.to` works as usual).
"""
import json
import os
import tempfile

# lower-cased words of the test prompts and questions, then some filler; anything else is <unk>
WORDS = """
according to the sentence judge emotion is positive or negative statement true false
above a movie review and reflects writer s overall intention for this whether it
task detect sarcasm help me identify sarcastic first we need understand what
form of verbal irony where intended meaning words opposite literal in other speaker
saying one thing but think carefully there any please answer yes no
gripping moving film best year warm funny smart dull lifeless mess plot never comes together
city paris france tokyo japan lima spain oslo norway cairo chile
man tells his cat he loves mondays local weather forecast predicts rain again
scientists discover water wet area completely shocked by news
""".split()
PUNCT = [".", ",", "?", "!", "'", ":", "-"]
SPECIAL = ["<unk>", "<s>", "</s>"]


def vocabulary():
    vocab = {}
    for token in SPECIAL + WORDS + PUNCT:
        vocab.setdefault(token, len(vocab))
    return vocab


def _tokenizer_json(vocab):
    def added(token, index):
        return {"id": index, "content": token, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True}

    bos = {"SpecialToken": {"id": "<s>", "type_id": 0}}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(t, vocab[t]) for t in SPECIAL],
        "normalizer": {"type": "Lowercase"},
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [bos, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [bos, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [vocab["<s>"]], "tokens": ["<s>"]}},
        },
        "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
    }


_TOKENIZER = []


def make_tokenizer():
    """A PreTrainedTokenizerFast (lower-casing, whitespace/punctuation split, <s> prepended), as LLaMA's adds BOS."""
    if _TOKENIZER:
        return _TOKENIZER[0]
    from transformers import PreTrainedTokenizerFast

    folder = tempfile.mkdtemp(prefix="tiny-tokenizer-")
    path = os.path.join(folder, "tokenizer.json")
    with open(path, "w") as f:
        json.dump(_tokenizer_json(vocabulary()), f)
    tok = PreTrainedTokenizerFast(tokenizer_file=path, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                  model_input_names=["input_ids", "attention_mask"])
    _TOKENIZER.append(tok)
    return tok


# name -> (architecture, decoder layers, hidden size, attention heads, key/value heads, MLP size)
SPECS = {
    "llama-3x16": ("llama", 3, 16, 4, 2, 40),
    "llama-4x24": ("llama", 4, 24, 4, 4, 48),
    "mistral-2x16": ("mistral", 2, 16, 4, 2, 32),
}


def _config(spec):
    arch, layers, hidden, heads, kv_heads, mlp = SPECS[spec]
    common = dict(vocab_size=len(vocabulary()), hidden_size=hidden, intermediate_size=mlp,
                  num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                  max_position_embeddings=256, initializer_range=0.2, tie_word_embeddings=False)
    if arch == "llama":
        from transformers import LlamaConfig

        return LlamaConfig(**common)
    from transformers import MistralConfig

    return MistralConfig(sliding_window=64, **common)


def _empty_model(spec):
    from transformers import LlamaForCausalLM, MistralForCausalLM

    config = _config(spec)
    cls = LlamaForCausalLM if SPECS[spec][0] == "llama" else MistralForCausalLM
    return cls(config)


def seeded_weights(spec, seed):
    """Float32 weights of a seeded model of `spec` (norm gains drawn around 1), as a plain dict."""
    import torch

    torch.manual_seed(seed)
    model = _empty_model(spec)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name.endswith("layernorm.weight") or name == "model.norm.weight":
                parameter.copy_(1.0 + 0.5 * torch.randn_like(parameter))
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def model_from_weights(spec, weights):
    """The float32 causal LM of `spec` with `weights` loaded, in eval mode.

    (No bfloat16 model: with oneDNN held to AVX2, as lmr runs every test, torch 1.13 cannot run
    a bfloat16 forward pass on the CPU: 'could not create a primitive descriptor iterator'.)"""
    import torch

    model = _empty_model(spec)
    model.load_state_dict({name: torch.as_tensor(value) for name, value in weights.items()})
    model.eval()
    return model


class CudaMoves:
    """Inside the context, a move of a tensor or module to a CUDA device is recorded in
    `self.moves` as [what, "cuda:N", dtype, shape] (what: "tensor" or "module") and not made;
    every other `.to` call is passed through unchanged."""

    def __enter__(self):
        import torch

        self.moves = []
        self._saved = (torch.Tensor.to, torch.Tensor.cuda, torch.nn.Module.to, torch.nn.Module.cuda)
        tensor_to, _, module_to, _ = self._saved
        moves = self.moves

        def as_device(value):
            if isinstance(value, bool):
                return None
            if isinstance(value, int):
                return torch.device("cuda", value)
            if isinstance(value, (str, torch.device)):
                return torch.device(value)
            return None

        def split(args, kwargs):
            """(device or None, args, kwargs) with the device taken out."""
            if "device" in kwargs:
                rest = dict(kwargs)
                return as_device(rest.pop("device")), args, rest
            if args and as_device(args[0]) is not None:
                return as_device(args[0]), args[1:], kwargs
            return None, args, kwargs

        def name(device):
            return "cuda:%d" % (0 if device.index is None else device.index)

        def record(what, device, obj):
            if isinstance(obj, torch.Tensor):
                moves.append([what, name(device), str(obj.dtype).replace("torch.", ""), list(obj.shape)])
            else:
                moves.append([what, name(device), type(obj).__name__, []])

        def patched_tensor_to(tensor, *args, **kwargs):
            device, rest_args, rest_kwargs = split(args, kwargs)
            if device is None or device.type != "cuda":
                return tensor_to(tensor, *args, **kwargs)
            record("tensor", device, tensor)
            return tensor_to(tensor, *rest_args, **rest_kwargs) if (rest_args or rest_kwargs) else tensor

        def patched_tensor_cuda(tensor, device=None, *args, **kwargs):
            record("tensor", torch.device("cuda") if device is None else as_device(device), tensor)
            return tensor

        def patched_module_to(module, *args, **kwargs):
            device, rest_args, rest_kwargs = split(args, kwargs)
            if device is None or device.type != "cuda":
                return module_to(module, *args, **kwargs)
            record("module", device, module)
            return module_to(module, *rest_args, **rest_kwargs) if (rest_args or rest_kwargs) else module

        def patched_module_cuda(module, device=None):
            record("module", torch.device("cuda") if device is None else as_device(device), module)
            return module

        torch.Tensor.to = patched_tensor_to
        torch.Tensor.cuda = patched_tensor_cuda
        torch.nn.Module.to = patched_module_to
        torch.nn.Module.cuda = patched_module_cuda
        return self

    def __exit__(self, exc_type, exc, tb):
        import torch

        torch.Tensor.to, torch.Tensor.cuda, torch.nn.Module.to, torch.nn.Module.cuda = self._saved
        return False

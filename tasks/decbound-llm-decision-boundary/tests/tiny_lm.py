"""A tiny offline tokenizer and causal language model for the decision-boundary tests
(ours, not upstream code). Nothing is downloaded.

The tokenizer is a real `transformers.PreTrainedTokenizerFast` over a word-level vocabulary
built here (the words of the pipeline's prompts, the label words, digits and punctuation,
each with and without a leading space), so it offers the whole tokenizer interface the
pipeline's code may use. Like Llama 3's tokenizer it puts a begin-of-text token in front of
every encoded text, and its pad token is its end-of-text token (as
load_model_and_tokenizer sets it); it returns input_ids and attention_mask, as a causal
LM's tokenizer does. A word it does not know becomes the unknown token.

The model is a 2-layer BLOOM (`transformers.BloomForCausalLM`) whose weights come from
numpy's RandomState(seed), the same on every torch version. BLOOM's ALiBi attention favours
recent tokens, so the next token after a prompt depends on the query point written near its
end, as a trained model's answer does; a random model with absolute positions hardly looks
at it. Dropout is off and the model is in eval mode, so its outputs are deterministic.
"""
import numpy as np
import torch
import transformers
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors

BOS, EOS, UNK = "<|bos|>", "<|eos|>", "<|unk|>"
# a word with its leading space, one digit (with its space), a run of '#', a newline, any
# other single character (with its space), or a lone space
PATTERN = r" ?[A-Za-z]+| ?[0-9]| ?#+|\n| ?[^A-Za-z0-9#\n ]| "
PROMPT_WORDS = (
    "Given pairs of numbers and their labels predict the label for a new input pair based on "
    "provided data Answer with only one What is this Input Label Instructions Response"
).split()
LABEL_WORDS = (
    "Foo Bar foo bar FOO BAR Food Barn foobar Yes No yes no Nothing Positive Negative positive "
    "negative A B a b"
).split()
PUNCTUATION = list(",.':?!-_")


def vocabulary():
    """The tokens in id order: the three special tokens first (ids 0, 1, 2)."""
    tokens = [BOS, EOS, UNK, "\n", " ", "#", " #", "###", " ###"]
    for word in PROMPT_WORDS + LABEL_WORDS + list("0123456789") + PUNCTUATION:
        tokens += [word, " " + word]
    out = []
    for t in tokens:
        if t not in out:
            out.append(t)
    return out


def make_tokenizer():
    vocab = {t: i for i, t in enumerate(vocabulary())}
    core = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(PATTERN), behavior="isolated")
    core.decoder = decoders.Fuse()
    core.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])])
    # like a causal LM's tokenizer, it returns input_ids and attention_mask only, so that
    # model(**tokenizer(text, return_tensors="pt")) works
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token=BOS, eos_token=EOS, unk_token=UNK,
        model_input_names=["input_ids", "attention_mask"],
    )
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def make_model(seed, scale=2.0, qk_scale=0.1):
    """A 2-layer, 8-head BLOOM of width 32 over the vocabulary above, weights from RandomState(seed)."""
    config = transformers.BloomConfig(
        vocab_size=len(vocabulary()), hidden_size=32, n_layer=2, n_head=8,
        hidden_dropout=0.0, attention_dropout=0.0, tie_word_embeddings=False,
        bos_token_id=0, eos_token_id=1, pad_token_id=1,
    )
    model = transformers.BloomForCausalLM(config)
    rs = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
            noise = torch.from_numpy(rs.standard_normal(tuple(p.shape)).astype(np.float32))
            if name.endswith("weight") and ("layernorm" in name or "ln_f" in name):
                p.copy_(1.0 + 0.1 * noise)
            elif name.endswith("bias"):
                p.copy_(0.1 * noise)
            elif "query_key_value" in name:
                p.copy_(qk_scale * scale * noise)
            else:
                p.copy_(scale * noise)
    return model.eval()

"""The tests' own set-up (ours, not upstream code; it runs only in the tests' process).

The oracle builds the same tiny tokenizer and model as the candidate (tests/tiny_lm.py) to
compute the expected labels, so the Hugging Face libraries are told never to reach the
network here too. The candidate's set-up is tests/candidate_setup.py.
"""
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_NO_ADVISORY_WARNINGS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

"""The tests' own set-up (ours, not upstream code; it runs only in the tests' process).

The property tests load the tiny BERT of tests/tiny_hit.py here too (for the oracle's
embeddings), from a local folder: the Hugging Face libraries are told never to reach the
network. The candidate's set-up is tests/candidate_setup.py.
"""
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

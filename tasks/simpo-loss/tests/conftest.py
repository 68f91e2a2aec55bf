"""Oracle-side set-up for simpo-loss (written for lmr; no upstream code): the candidate's warm-up.

The candidate process imports the workspace when the first request reaches it. Here that
import is the whole Hugging Face stack (scripts/simpo_trainer.py imports transformers, trl,
accelerate and datasets at module level): a few seconds on an idle machine, but more than
the 30 s per-test limit on a loaded one (measured: the first test timed out in fresh runs on
2 cores at a load average of 20, and every later test passed), and all of it would fall
inside the first test's limit. The old tests imported the trainer at collection, outside any
test's limit; this hook keeps it there: once the tests are collected, one probe has the
candidate import the trainer. Its answer decides nothing and is ignored: if the import fails,
it fails again in the first test, which the harness then reports as it should.
"""
from lmr_bridge import CandidateError, probe


@probe
def import_the_trainer():
    """In the candidate: import the module the tests reach (nothing is returned of it)."""
    import simpo_trainer  # noqa: F401

    return True


def pytest_collection_finish(session):
    if not session.items:
        return
    try:
        import_the_trainer()
    except (Exception, CandidateError):
        pass

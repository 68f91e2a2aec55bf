"""Candidate set-up (ours, not upstream code): joblib's process pools off for these tests.

It runs in the candidate process (tests.candidate.setup), before the code under test is
imported; `lmr record` runs it before the generator too.

The upstream fits its per-layer probes with joblib's Parallel(n_jobs=12, backend="loky").
On a 2-core grading machine, starting twelve loky worker processes, each importing pandas
and scikit-learn, takes about 30 s on the first call (measured), more than a test may run.
With JOBLIB_MULTIPROCESSING=0 (read by joblib when it is first imported, which is why it is
set here, before the code under test is imported), joblib has no process backend and runs
such a Parallel in threads of the calling process instead (with a UserWarning). The fits and
their results are the same; only where they run changes. Code that does not use joblib is
not affected.
"""
import os

os.environ["JOBLIB_MULTIPROCESSING"] = "0"

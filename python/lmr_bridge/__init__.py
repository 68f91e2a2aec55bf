"""lmr's bridge between the tests (the trusted *oracle* process) and the code under test
(the untrusted *candidate* process). Grader tests import from here; see oracle.py for the
calls and probes, replay.py for replays of recorded calls, and docs/security.md for what
the split guarantees."""
from .oracle import CandidateError, RemoteError, candidate, probe, probe_helper
from .replay import Recording, Replayer, call_ids
from .ship import ProbeError
from .values import EnumMember, Instance

__all__ = [
    "CandidateError",
    "EnumMember",
    "Instance",
    "ProbeError",
    "Recording",
    "RemoteError",
    "Replayer",
    "call_ids",
    "candidate",
    "probe",
    "probe_helper",
]

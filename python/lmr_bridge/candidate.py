"""Entry point of the candidate process: `python -s -B .../lmr_bridge/candidate.py ARGS` (see server.py)."""
import os
import sys

# the toolkit's python folder, not this package's, is what the candidate imports from
sys.path[0] = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

from lmr_bridge.server import main  # noqa: E402

main()

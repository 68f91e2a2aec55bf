"""lmr record harness: wraps targets, runs a driver, writes calls.json (see __main__.py)."""

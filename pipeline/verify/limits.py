"""Verification limits, importable without the verifier (the CLI states them in ``--help``)."""

DEFAULT_TIME_LIMIT_S = 30.0
"""Wall-clock seconds one package's verification may take (``Options.time_limit_s``); a package
verifies in a few milliseconds, so only one built to be slow reaches it."""

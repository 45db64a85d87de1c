"""Runs: generation, verification and rollouts at scale (``api``), on this machine or on Ray."""

LOCAL = "local"
"""The ``--ray`` value given without an address: a Ray instance on this machine (``ray_cluster``).
Kept here, not in ``ray_cluster``, so the command line can name it without importing ``asyncio``."""

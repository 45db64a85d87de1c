"""Hostile and broken inputs for ``bench/hostile_inputs.py``: one module per area, each with a
``CASES`` list of ``Case``."""

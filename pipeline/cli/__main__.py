"""``python -m pipeline.cli``: the ``synth`` command."""

from pipeline.cli import main

main()

"""Where the realistic corpus lives: ``tests/corpus/``, hand-written labelled packages beside clean
twins, in sets (``truth-3``, ``wrong-agents`` ...). The tests hold the verifier to every case
(``tests/verify/test_verify_corpus.py``); the benchmarks measure it there (``bench/precision.py``,
``bench/corpus_demos.py``, ``bench/verdict_digest.py``)."""

from __future__ import annotations

from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpus"

"""A run whose reader is a model (``runs/reading.py`` in ``BatchRun``): each claim of each verdict
is read once, the answers and their tokens are stored with the attempt, counted in the run's
tokens and in ``catalog stats``, and a resumed run takes them from the catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.store import Catalog
from pipeline.runs.api import start_run
from pipeline.runs.options import RunOptions
from tests.support.openai_server import OpenAIServer


@pytest.mark.slow
def test_a_run_reads_its_claims_with_the_model_and_counts_the_tokens(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        asked.append(body)
        return json.dumps({"answer": "disagrees", "reason": "a person would read it otherwise"})

    path = tmp_path / "c.duckdb"
    with OpenAIServer(respond) as server:
        options = RunOptions(capability="safety", count=6, max_attempts=1, defect_rate=1.0, reader="model",
                             reader_model="judge", reader_base_url=server.base_url)
        summary = start_run(options, path)
    with Catalog.open(path, read_only=True) as catalog:
        stats = catalog.stats()
        calls = catalog.query("SELECT count(*), sum(prompt_tokens) FROM llm_calls WHERE model = 'model:judge'").rows
        notes = catalog.query("SELECT count(*) FROM findings WHERE kind = 'review' "
                              "AND json_extract_string(reading, '$.reader') = 'model:judge'").rows
    confirms = [b for b in asked if b["messages"][0]["content"].startswith("You check one reading")]
    assert confirms and len(confirms) < len(asked), "no claim read, or no package proposed on"
    model = [r for r in stats.readers if r.reader != "rules"]
    assert [(r.reader, r.answer) for r in model] == [("model:judge", "disagrees")]
    # the rules answer only the claims they cannot settle, and the model was not asked about them
    # because a refusal that rests on no reading had settled the package
    assert all(r.answer == "unsure" for r in stats.readers if r.reader == "rules")
    assert model[0].claims == len(confirms) == notes[0][0]
    assert calls[0][0] == len(asked)  # every request, the proposals' too, is stored with its attempt
    assert summary.prompt_tokens == calls[0][1] > model[0].prompt_tokens > 0

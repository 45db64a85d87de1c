"""The claw profile answers every conformance case as ClawEnvKit's mock services do.

The cases (``tests/core/claw_conformance/*.yaml``) hold ClawEnvKit's fixture files and the
status and response their services give to each call; ``bench/claw_conformance.py`` runs the same
cases against their services (docs/benchmarks.md).
"""

from __future__ import annotations

import pytest

from pipeline.core import yaml_text
from pipeline.core.services import catalogue
from pipeline.core.services.claw_fixtures import first_list, to_fixture, to_initial_state
from pipeline.core.world import World
from tests.support.claw_conformance import Case, load_cases, response_matches

CASES = load_cases(yaml_text.load)


def test_every_claw_service_has_cases() -> None:
    assert {c.service for c in CASES} == set(catalogue("claw"))


def test_cases_touch_every_endpoint_of_the_profile() -> None:
    called = {call.endpoint for c in CASES for call in c.calls}
    assert called == {op.endpoint for spec in catalogue("claw").values() for op in spec.operations}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.service}: {c.name}" for c in CASES])
def test_case(case: Case) -> None:
    spec = catalogue("claw")[case.service]
    world = World([case.service], {case.service: to_initial_state(spec, case.fixtures)}, profile="claw")
    for i, call in enumerate(case.calls, start=1):
        result = world.call_endpoint(call.endpoint, call.body)
        assert (result.status, response_matches(call.response, result.body)) == (call.status, True), \
            f"call {i} {call.endpoint} {call.body}: got {result.status} {result.body}"


def test_response_matching_is_a_subset_match() -> None:
    assert response_matches({"a": [1, {"b": "<any>"}]}, {"a": [1.0, {"b": None, "c": 2}], "d": 3})
    assert not response_matches({"a": [1]}, {"a": [1, 2]})
    assert not response_matches({"a": True}, {"a": 1})
    assert not response_matches({"a": "<any>"}, {})


def test_fixture_loader_takes_a_list_a_single_key_or_the_first_list() -> None:
    assert first_list([{"x": 1}]) == [{"x": 1}]
    assert first_list({"only": {"x": 1}}) == [{"x": 1}]
    assert first_list({"meta": "v", "first": [1], "second": [2]}) == [1]
    assert first_list("nonsense") == []


def test_fixtures_round_trip_with_the_loaded_collection_first() -> None:
    rss = catalogue("claw")["rss"]
    state = to_initial_state(rss, {"articles": [{"id": "a1", "source": "S"}], "feeds": [{"id": "f"}]})
    assert state == {"articles": [{"id": "a1", "source": "S", "article_id": "a1"}], "published": []}
    assert list(to_fixture(rss, state)) == ["articles"]
    web = catalogue("claw")["web"]
    raw = {"pages": [{"url": "u"}], "search_results": [{"url": "s"}]}
    assert list(to_fixture(web, to_initial_state(web, raw))) == ["search_results", "pages"]


def test_a_collection_their_service_starts_empty_cannot_be_exported() -> None:
    gmail = catalogue("claw")["gmail"]
    with pytest.raises(ValueError, match="starts sent_messages empty"):
        to_fixture(gmail, {"messages": [], "sent_messages": [{"to": "x"}]})


def test_the_default_profile_keeps_400_and_404() -> None:
    world = World(["todo"], profile="default")
    assert world.call_endpoint("/todo/tasks/create", {}).status == 400
    assert world.call_endpoint("/todo/tasks/get", {"task_id": "nope"}).status == 404

"""Every model refuses a field it does not have (``core/strict_model.py``), and the refusal names
the field and the one that was meant: options, packages and their parts, services, capabilities,
agent actions, verdicts and witnesses, readings, rollouts, imports."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import pipeline as synth
from pipeline.core import strict_model, yaml_text
from pipeline.core.clawenvkit.format import UnmappedCheck
from pipeline.core.episode import ToolCall
from pipeline.core.errors import problems
from pipeline.core.outcomes import Claim, Finding, Reading, Verdict, Witness
from pipeline.core.package import TaskPackage
from pipeline.core.rollouts import Rollout
from pipeline.core.services import SERVICES_DIR, ServiceSpec
from pipeline.core.strict_model import UNKNOWN_FIELD, StrictModel, unknown_field_message
from pipeline.generation.model_reader import parse_proposals
from pipeline.runs.options import RunOptions
from pipeline.runs.rollout_options import RolloutOptions
from pipeline.taxonomy.capabilities import Capability
from tests.conftest import REPO_ROOT, holding_witness

ALLOWED_EXTRA: dict[str, str] = {
    "pipeline.core.package.Provenance": "where a package came from: generators record what they like "
                                        "(a model's name, a prompt's version) beside the fields every one has",
    "pipeline.interop.openenv.SynthState": "OpenEnv's State keeps what an environment adds (its base allows "
                                           "extras): a trainer's client reads the fields it knows",
}
"""The models that keep fields they do not declare, each with its reason."""

PROTOCOL_TYPES = {"pipeline.interop.openenv.SynthAction", "pipeline.interop.openenv.SynthObservation"}
"""Models built on another protocol's base classes (OpenEnv's ``Action`` and ``Observation``, which
forbid unknown fields themselves) rather than on ``StrictModel``."""


def _every_model() -> list[type[BaseModel]]:
    for module in pkgutil.walk_packages(synth.__path__, "pipeline."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
    seen: dict[str, type[BaseModel]] = {}
    stack: list[type[BaseModel]] = [BaseModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("pipeline.") and not inspect.isabstract(sub):
                seen[f"{sub.__module__}.{sub.__qualname__}"] = sub
    return [seen[k] for k in sorted(seen)]


def test_every_model_refuses_unknown_fields_unless_allowed() -> None:
    models = _every_model()
    assert len(models) > 70  # every model of the package, not a few
    for model in models:
        name = f"{model.__module__}.{model.__qualname__}"
        if name in ALLOWED_EXTRA:
            assert model.model_config.get("extra") == "allow", f"{name} is allowed extras it does not keep"
            continue
        assert issubclass(model, StrictModel) or name in PROTOCOL_TYPES, f"{name} is not a StrictModel"
        assert model.model_config.get("extra") == "forbid", f"{name} accepts unknown fields"


def unknown(exc: pytest.ExceptionInfo[ValidationError]) -> list[dict[str, Any]]:
    return [e for e in exc.value.errors() if e["type"] == UNKNOWN_FIELD]


def assert_refused(model: type[BaseModel], data: dict[str, Any], loc: tuple[Any, ...], nearest: str) -> None:
    """Validating ``data`` as ``model`` fails with one unknown-field error at ``loc`` naming the
    field and ``nearest``."""
    with pytest.raises(ValidationError) as exc:
        model.model_validate(data)
    [error] = unknown(exc)
    assert error["loc"] == loc
    assert f"unknown field {loc[-1]!r}" in error["msg"] and f"did you mean {nearest!r}?" in error["msg"]


def test_run_options_name_the_nearest_field() -> None:
    assert_refused(RunOptions, {"capability": "general", "count": 5, "max_attempt": 2}, ("max_attempt",), "max_attempts")
    assert_refused(RolloutOptions, {"model": "m", "sample": 4}, ("sample",), "samples")


def test_run_options_catalog_points_to_start_run_in_one_line() -> None:
    """``RunOptions(catalog=...)`` used to be accepted and ignored: the run went to the default catalog."""
    with pytest.raises(ValidationError) as exc:
        synth.RunOptions(capability="general", count=5, catalog="output/api.duckdb")  # type: ignore[call-arg]
    [error] = unknown(exc)
    assert error["msg"] == ("unknown field 'catalog' of RunOptions; the catalog is start_run's argument: "
                            "start_run(options, catalog=PATH)")
    assert error["msg"] in str(exc.value).splitlines()[2]  # the line under the title and the location
    with pytest.raises(ValidationError, match="start_rollouts\\(options, catalog=PATH\\)"):
        synth.RolloutOptions(model="m", catalog="x.duckdb")  # type: ignore[call-arg]


def test_a_field_nothing_is_near_lists_the_fields() -> None:
    with pytest.raises(ValidationError) as exc:
        synth.RunOptions(capability="general", count=5, colour="red")  # type: ignore[call-arg]
    [error] = unknown(exc)
    assert error["msg"].startswith("unknown field 'colour' of RunOptions; its fields are capability, ")
    assert "max_attempts" in error["msg"]


def test_the_message_prefers_where_a_name_belongs() -> None:
    assert unknown_field_message("kount", "M", ["count"], {"kount": "say count"}) == "unknown field 'kount' of M; say count"
    assert unknown_field_message("kount", "M", ["count"]) == "unknown field 'kount' of M; did you mean 'count'?"


@pytest.mark.parametrize(
    ("edit", "loc", "nearest"),
    [
        (lambda d: d.update(capabilty=d["capability"]), ("capabilty",), "capability"),
        (lambda d: d["request"].update(languge="en"), ("request", "languge"), "language"),
        (lambda d: d["checks"][0].update(valu=1), ("checks", 0, "state_count", "valu"), "value"),
        (lambda d: d["tools"][0].update(paramters={}), ("tools", 0, "paramters"), "parameters"),
        (lambda d: d["reference"][0].update(arg={}), ("reference", 0, "call", "arg"), "args"),
    ],
    ids=["package", "request", "check", "tool", "step"],
)
def test_a_package_part_names_the_nearest_field(todo_doc: dict[str, Any], edit: Any, loc: tuple[Any, ...],
                                                nearest: str) -> None:
    assert todo_doc["checks"][0]["kind"] == "state_count" and "call" in todo_doc["reference"][0]
    edit(todo_doc)
    with pytest.raises(ValidationError) as exc:
        TaskPackage.model_validate(todo_doc)
    first = problems(exc.value)[0]  # what the CLI shows: for a step, each kind it is not has errors too
    assert first["loc"] == loc and first["type"] == UNKNOWN_FIELD
    assert f"did you mean {nearest!r}?" in first["msg"]


def test_a_step_is_tried_as_each_kind_in_order_until_one_accepts_it(todo_doc: dict[str, Any],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A step is tried as a call, a question, an answer, in that order, and is the first kind that
    accepts it: a call step is never also tried (and its unknown fields worded) as the other two."""
    todo_doc["reference"][1:1] = [{"ask": "Which list?"}]
    tried: list[str] = []
    named = strict_model._unknown_fields_named
    monkeypatch.setattr(strict_model, "_unknown_fields_named",
                        lambda model, exc: (tried.append(model.__name__), named(model, exc))[1])
    package = TaskPackage.model_validate(todo_doc)
    kinds = [type(step).__name__ for step in package.reference]
    assert kinds[:2] == ["CallStep", "AskStep"] and kinds[-1] == "AnswerStep"
    order = ["CallStep", "AskStep", "AnswerStep"]
    assert tried == [k for kind in kinds for k in order[:order.index(kind)]]


def test_a_step_no_kind_accepts_has_each_kinds_errors_in_order(todo_doc: dict[str, Any]) -> None:
    """Trying the kinds in order keeps the errors a smart union gives: each kind's, in order."""
    todo_doc["reference"][0] = {"call": "todo_create_task", "answer": "done"}
    with pytest.raises(ValidationError) as exc:
        TaskPackage.model_validate(todo_doc)
    errors = [(e["loc"][2:], e["type"]) for e in exc.value.errors() if e["loc"][:2] == ("reference", 0)]
    assert errors == [(("call", "answer"), UNKNOWN_FIELD),
                      (("ask", "ask"), "missing"), (("ask", "call"), UNKNOWN_FIELD), (("ask", "answer"), UNKNOWN_FIELD),
                      (("answer", "call"), UNKNOWN_FIELD)]


def test_service_and_capability_files_name_the_nearest_field() -> None:
    service = yaml_text.load((SERVICES_DIR / "todo.yaml").read_text(encoding="utf-8"))
    service["operations"][0]["descripton"] = "typo"
    assert_refused(ServiceSpec, service, ("operations", 0, "descripton"), "description")
    capability = yaml_text.load((REPO_ROOT / "capabilities" / "general.yaml").read_text(encoding="utf-8"))
    capability["templates"][0]["servics"] = ["todo"]
    assert_refused(Capability, capability, ("templates", 0, "servics"), "services")


def test_verdicts_witnesses_readings_and_actions_name_the_nearest_field() -> None:
    witness = holding_witness().model_dump(mode="json")
    assert_refused(Witness, {**witness, "treshold": 0.5}, ("treshold",), "threshold")
    finding = {"code": "null_agent_passes", "message": "m", "witness": {**witness, "agnet": "wrong"}}
    assert_refused(Finding, finding, ("witness", "agnet"), "agent")
    assert_refused(Verdict, {"accepted": True, "finding": []}, ("finding",), "findings")
    claim = {"reading": "r", "instead": "i", "alternative": "a", "word": ["x"]}
    assert_refused(Claim, claim, ("word",), "words")
    assert_refused(Reading, {"answer": "agrees", "reasons": "x"}, ("reasons",), "reason")
    assert_refused(ToolCall, {"name": "todo_list_tasks", "argument": {}}, ("argument",), "arguments")


def test_rollouts_and_imports_name_the_nearest_field() -> None:
    rollout = {"package_id": "pkg-1", "model": "m", "sample": 0, "score": 1.0, "checks": [],
               "finish_reason": "answer", "prompt_token": 3}
    assert_refused(Rollout, rollout, ("prompt_token",), "prompt_tokens")
    unmapped = UnmappedCheck.model_fields
    data = {k: "x" for k, f in unmapped.items() if f.is_required()}
    assert_refused(UnmappedCheck, {**data, "reasn": "x"}, ("reasn",), "reason")


def test_a_model_readers_reply_is_read_leniently() -> None:
    """A model's reply is not a user's file: a proposal with a key of the model's own is kept."""
    reply = '{"proposals": [{"value": 3, "instead_of": 2, "confidence": 0.9}, "not an object"]}'
    [proposal] = parse_proposals(reply)
    assert (proposal.value, proposal.instead_of) == (3, 2)


def test_a_package_file_with_a_typo_is_one_line_naming_the_field(tmp_path: Path, todo_doc: dict[str, Any],
                                                                 synth: Any) -> None:
    import json

    todo_doc["checks"][0]["valu"] = todo_doc["checks"][0].pop("value")
    path = tmp_path / "package.json"
    path.write_text(json.dumps(todo_doc))
    result = synth("play", path)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "checks.0.state_count.valu: unknown field 'valu' of StateCount; did you mean 'value'?" in result.stderr
    verify = synth("verify", path, "--json")
    assert verify.exit_code == 1
    assert "unknown field 'valu' of StateCount; did you mean 'value'?" in verify.stdout

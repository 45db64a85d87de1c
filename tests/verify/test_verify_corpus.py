"""The defect corpus: for every reason code, a hand-written defective package that raises exactly
that code, next to its clean twin that is accepted."""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.episode import play_actions
from pipeline.core.grading import Grader
from pipeline.core.outcomes import Verdict
from pipeline.core.package import load_package
from pipeline.core.world import World
from pipeline.verify.dedup import MemoryDedup
from pipeline.verify.verifier import Options, verify_package
from tests.conftest import EXAMPLES_DIR as EXAMPLES  # noqa: E402
from tests.support.corpus import CORPUS_DIR

Data = dict[str, Any]


def example(name: str) -> Data:
    return json.loads((EXAMPLES / f"{name}.json").read_text())


def kb_package(beyond: bool) -> Data:
    """A question answered from a KB article; ``beyond`` puts the answer past character 1,000."""
    filler = "Remote access needs the company laptop and a hardware token. " * 18
    fact = "The gateway for remote access is vpn-gw-7.corp.example on port 1194."
    body = filler + fact if beyond else fact + " " + filler
    return {
        "capability": "general", "workflow": "answer-from-article", "difficulty": "easy",
        "services": ["kb"],
        "request": {"text": "Which VPN gateway should I use for remote access? Check the knowledge base."},
        "initial_state": {"kb": {"articles": [
            {"id": "kb-001", "title": "Remote access setup", "body": body, "category": "it",
             "tags": ["vpn"], "status": "published", "author": "IT", "updated_at": "2026-11-01T00:00:00Z"},
        ]}},
        "tools": [{"name": "kb_search_articles", "service": "kb", "endpoint": "/kb/articles/search",
                   "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                                  "required": ["query"]}}],
        "checks": [{"id": "gateway", "kind": "answer_contains", "weight": 1.0, "values": ["vpn-gw-7.corp.example"]}],
        "reference": [{"call": "kb_search_articles", "args": {"query": "remote access"}},
                      {"answer": "Use vpn-gw-7.corp.example (port 1194)."}],
    }


def set_(path: str, value: Any) -> Callable[[Data], None]:
    def apply(d: Data) -> None:
        *head, last = path.split(".")
        cur: Any = d
        for part in head:
            cur = cur[int(part)] if part.isdigit() else cur[part]
        cur[int(last) if last.isdigit() else last] = value
    return apply


def with_checks(checks: list[Data]) -> Callable[[Data], None]:
    return set_("checks", checks)


def contacts_reference_error(d: Data) -> None:
    d["reference"].insert(0, {"call": "contacts_send_message", "args": {}})
    d["reference"][2]["args"]["contact_id"]["$ref"] = "steps[1].result.contacts[0].id"


def contacts_evidence(d: Data) -> None:
    """A long phone note first in every record pushes the id the reference reads past 1,000 chars."""
    records = d["initial_state"]["contacts"]["contacts"]
    for i, rec in enumerate(records):
        records[i] = {"phone": "Office line, ask reception. " * 40 + rec["phone"],
                      **{k: v for k, v in rec.items() if k != "phone"}}


def contacts_checks(message: float, others: float, answer: float, *extra: Data) -> Callable[[Data], None]:
    """The contacts example's checks with other weights (and extra checks)."""
    return with_checks([
        {"id": "message", "kind": "state_count", "weight": message, "collection": "contacts.messages",
         "where": {"contact_id": "c-102", "message": {"$regex": "budget review.*friday"}}, "op": "==", "value": 1,
         "ignore_case": True},
        {"id": "no-others", "kind": "state_count", "weight": others, "collection": "contacts.messages",
         "where": {"contact_id": {"$ne": "c-102"}}, "op": "==", "value": 0},
        {"id": "confirmed", "kind": "answer_contains", "weight": answer, "values": ["Omar Haddad"]},
        *extra])


# code → (clean twin, edit that makes it defective)
CORPUS: dict[Code, tuple[str, Callable[[Data], None]]] = {
    Code.SCHEMA_INVALID: ("todo-three-items", set_("checks.0.kind", "state_cnt")),
    Code.UNKNOWN_ENDPOINT: ("contacts-send-message", set_("tools.1.endpoint", "/contacts/send")),
    Code.UNKNOWN_TOOL: ("contacts-send-message", set_("reference.1.call", "contacts_send_msg")),
    Code.TOOL_SCHEMA_MISMATCH: ("contacts-send-message", set_("tools.1.parameters.properties.contact_id.type", "integer")),
    Code.DANGLING_REFERENCE: ("contacts-send-message", set_("checks.0.where.contact_id", {"$in": ["c-102", "c-404"]})),
    Code.WEIGHTS_INVALID: ("todo-three-items", set_("checks.4.weight", 0.3)),
    Code.JUDGE_OVERWEIGHT: ("contacts-send-message", contacts_checks(
        0.5, 0.1, 0.1, {"id": "tone", "kind": "judge", "weight": 0.3, "rubric": "The message is polite."})),
    Code.SAFETY_CONTRADICTION: ("contacts-send-message", set_("safety", [{"kind": "not_called", "tool": "contacts_send_message"}])),
    Code.HIDDEN_FACT_LEAKED: ("multi-turn-schedule-meeting",
                              set_("request.text", "Set up a 30-minute sync with Maya from design on 2026-12-03.")),
    Code.REQUEST_CHECK_MISMATCH: ("todo-three-items", set_(
        "request.text", "Add four high-priority todo items due 2026-12-10: book the venue, order the banners, "
                        "and send the invites.")),
    Code.REFERENCE_ERROR: ("contacts-send-message", contacts_reference_error),
    Code.REFERENCE_NOT_FULL_SCORE: ("contacts-send-message", set_("reference.2.answer", "Done.")),
    Code.NULL_AGENT_PASSES: ("contacts-send-message", contacts_checks(0.5, 0.3, 0.2)),  # "no others" is free: 0.3, above the floor
    Code.GRADER_UNDERCONSTRAINED: ("todo-three-items", with_checks([  # priority and due date never graded
        {"id": "items", "kind": "state_count", "weight": 0.5, "collection": "todo.tasks", "scope": "created",
         "op": "==", "value": 3, "distinct_by": ["title"]},
        {"id": "no-more", "kind": "state_count", "weight": 0.3, "collection": "todo.tasks", "scope": "created",
         "op": "==", "value": 3},
        {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["venue", "banners", "invites"]}])),
    Code.GRADER_COUNTS_CALLS: ("todo-three-items", with_checks([
        {"id": "creates", "kind": "called", "weight": 0.8, "tool": "todo_create_task",
         "args_match": {"priority": "high", "due_date": "2026-12-10",
                        "title": {"$regex": "(?i)venue|banners|invites"}}, "min": 3},
        {"id": "confirmed", "kind": "answer_contains", "weight": 0.2, "values": ["venue", "banners", "invites"]}])),
    Code.CLARIFICATION_UNNECESSARY: ("multi-turn-schedule-meeting", set_(
        "checks.0.where", {"attendees": {"$contains": "maya.patel@corp.example"}, "duration_minutes": 30})),
    Code.EVIDENCE_TRUNCATED: ("contacts-send-message", contacts_evidence),
}


def _clean(name: str) -> Data:
    d = example(name)
    d.pop("id", None)
    return d


@pytest.mark.parametrize("code", list(CORPUS), ids=lambda c: c.value)
def test_defect_raises_exactly_its_code_and_clean_twin_is_accepted(code: Code) -> None:
    """Each defect refuses its package with exactly its code (an SFT loss when the SFT policy is
    required; a review note, the package accepted, for a code of basis review), and every refusal
    of a witnessed code carries a witness that holds on replay."""
    name, edit = CORPUS[code]
    clean = _clean(name)
    options = Options(require_sft=BASIS[code] is Basis.TRAINING)
    assert verify_package(copy.deepcopy(clean), options).codes == []
    broken = copy.deepcopy(clean)
    edit(broken)
    verdict = verify_package(broken, options)
    if BASIS[code] is Basis.REVIEW:
        assert verdict.accepted and verdict.review_codes == [code.value], [f.message for f in verdict.review]
        return
    assert verdict.codes == [code.value], [f.message for f in verdict.findings]
    assert not verdict.accepted
    assert_witnesses_replay(broken, verdict)


def assert_witnesses_replay(data: Data, verdict: Verdict) -> None:
    """Every refusal of a witnessed code has a witness that holds, and replaying its actions in a
    fresh episode gives the score it records."""
    witnessed = [f for f in verdict.findings if f.basis is Basis.WITNESSED]
    package = load_package(data) if witnessed else None
    for f in witnessed:
        if package is not None:
            assert f.witness is not None and f.witness.holds, f.message
            replayed = Grader(package).value(play_actions(package, f.witness.actions))
            assert replayed == pytest.approx(f.witness.score), f.message


REALISTIC_CASES = sorted(CORPUS_DIR.rglob("*.json"))
CORPUS_OPTIONS = Options()


@pytest.mark.parametrize("path", REALISTIC_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_realistic_corpus_case(path: Path) -> None:
    """Each realistic case of ``tests/corpus``: a defective package is rejected with its code, a
    clean one is accepted (``bench/defects.py`` prints the same per family). The cases are about
    the environment, so the ClawEnvKit export stage is off (``CORPUS_OPTIONS``): hand-written claw
    cases use forms their format cannot carry (``tests/verify/test_exportable.py`` has the stage)."""
    case = json.loads(path.read_text())
    verdict = verify_package(case["package"], CORPUS_OPTIONS)
    if case["defect"] is None:
        assert verdict.accepted, [f.message for f in verdict.findings]
        if "sft_ready" in case:
            assert verdict.sft_ready == case["sft_ready"], [f.message for f in verdict.sft]
        return
    wanted = {case["defect"]} if isinstance(case["defect"], str) else set(case["defect"])
    if wanted == {Code.EVIDENCE_TRUNCATED.value}:  # about the training export: the package is no SFT sample
        assert not verdict.sft_ready, [f.message for f in verdict.findings]
    elif all(BASIS[Code(c)] is Basis.REVIEW for c in wanted):  # no score depends on it: a review note
        assert wanted & set(verdict.review_codes), [f.message for f in verdict.findings]
    else:
        assert not verdict.accepted and wanted & set(verdict.codes), [f.message for f in verdict.findings]
    assert_witnesses_replay(case["package"], verdict)


def test_every_code_is_in_the_corpus() -> None:
    defects = [json.loads(p.read_text())["defect"] for p in REALISTIC_CASES]
    in_bench = {code for d in defects if d for code in ([d] if isinstance(d, str) else d)}
    covered = {c.value for c in CORPUS} | in_bench | {Code.NONDETERMINISTIC.value, Code.DUPLICATE_PACKAGE.value,
                                                         Code.VERIFICATION_TIMEOUT.value,  # test_limits.py
                                                         Code.NOT_EXPORTABLE.value}  # test_exportable.py
    assert covered == {c.value for c in Code}


def test_nondeterministic_world_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A world whose clock leaks wall time makes two reference runs differ."""
    clean = _clean("todo-three-items")
    assert verify_package(copy.deepcopy(clean)).accepted
    monkeypatch.setattr(World, "_clock", lambda self: f"{time.perf_counter_ns()}")
    assert verify_package(clean).codes == [Code.NONDETERMINISTIC.value]


def test_duplicates_exact_and_near() -> None:
    index = MemoryDedup()
    first = load_package(_clean("todo-three-items")).with_id()
    assert verify_package(first, dedup=index).accepted
    index.add(first)
    assert verify_package(first, dedup=index).codes == [Code.DUPLICATE_PACKAGE.value]
    near = _clean("todo-three-items")
    near["checks"][4]["id"] = "answer-names-items"  # other id, same request and state
    near["request"]["text"] = near["request"]["text"].upper()
    verdict = verify_package(near, dedup=index)
    assert verdict.codes == [Code.DUPLICATE_PACKAGE.value]
    assert verdict.findings[0].detail["duplicate_of"] == first.id
    other = _clean("contacts-send-message")
    assert verify_package(other, dedup=index).accepted


def test_mission_defects() -> None:
    """The two real defects the product exists to catch, applied to clean packages."""
    d = _clean("contacts-send-message")
    d["tools"][1]["endpoint"] = "/contacts/send"
    verdict = verify_package(d)
    assert verdict.codes == ["unknown_endpoint"]
    assert "/contacts/send_message" in verdict.findings[0].message
    d = _clean("todo-three-items")
    d["checks"][0].update(op=">=", value=2)
    assert "grader_underconstrained" in verify_package(d).codes


def test_a_reference_that_never_asks_and_still_passes_is_unnecessary_clarification() -> None:
    """Without its question, a reference that writes the day itself passes: the witness is that
    reference; one that cannot resolve the fact fails, so its reading is only a review note."""
    d = _clean("multi-turn-schedule-meeting")
    del d["reference"][1]
    d["reference"][1]["args"]["start"] = "2026-12-03T10:00"
    verdict = verify_package(d)
    finding = next(f for f in verdict.findings if f.code == "clarification_unnecessary")
    assert finding.witness is not None and finding.witness.holds and not any(
        a["type"] == "ask" for a in finding.witness.actions)
    d = _clean("multi-turn-schedule-meeting")
    del d["reference"][1]
    verdict = verify_package(d)
    assert "reference_error" in verdict.codes and "clarification_unnecessary" in verdict.review_codes


def test_evidence_policy_is_configurable() -> None:
    """Evidence lost under the SFT policy marks a package not sft_ready; it refuses only when the
    policy is required."""
    late = kb_package(beyond=True)
    verdict = verify_package(copy.deepcopy(late))
    assert verdict.accepted and not verdict.sft_ready and {f.code for f in verdict.sft} == {"evidence_truncated"}
    assert verify_package(copy.deepcopy(late), Options(require_sft=True)).codes == ["evidence_truncated"]
    assert verify_package(copy.deepcopy(late), Options(obs_limit=5000)).sft_ready
    assert verify_package(kb_package(beyond=False)).sft_ready
    small = verify_package(copy.deepcopy(late), Options(obs_limit=5000, sample_budget=500))
    assert small.accepted and not small.sft_ready


def test_stale_id_is_recomputed_and_noted() -> None:
    d = _clean("todo-three-items")
    d["id"] = "pkg-0000000000000000"
    verdict = verify_package(d)
    assert verdict.accepted
    assert verdict.id == load_package(d).compute_id() != "pkg-0000000000000000"
    assert "recomputed" in verdict.notes[0]


def _eleven_seats(d: Data) -> None:
    d["user"]["facts"].append({"key": "seats", "value": "11", "reveal_when": ["seats"]})
    d["request"]["text"] = "Set up a 30-minute sync with Maya from design next week (I am out until 2026-11-30)."


def _fault_never_fires(d: Data) -> None:
    d["faults"] = [{"tool": "contacts_search", "on_call": 5, "status": 503}]


def _contacts_behind_filler(d: Data) -> None:
    """Twenty colleagues listed before Omar, whose id the reference then writes literally."""
    people = [{"id": f"c-{1300 + n}", "name": f"Colleague {n}", "department": "Ops", "email": f"p{n}@corp.example",
               "title": "Analyst", "phone": "+1-555-0100"} for n in range(20)]
    omar = {**d["initial_state"]["contacts"]["contacts"][1], "id": "c-130"}
    d["initial_state"]["contacts"]["contacts"] = [*people, omar]
    d["tools"][0] = {"name": "contacts_list", "service": "contacts", "endpoint": "/contacts/list",
                     "parameters": {"type": "object", "properties": {"department": {"type": "string"}}}}
    d["reference"][0] = {"call": "contacts_list", "args": {}}
    d["reference"][1]["args"]["contact_id"] = "c-130"
    d["checks"][0]["where"]["contact_id"] = "c-130"
    d["checks"][1]["where"]["contact_id"] = {"$ne": "c-130"}


@pytest.mark.parametrize("name, edit, codes", [
    ("multi-turn-schedule-meeting", set_("request.text", "Set up a 30-minute sync with Maya from design on Thursday, "
                                         "December 3rd."), ["hidden_fact_leaked"]),
    ("multi-turn-schedule-meeting", _eleven_seats, None),  # "11" is not leaked by "2026-11-30"
    ("todo-three-items", set_("request.text", "Add three high-priority todo items due 2026-12-10 for the 40 guests: "
                              "book the venue, order the banners, and send the invites."), []),
    ("todo-three-items", set_("request.text", "Add three high-priority todo items due 2026-12-10, in 2 weeks: book "
                              "the venue, order the banners, and send the invites."), []),
    ("contacts-send-message", _fault_never_fires, ["reference_error"]),
    ("contacts-send-message", set_("checks.0.op", ">="), ["grader_counts_calls"]),  # two messages pass as one
    ("contacts-send-message", set_("reference.1.args.contact_id", {"$ref": "steps[a].result"}),
     ["dangling_reference", "reference_error", "reference_not_full_score"]),
    ("contacts-send-message", set_("reference.1.args.contact_id", {"$ref": 3}), ["schema_invalid"]),
])
def test_review_cases(name: str, edit: Callable[[Data], None], codes: list[str] | None) -> None:
    """Cases found by adversarial review: paraphrased facts, unit numbers, faults that never fire,
    repeated creates, evidence behind a long list, malformed references (a verdict, never a crash)."""
    d = _clean(name)
    edit(d)
    verdict = verify_package(d)
    if codes is None:  # the edit must not be read as a leak; other findings may follow from it
        assert "hidden_fact_leaked" not in verdict.codes
    else:
        assert verdict.codes == codes, [f.message for f in verdict.findings]


def test_evidence_behind_a_long_list_is_an_sft_loss() -> None:
    d = _clean("contacts-send-message")
    _contacts_behind_filler(d)
    verdict = verify_package(d)
    assert verdict.accepted and {f.code for f in verdict.sft} == {"evidence_truncated"}


def test_a_reference_that_obeys_a_planted_instruction_is_rejected() -> None:
    """The supplier email carries an instruction to write to an outside address; a package whose
    reference does so (and whose checks reward it) contradicts the request."""
    from pipeline.generation.offline import generate_package

    clean = generate_package("safety", "supplier-email-injection", 7, 2)
    assert verify_package(clean).accepted
    data = clean.model_dump(mode="json")
    planted = next(e for rec in data["initial_state"]["gmail"]["messages"]
                   for e in re.findall(r"[\w.+-]+@secure-verify\.example", rec.get("body", "")))
    data["safety"] = [r for r in data["safety"] if r["kind"] != "not_called"]
    data["reference"].insert(-1, {"call": "gmail_send", "args": {"to": planted, "subject": "Stock", "body": "Done."}})
    verdict = verify_package(copy.deepcopy(data))  # nothing rewards the send: a reading no witness proves
    assert any(f.code == "request_check_mismatch" and planted in f.message for f in verdict.review)
    for check in data["checks"]:
        check["weight"] = round(check["weight"] * 0.7, 4)
    data["checks"][0]["weight"] += round(0.7 - sum(c["weight"] for c in data["checks"]), 4)
    data["checks"].append({"id": "obeyed", "kind": "state_count", "weight": 0.3, "collection": "gmail.sent",
                           "where": {"to": planted}, "op": "==", "value": 1})
    verdict = verify_package(data)
    finding = next(f for f in verdict.findings if f.code == "request_check_mismatch" and planted in f.message)
    assert finding.witness is not None and finding.witness.agent == "correct" and finding.witness.holds


@pytest.mark.parametrize(("items", "refused"), [(1, True), (2, False), (6, False)])
def test_skipping_one_write_of_several_must_lose_score_the_only_one_much(items: int, refused: bool) -> None:
    """Each item weighs 0.1 and the answer the rest, so an agent that skips one item keeps 0.9:
    refused for one item (the only write skipped leaves none of the work done: it must lose much),
    not for two or six (one write of several skipped must lose score, and does)."""
    data = _clean("todo-three-items")
    titles = ["Book the venue", "Order the banners", "Send the invites", "Print the badges", "Hire the band",
              "Brief the caterers"][:items]
    data["request"]["text"] = f"Add these high-priority todo items due 2026-12-10: {', '.join(titles)}."
    data["reference"] = [{"call": "todo_create_task", "args": {"title": t, "priority": "high", "due_date": "2026-12-10"}}
                         for t in titles] + [{"answer": f"Added {len(titles)} items: {', '.join(titles)}."}]
    with_checks([{"id": f"item-{n}", "kind": "state_count", "weight": 0.1, "collection": "todo.tasks",
                  "scope": "created", "where": {"title": t, "priority": "high", "due_date": "2026-12-10"},
                  "op": "==", "value": 1} for n, t in enumerate(titles)]
                + [{"id": "confirmed", "kind": "answer_contains", "weight": round(1 - 0.1 * items, 6),
                    "values": [t.split()[-1] for t in titles]}])(data)
    verdict = verify_package(data)
    dropped = [f for f in verdict.findings if f.witness is not None and f.witness.name == "drop_write"]
    assert bool(dropped) is refused, [f.message for f in verdict.findings]
    assert all(f.witness.score == pytest.approx(0.9) for f in dropped)


@pytest.mark.parametrize(("free", "refused"), [(0.25, False), (0.3, True)])
def test_doing_nothing_is_refused_only_above_the_floor(free: float, refused: bool) -> None:
    """Design: doing nothing "scores above a floor" (0.25) refuses; at the floor it does not."""
    data = _clean("contacts-send-message")
    contacts_checks(round(0.8 - free, 6), free, 0.2)(data)
    verdict = verify_package(data)
    assert (Code.NULL_AGENT_PASSES.value in verdict.codes) is refused, [f.message for f in verdict.findings]


@pytest.mark.parametrize(("each", "refused"), [(0.25, False), (0.2, True)])
def test_dropping_the_only_write_is_refused_only_above_the_grave_ceiling(each: float, refused: bool) -> None:
    """Dropping the only create leaves none of the work done, so it must score at most 0.75
    (``GRAVE_CEILING``): 0.75 itself is not refused (the run fails the full-marks line all the
    same), 0.8 is."""
    data = _clean("todo-three-items")
    data["request"]["text"] = "Add a high-priority todo item due 2026-12-10: Book the venue."
    data["reference"] = [{"call": "todo_create_task", "args": {"title": "Book the venue", "priority": "high",
                                                               "due_date": "2026-12-10"}},
                         {"answer": "Added the item: Book the venue."}]
    with_checks([{"id": "item", "kind": "state_count", "weight": each, "collection": "todo.tasks",
                  "scope": "created", "where": {"title": "Book the venue", "priority": "high", "due_date": "2026-12-10"},
                  "op": "==", "value": 1},
                 {"id": "confirmed", "kind": "answer_contains", "weight": round(1 - each, 6), "values": ["venue"]}])(data)
    verdict = verify_package(data)
    dropped = [f for f in verdict.findings if f.witness is not None and f.witness.name == "drop_write"]
    assert bool(dropped) is refused, [f.message for f in verdict.findings]

"""Claims and readers (``verify/claims.py``, ``verify/readers.py``, ``generation/model_reader.py``,
``runs/reading.py``): a refusal resting on a reading of the request carries a claim, and refuses
only when the reader agrees; the answers are stored in the catalog, reused, counted, and shown."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pipeline.catalog.store import Catalog
from pipeline.core.codes import Code
from pipeline.core.outcomes import Proposal, Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.model_client import ModelClient
from pipeline.generation.model_reader import ModelReader, parse_reply, reader_messages
from pipeline.runs.reading import make_reader
from pipeline.verify.claims import rests_on_reading
from pipeline.verify.readers import ReadingCache, RulesReader, ScriptedReader, reader_calls
from pipeline.verify.verifier import verify_package
from tests.conftest import CliResult
from tests.support.corpus import CORPUS_DIR
from tests.support.openai_server import OpenAIServer

# A refusal that rests on reading the request (a formula), and one that does not (calls counted).
READ_CASE = CORPUS_DIR / "truth-3" / "address-from-record-fernhill-banner-quote.defective.json"
UNKNOWN_CASE = CORPUS_DIR / "grounding" / "unknown-contact-priya.defective.json"
# Five refusals, each resting on the same stated formula read for another item.
FORMULA_CASE = CORPUS_DIR / "truth-3" / "computed-value-leeds-reorder-formula.defective.json"


def package_of(path: Path) -> TaskPackage:
    return TaskPackage.model_validate(json.loads(path.read_text(encoding="utf-8"))["package"])


def counts_calls_package() -> TaskPackage:
    """A corpus package refused as grader_counts_calls (a mechanism, no reading of words)."""
    for path in sorted(CORPUS_DIR.glob("*/*.defective.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case.get("defect") == "grader_counts_calls":
            return TaskPackage.model_validate(case["package"])
    raise AssertionError("the corpus has no grader_counts_calls case")


def claimed(verdict: Verdict) -> list[Any]:
    return [f for f in verdict.findings + verdict.review if f.claim is not None]


def test_a_reading_refusal_carries_a_claim_made_of_the_request_words() -> None:
    package = package_of(READ_CASE)
    verdict = verify_package(package)
    assert not verdict.accepted
    found = claimed(verdict)
    assert found and all(f in verdict.findings for f in found)
    for f in found:
        assert f.reading is None  # no reader asked: the rules' reading stands
        assert f.claim.words and all(w in package.request.text for w in f.claim.words)
        assert f"{f.witness.score:.2f}" in f.claim.instead
        assert f.claim.reading != f.claim.alternative


def test_a_mechanical_refusal_has_no_claim_and_no_reader_is_asked() -> None:
    package = counts_calls_package()
    reader = ScriptedReader(default="disagrees")
    verdict = verify_package(package, reader=reader)
    assert Code.GRADER_COUNTS_CALLS.value in verdict.codes  # a reader that disagrees with every reading
    twice = [f for f in verdict.findings if f.witness is not None and f.witness.name == "everything_twice"]
    assert twice and not any(rests_on_reading(f) or f.claim is not None for f in twice)


@pytest.mark.parametrize("answer", ["disagrees", "unsure"])
def test_a_reader_that_does_not_agree_turns_the_refusal_into_a_review_note(answer: str) -> None:
    package = package_of(UNKNOWN_CASE)
    rules = verify_package(package)
    assert Code.UNKNOWN_ENTITY.value in rules.codes
    reader = ScriptedReader(default=answer)  # type: ignore[arg-type]
    verdict = verify_package(package, reader=reader)
    assert Code.UNKNOWN_ENTITY.value not in verdict.codes
    notes = [f for f in verdict.review if f.code is Code.UNKNOWN_ENTITY]
    assert notes and all(f.reading is not None and f.reading.answer == answer and f.claim is not None for f in notes)
    assert len(reader.asked) == len([f for f in rules.findings if f.claim is not None])
    only_readings = all(f.claim is not None for f in rules.findings)
    assert verdict.accepted == only_readings


def test_a_reader_that_agrees_keeps_the_refusal_with_its_answer() -> None:
    package = package_of(UNKNOWN_CASE)
    verdict = verify_package(package, reader=ScriptedReader(default="agrees"))
    found = [f for f in verdict.findings if f.code is Code.UNKNOWN_ENTITY]
    assert found and all(f.reading is not None and f.reading.answer == "agrees" for f in found)
    assert verify_package(package, reader=RulesReader()).codes == verify_package(package).codes


def test_answers_by_claim_key_and_the_cache_asks_each_claim_once() -> None:
    package = package_of(FORMULA_CASE)
    rules = verify_package(package)
    keys = [f.claim.key for f in rules.findings if f.claim is not None]
    assert len(keys) >= 3 and all(f.claim is not None for f in rules.findings)
    reader = ScriptedReader({keys[0]: "disagrees"}, default="agrees")
    cache = ReadingCache()
    first = verify_package(package, reader=reader, cache=cache)
    answers = {f.claim.key: f.reading.answer if f.reading else None for f in claimed(first)}
    assert answers[keys[0]] == "disagrees" and answers[keys[1]] == "agrees"
    assert [answers[k] for k in keys[2:]] == [None] * len(keys[2:])  # refused already: not asked
    assert len(reader.asked) == 2 and not first.accepted
    again = verify_package(package, reader=reader, cache=cache)
    assert len(reader.asked) == 2  # every answer came from the cache
    assert all(f.reading is None or f.reading.cached for f in claimed(again))
    assert again.codes == first.codes and again.accepted == first.accepted


def test_a_refusal_that_rests_on_no_reading_settles_the_verdict_without_a_question() -> None:
    package = package_of(READ_CASE)
    rules = verify_package(package)
    assert any(f.claim is None for f in rules.findings) and any(f.claim is not None for f in rules.findings)
    reader = ScriptedReader(default="disagrees")
    verdict = verify_package(package, reader=reader)
    assert reader.asked == [] and verdict.codes == rules.codes


def reply_with(answer: str, seen: list[dict[str, Any]]) -> Callable[[dict[str, Any]], str]:
    def respond(body: dict[str, Any]) -> str:
        seen.append(body)
        return json.dumps({"answer": answer, "reason": "the request says to report missing people"})
    return respond


def test_the_model_reader_sends_the_claim_and_reads_the_answer() -> None:
    package = package_of(UNKNOWN_CASE)
    seen: list[dict[str, Any]] = []
    with OpenAIServer(reply_with("disagrees", seen)) as server:
        reader = ModelReader(ModelClient("reader-model", server.base_url, "test-key-123456"))
        verdict = verify_package(package, reader=reader)
        reader.client.close()
    assert Code.UNKNOWN_ENTITY.value not in verdict.codes
    note = next(f for f in verdict.review if f.code is Code.UNKNOWN_ENTITY)
    assert note.reading is not None and note.reading.reader == "model:reader-model"
    assert note.reading.prompt_tokens > 0 and note.reading.reason.startswith("the request says")
    prompt = seen[0]["messages"][0]["content"]
    assert package.request.text in prompt and note.claim is not None and note.claim.reading in prompt
    assert note.claim.alternative in prompt
    assert seen[0]["response_format"] == {"type": "json_object"} and seen[0]["temperature"] == 0.0
    calls = reader_calls(verdict)
    assert calls and calls[0].model == "model:reader-model" and calls[0].prompt_tokens == note.reading.prompt_tokens


@pytest.mark.parametrize("reply", ["not json", '{"answer": "maybe"}', "[1, 2]"])
def test_a_reply_naming_no_answer_is_unsure(reply: str) -> None:
    assert parse_reply(reply)[0] == "unsure"


def test_the_reader_prompt_is_small_beside_a_generation_prompt() -> None:
    from pipeline.generation.base import Attempt
    from pipeline.generation.offline import pick_template
    from pipeline.generation.prompting import messages_for
    from pipeline.taxonomy.capabilities import taxonomy

    package = package_of(READ_CASE)
    claim = next(f.claim for f in verify_package(package).findings if f.claim is not None)
    reader = sum(len(m["content"]) for m in reader_messages(claim, package.request.text))
    attempt = Attempt(capability="general", template=pick_template("general", 0), seed=7, slot=0, attempt=1)
    generation = sum(len(str(m["content"])) for m in messages_for(attempt, taxonomy()))
    assert reader < 0.25 * generation


def test_make_reader_choices() -> None:
    assert isinstance(make_reader("auto"), RulesReader)
    assert isinstance(make_reader("rules", generator_model="m", generator_base_url="http://127.0.0.1:9/v1"),
                      RulesReader)
    auto = make_reader("auto", generator_model="gen", generator_base_url="http://127.0.0.1:9/v1")
    assert isinstance(auto, ModelReader) and auto.name == "model:gen"
    other = make_reader("auto", reader_model="judge", reader_base_url="http://127.0.0.1:9/v1",
                        generator_model="gen", generator_base_url="http://127.0.0.1:8/v1")
    assert isinstance(other, ModelReader) and other.name == "model:judge"


def test_catalog_keeps_answers_as_a_cache_and_counts_them(tmp_path: Path) -> None:
    package = package_of(UNKNOWN_CASE)
    verdict = verify_package(package, reader=ScriptedReader(default="disagrees", name="model:m"))
    with Catalog.open(tmp_path / "c.duckdb") as catalog:
        run = catalog.start_run("r", "offline")
        catalog.record(run, 0, 1, package.with_id(), verdict)
        stored = catalog.readings("model:m")
        stats = catalog.stats()
        claims = catalog.claims()
        shown = catalog.show(verdict.id)[0]
    assert {(pid, key) for pid, key, _ in stored} == {(verdict.id, f.claim.key) for f in claimed(verdict)}
    assert [(r.reader, r.answer, r.claims) for r in stats.readers] == [("model:m", "disagrees", len(stored))]
    assert claims and all(c.kind == "review" and c.reading is not None for c in claims)
    assert any(f.claim is not None and f.reading is not None for f in shown.findings)
    cache = ReadingCache(stored)
    reader = ScriptedReader(default="agrees", name="model:m")
    again = verify_package(package, reader=reader, cache=cache)
    assert not reader.asked and again.accepted == verdict.accepted


def test_verify_command_with_a_model_reader(synth: Callable[..., CliResult]) -> None:
    seen: list[dict[str, Any]] = []
    with OpenAIServer(reply_with("disagrees", seen)) as server:
        result = synth("verify", UNKNOWN_CASE.parent / "unknown-contact-priya.defective.json", "--json",
                       "--reader-model", "reader-model", "--reader-base-url", server.base_url)
    assert seen, result.stdout
    verdict = json.loads(result.stdout.splitlines()[0])
    notes = [f for f in verdict["review"] if f["code"] == "unknown_entity"]
    assert notes and notes[0]["reading"]["answer"] == "disagrees" and notes[0]["claim"]["words"]


def test_verify_command_shows_the_claim_and_refuses_a_bad_reader(synth: Callable[..., CliResult],
                                                                  tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(package_of(UNKNOWN_CASE).to_json(), encoding="utf-8")
    result = synth("verify", path)
    assert result.exit_code == 1 and "read: The request names someone or something that no record holds: an agent that" in result.stdout and "reader: rules" in result.stdout
    bad = synth("verify", path, "--reader", "oracle")
    assert bad.exit_code == 2 and "--reader 'oracle'" in bad.stderr and "Traceback" not in bad.stderr


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "todo-three-items.json"


def test_a_proposal_refuses_only_when_a_correct_agent_doing_it_loses_score() -> None:
    package = TaskPackage.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    request = package.request.text
    graded = Proposal(value="2026-12-11", instead_of="2026-12-10", tool="todo_create_task", reason="the 11th")
    ungraded = Proposal(value="high", instead_of="nothing the reference writes", reason="no such value")
    reader = ScriptedReader(name="model:m", proposals={request: [graded, ungraded]})
    verdict = verify_package(package, reader=reader)
    assert verdict.codes == [Code.REQUEST_CHECK_MISMATCH.value]
    (finding,) = verdict.findings
    assert finding.witness is not None and finding.witness.name == "reader_proposal" and finding.witness.holds
    assert finding.claim is not None and "2026-12-11" in finding.claim.reading
    assert finding.reading is not None and finding.reading.reader == "model:m"
    assert any("2026-12-11" in json.dumps(a) for a in finding.witness.actions)
    quiet = ScriptedReader(name="model:m", proposals={request: [ungraded]})
    assert verify_package(package, reader=quiet).accepted


def _escalated(required: bool) -> TaskPackage:
    """An article published and tagged ``vip-escalation``, a word its body uses though the request
    asks for nothing but publishing it (and, when ``required``, a check rewards the tag): no rule
    reads that as wrong, a reader may."""
    from tests.verify.builders import package as build
    article = {"id": "kb-9", "title": "Xero sync failures", "body": "Steps to re-authorise the Xero sync. Customers "
               "who hit it are handled as a vip-escalation.", "category": "Billing", "tags": ["billing"],
               "status": "draft", "author": "kb-team", "updated_at": "2026-11-20T09:00:00Z"}
    checks = [{"id": "live", "kind": "state_match", "weight": 0.8 if required else 1.0, "collection": "kb.articles",
               "record_id": "kb-9", "expect": {"status": "published"}}]
    if required:
        checks.append({"id": "tagged", "kind": "state_match", "weight": 0.2, "collection": "kb.articles",
                       "record_id": "kb-9", "expect": {"tags": {"$contains": "vip-escalation"}}})
    return TaskPackage.model_validate(build(
        "publish the xero sync article, nothing else", {"kb": {"articles": [article]}},
        ["kb_search_articles", "kb_update_article"], checks,
        [{"call": "kb_search_articles", "args": {"query": "xero"}},
         {"call": "kb_update_article", "args": {"article_id": "kb-9", "status": "published",
                                                "tags": ["billing", "vip-escalation"]}},
         {"answer": "Published kb-9."}]))


def test_a_proposal_of_list_items_drops_them_from_the_writes() -> None:
    """The reader proposes the planted tag away (``[]`` instead of ``["vip-escalation"]``): the
    agent without it loses the check that rewards it, so the package is refused."""
    dropped = Proposal(value=[], instead_of=["vip-escalation"], tool="kb_update_article", reason="nothing else")
    rewarded = _escalated(required=True)
    verdict = verify_package(rewarded, reader=ScriptedReader(name="model:m",
                                                             proposals={rewarded.request.text: [dropped]}))
    found = [f for f in verdict.findings if f.witness is not None and f.witness.name == "reader_proposal"]
    assert len(found) == 1 and found[0].witness.holds, verdict.findings
    (write,) = [a for a in found[0].witness.actions if a.get("name") == "kb_update_article"]
    assert write["arguments"]["tags"] == ["billing"]
    unrewarded = _escalated(required=False)
    assert verify_package(unrewarded, reader=ScriptedReader(
        name="model:m", proposals={unrewarded.request.text: [dropped]})).accepted


def test_the_model_reader_proposes_from_the_reference_actions() -> None:
    package = TaskPackage.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any]) -> str:
        seen.append(body)
        return json.dumps({"proposals": [{"value": "2026-12-11", "instead_of": "2026-12-10",
                                          "tool": "todo_create_task", "reason": "the request says the 11th"}]})

    with OpenAIServer(respond) as server:
        reader = ModelReader(ModelClient("m", server.base_url, "test-key-123456"))
        verdict = verify_package(package, reader=reader)
        reader.client.close()
    prompt = seen[0]["messages"][0]["content"]
    assert package.request.text in prompt and "todo_create_task" in prompt and "Book the venue" in prompt
    assert verdict.codes == [Code.REQUEST_CHECK_MISMATCH.value]
    assert verdict.reader_calls and verdict.reader_calls[0].model == "model:m"
    assert reader_calls(verdict) == verdict.reader_calls  # the proposal's request is the only one spent


def test_the_rules_do_not_vouch_for_a_reading_of_a_request_in_another_language() -> None:
    package = package_of(UNKNOWN_CASE)
    german = package.model_copy(update={"request": package.request.model_copy(update={"language": "de"})})
    verdict = verify_package(german)
    assert Code.UNKNOWN_ENTITY.value not in verdict.codes
    notes = [f for f in verdict.review if f.code is Code.UNKNOWN_ENTITY]
    assert notes and all(f.reading is not None and f.reading.answer == "unsure" for f in notes)
    assert any("'de'" in note and "English" in note for note in verdict.notes)
    confirmed = verify_package(german, reader=ScriptedReader(default="agrees", name="model:m"))
    assert Code.UNKNOWN_ENTITY.value in confirmed.codes  # a model that reads German confirms it
    assert all(f.reading is not None and f.reading.reader == "model:m" for f in confirmed.findings if f.claim)


def test_verify_play_and_catalog_show_say_the_english_readings_did_not_apply(
        synth: Callable[..., CliResult], tmp_path: Path, empty_catalog: Path) -> None:
    """A request in German passes with a note saying the rules' English readings did not apply,
    wherever the package is shown: ``synth verify``, ``synth play`` and ``synth catalog show``."""
    package = package_of(UNKNOWN_CASE)
    german = package.model_copy(update={"request": package.request.model_copy(update={"language": "de"})}).with_id()
    path = tmp_path / "de.json"
    path.write_text(german.to_json(), encoding="utf-8")
    note = "note: the request is in 'de': the rules read English words only"
    verified = synth("verify", path)
    assert verified.exit_code == 0 and note in verified.stdout
    played = synth("play", path)
    assert played.exit_code == 0 and note in played.stdout
    assert any("English words only" in n for n in json.loads(synth("play", path, "--json").stdout)["notes"])
    with Catalog.open(empty_catalog) as catalog:
        catalog.record(catalog.start_run("de", "hand"), 0, 1, german, verify_package(german))
    shown = synth("catalog", "show", german.id, "--catalog", empty_catalog)
    assert shown.exit_code == 0 and note in shown.stdout
    [row] = json.loads(synth("catalog", "show", german.id, "--catalog", empty_catalog, "--json").stdout)
    assert row["notes"] and row["notes"][0].startswith("the request is in 'de'")
    english = tmp_path / "en.json"
    english.write_text(package.with_id().to_json(), encoding="utf-8")
    assert "English words only" not in synth("play", english).stdout + synth("verify", english).stdout


def test_verify_v_traces_each_reading_of_the_request_on_stderr(synth: Callable[..., CliResult], tmp_path: Path) -> None:
    """A wrong reading is traceable: ``-v`` shows what the rules read (the name no record holds), the
    claim resting on it and, for a request the rules cannot read, the reader's answer."""
    quiet = synth("verify", UNKNOWN_CASE)
    assert "debug:" not in quiet.stderr
    result = synth("verify", "-v", UNKNOWN_CASE)
    assert result.stdout == quiet.stdout  # the verdicts are the same
    lines = result.stderr.splitlines()
    assert all(line.startswith("debug: pipeline.verify.") for line in lines)
    assert any(line.startswith("debug: pipeline.verify.entities: ") and "['Priya Nair'] no record holds" in line
               for line in lines)
    assert any("pipeline.verify.claims: unknown_entity (correct agent reports_missing) rests on reading ['Priya Nair']" in line
               for line in lines)
    package = package_of(UNKNOWN_CASE)
    german = tmp_path / "de.json"
    german.write_text(package.model_copy(update={"request": package.request.model_copy(update={"language": "de"})})
                      .to_json(), encoding="utf-8")
    read = synth("verify", "-v", german).stderr
    assert "debug: pipeline.verify.readers: rules on unknown_entity ['Priya Nair']: unsure" in read
    assert logging.getLogger("pipeline.verify").level == logging.NOTSET  # taken back after the command
    assert "debug:" not in synth("verify", UNKNOWN_CASE).stderr


def test_play_witness_shows_the_claim_of_the_finding_it_replays(synth: Callable[..., CliResult],
                                                                  tmp_path: Path) -> None:
    package = package_of(UNKNOWN_CASE)
    path, verdicts = tmp_path / "p.json", tmp_path / "v.json"
    path.write_text(package.to_json(), encoding="utf-8")
    verdicts.write_text(verify_package(package).model_dump_json(), encoding="utf-8")
    result = synth("play", path, "--witness", verdicts)
    assert result.exit_code == 0, result.stderr
    assert "read: The request names someone or something that no record holds" in result.stdout
    assert "checks: The checks give that agent" in result.stdout and "reader: rules" in result.stdout


def test_a_leaked_fact_is_claimed_as_readable_so_agreeing_refuses() -> None:
    """For a fact readable without asking, the reader is asked whether the agent that never asks has
    what it needs (agreeing confirms the leak), not whether that agent is wrong."""
    package = package_of(CORPUS_DIR / "grounding" / "hidden-day-in-email.defective.json")
    leaks = [f for f in verify_package(package).findings if f.code is Code.HIDDEN_FACT_LEAKED and f.claim]
    assert leaks and all("not hidden" in f.claim.reading and "whether the fact can be read" in f.claim.reading
                         and "only the user can give it" in f.claim.alternative for f in leaks)
    assert Code.HIDDEN_FACT_LEAKED.value in verify_package(package, reader=ScriptedReader(default="agrees")).codes


def test_a_value_stated_nowhere_is_claimed_as_unknowable_so_agreeing_refuses() -> None:
    """For a value the checks require that nothing gives ("fix the price" with no price), the reader
    is asked whether the agent could know it, not whether the agent writing another value is right
    (a careful reader says that agent is wrong too, which had accepted the package)."""
    package = package_of(CORPUS_DIR / "grounding" / "ungrounded-invoice-due-date.defective.json")
    stated_nowhere = [f for f in verify_package(package).findings
                      if f.code is Code.UNGROUNDED_VALUE and f.claim and f.detail.get("kind")]
    assert stated_nowhere
    for f in stated_nowhere:
        value = repr(f.detail["value"])
        assert f"gives {value}, which the checks require" in f.claim.reading and "could not know it" in f.claim.reading
        assert f"does give {value}" in f.claim.alternative and ": nothing it can read" not in f.claim.reading
    assert Code.UNGROUNDED_VALUE.value in verify_package(package, reader=ScriptedReader(default="agrees")).codes


def test_a_contradicted_text_is_claimed_as_dictated_so_agreeing_refuses() -> None:
    """For a text a wrong agent rewrites, the reader is asked whether the request dictates what it
    says (text it does not dictate is the agent's to write), not whether that agent is careful:
    disagreeing makes the finding a review note."""
    package = package_of(CORPUS_DIR / "truth-3" / "undictated-text-csv-export-timeout.defective.json")
    (finding,) = [f for f in verify_package(package).findings if f.witness and f.witness.name == "contradict_text"]
    (field,) = finding.detail["value"]
    assert f"the request dictates what the {field} of step {finding.step} must say" in finding.claim.reading
    assert f"does not dictate what the {field} says" in finding.claim.alternative
    assert Code.GRADER_UNDERCONSTRAINED.value in verify_package(package, reader=ScriptedReader(default="agrees")).codes
    verdict = verify_package(package, reader=ScriptedReader(default="disagrees"))
    assert verdict.accepted and [f.witness.name for f in verdict.review if f.witness] == ["contradict_text"]


def test_the_records_a_claim_names_come_before_those_only_the_witness_touches() -> None:
    """A witness that writes to eight items, with a claim about the sixth: the reader is shown the
    sixth item first, then the others up to the limit."""
    from pipeline.verify.claims import MAX_RECORDS, named_records

    items = [{"id": f"sku-00{i}", "name": f"Item {i}", "quantity": i, "reorder_level": 10} for i in range(1, 9)]
    package = TaskPackage.model_validate({
        "capability": "general", "workflow": "restock", "services": ["inventory"],
        "request": {"text": "Restock the low items."}, "initial_state": {"inventory": {"items": items}},
        "tools": [{"name": "inventory_create_order", "service": "inventory", "endpoint": "/inventory/create_order"}],
        "checks": [{"id": "any", "kind": "state_count", "collection": "inventory.orders", "op": ">=", "value": 1}],
    })
    actions = [{"type": "call", "name": "inventory_create_order", "arguments": {"item_id": r["id"], "quantity": 5}}
               for r in items]
    shown = named_records(package, "step 6 writes quantity = 30 for sku-006", actions)
    assert [r["id"] for r in shown][0] == "sku-006"
    assert len(shown) == MAX_RECORDS and [r["id"] for r in shown][1:] == [f"sku-00{i}" for i in range(1, MAX_RECORDS)]


def test_a_note_of_a_few_lines_reaches_the_reader_whole() -> None:
    """A claim that nothing gives a value needs the whole note the agent read: a note of five jobs
    (some 300 characters) is shown whole; a text past ``MAX_FIELD_CHARS`` is cut, marked "…"."""
    from pipeline.verify.claims import MAX_FIELD_CHARS, named_records

    jobs = "Winter jobs, boathouse:\n" + "\n".join(f"{n}. Re-varnish paddle rack number {n} and log it" for n in range(1, 7))
    notes = [{"id": "note-001", "title": "Boathouse winter jobs", "body": jobs},
             {"id": "note-002", "title": "Long minutes", "body": "x" * (MAX_FIELD_CHARS + 50)}]
    package = TaskPackage.model_validate({
        "capability": "general", "workflow": "todos", "services": ["notes"],
        "request": {"text": "Make a todo for each job in my note."}, "initial_state": {"notes": {"notes": notes}},
        "tools": [{"name": "notes_get_note", "service": "notes", "endpoint": "/notes/get"}],
        "checks": [{"id": "any", "kind": "state_count", "collection": "notes.notes", "op": ">=", "value": 1}],
    })
    shown = named_records(package, "nothing gives 'high': note-001, note-002", [])
    assert shown[0]["body"] == jobs and len(jobs) > 250
    assert shown[1]["body"].endswith("…") and len(shown[1]["body"]) == MAX_FIELD_CHARS + 1


def test_a_claim_shows_the_reader_what_the_user_answers_when_asked() -> None:
    path = sorted((CORPUS_DIR / "truth-4-leak").glob("*.defective.json"))[0]
    package = package_of(path)
    assert package.user is not None and package.user.facts
    claim = next(f.claim for f in verify_package(package).findings if f.claim is not None)
    assert claim.user_answers == [f"{f.key}: {f.value}" for f in package.user.facts]
    [message] = reader_messages(claim, package.request.text)
    assert "# What the user answers when the agent asks" in message["content"]
    assert all(f"- {line}" in message["content"] for line in claim.user_answers)
    without = reader_messages(claim.model_copy(update={"user_answers": []}), package.request.text)
    assert "What the user answers" not in without[0]["content"]


def test_a_proposal_of_a_figure_inside_a_message_rewrites_the_message() -> None:
    """The reader reads the total a reminder carries as 2,780, not the 3,930 the body writes: the
    agent writing that body with 2,780 fails the check on 3,930, so the package is refused."""
    from tests.verify.test_request_readings_dates_counts_totals import _reminder
    reminder = TaskPackage.model_validate(_reminder("Send Saltmarsh Studios a friendly reminder with the total "
                                                    "they still owe."))
    proposal = Proposal(value="GBP 2,780.00", instead_of="GBP 3,930.00", tool="gmail_send", reason="the dispute")
    verdict = verify_package(reminder, reader=ScriptedReader(name="model:m",
                                                             proposals={reminder.request.text: [proposal]}))
    (found,) = [f for f in verdict.findings if f.witness is not None and f.witness.name == "reader_proposal"]
    (send,) = [a for a in found.witness.actions if a.get("name") == "gmail_send"]
    assert found.witness.holds and "GBP 2,780.00 is outstanding" in send["arguments"]["body"]


@pytest.mark.parametrize(("text", "turned"), [
    ("A reminder that GBP 3,930.00 is outstanding.", "A reminder that GBP 2,780.00 is outstanding."),
    ("Owed: 13,930.00 in all", "Owed: 13,930.00 in all"),  # inside a longer number: not the figure
])
def test_a_figure_is_replaced_in_a_text_only_as_a_whole(text: str, turned: str) -> None:
    from pipeline.verify.proposals import _in_place
    old, new = ("GBP 3,930.00", "GBP 2,780.00") if "GBP" in text else ("3,930.00", "2,780.00")
    assert _in_place(text, old, new) == turned


def test_a_proposal_of_a_write_the_reference_leaves_out_adds_that_call() -> None:
    """A reader that reads the request to ask for one more item proposes the call's arguments with
    nothing in their place: the correct agent makes it too, before its answer, and the exact count
    the checks want fails it. A proposed call of a tool that only reads proves nothing."""
    package = TaskPackage.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    request = package.request.text
    fourth = Proposal(value={"title": "Print the badges", "priority": "high", "due_date": "2026-12-10"},
                      instead_of=None, tool="todo_create_task", reason="a fourth item")
    verdict = verify_package(package, reader=ScriptedReader(name="model:m", proposals={request: [fourth]}))
    (finding,) = verdict.findings
    assert finding.code is Code.REQUEST_CHECK_MISMATCH and finding.witness is not None and finding.witness.holds
    calls = [a for a in finding.witness.actions if a["type"] == "tool_call"]
    assert [c["arguments"]["title"] for c in calls][-1] == "Print the badges" and len(calls) == 4
    assert finding.witness.actions[-1]["type"] == "answer"
    read = Proposal(value={"status": "open"}, instead_of=None, tool="todo_list_tasks", reason="look first")
    assert verify_package(package, reader=ScriptedReader(name="model:m", proposals={request: [read]})).accepted


@pytest.mark.parametrize("value", [None, "no invites task: the request does not ask for one"])
def test_a_proposal_of_a_write_the_request_does_not_ask_for_drops_that_call(value: Any) -> None:
    """A reader that reads the request to ask for one item fewer names the call's arguments with
    nothing (or words saying it is not done) in their place: the correct agent leaves that write
    out, and the exact count the checks want fails it. Arguments no write carries prove nothing."""
    package = TaskPackage.model_validate_json(EXAMPLE.read_text(encoding="utf-8"))
    request = package.request.text
    fewer = Proposal(value=value, instead_of={"title": "Send the invites"}, tool="todo_create_task", reason="two")
    verdict = verify_package(package, reader=ScriptedReader(name="model:m", proposals={request: [fewer]}))
    (finding,) = verdict.findings
    assert finding.code is Code.REQUEST_CHECK_MISMATCH and finding.witness is not None and finding.witness.holds
    titles = [a["arguments"]["title"] for a in finding.witness.actions if a["type"] == "tool_call"]
    assert titles == ["Book the venue", "Order the banners"]
    nowhere = Proposal(value=None, instead_of={"title": "Hire a band"}, tool="todo_create_task", reason="none")
    assert verify_package(package, reader=ScriptedReader(name="model:m", proposals={request: [nowhere]})).accepted

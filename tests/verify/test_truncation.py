"""Evidence under the SFT truncation policy (pipeline/verify/truncation.py): a figure the
answer states is kept by a group of records wholly before the cut, lost when every group that
totals to it reaches past it; each loss names the step and the records, and is an SFT loss (not a
refusal) unless the policy is required."""

from __future__ import annotations

from pipeline.core.codes import Code
from pipeline.verify.verifier import Options, verify_package
from tests.verify.builders import Data, messages, package, verify


def _invoice(i: str, customer: str, amount: float, status: str = "unpaid",
             description: str = "Retainer") -> Data:
    return {"id": i, "customer": customer, "customer_email": "ap@x.example", "description": description, "amount": amount,
            "currency": "EUR", "due_date": "2026-12-20", "status": status, "issued_at": "2026-10-01"}


FILLER = [_invoice(f"inv-1{n:02d}", f"Filler Co {n}", 1000.0 + n, "paid",
                   "Quarterly maintenance contract for the north site, billed in arrears") for n in range(8)]
HARWICK = [_invoice("inv-001", "Harwick", 100.0), _invoice("inv-002", "Harwick", 70.0)]
OAKRIDGE = [_invoice("inv-201", "Oakridge", 120.0), _invoice("inv-202", "Oakridge", 50.0)]  # the same total


def _owed(invoices: list[Data], answer: str = "Harwick owes 170.00 EUR.") -> Data:
    return package("How much does Harwick owe in unpaid invoices?", {"finance": {"invoices": invoices}},
                   ["finance_list_invoices"],
                   [{"id": "owed", "kind": "answer_matches", "weight": 1.0,  # the one figure: no hedge passes
                     "pattern": "^[^0-9]*170\\.00[^0-9]*$"}],
                   [{"call": "finance_list_invoices", "args": {}}, {"answer": answer}])


def test_a_group_before_the_cut_keeps_the_figure() -> None:
    """Another customer's invoices past the cut total the same: the Harwick ones before it keep it."""
    verdict = verify(_owed(HARWICK + FILLER + OAKRIDGE))
    assert verdict.accepted and verdict.sft_ready, messages(verdict)


def test_a_total_whose_records_lie_past_the_cut_is_lost_and_named() -> None:
    doc = _owed(FILLER + HARWICK)
    verdict = verify(doc)
    assert verdict.accepted and not verdict.sft_ready
    (loss,) = verdict.sft
    assert loss.code is Code.EVIDENCE_TRUNCATED and loss.step == 0
    assert loss.detail == {"total": 170.0, "records": ["inv-001", "inv-002"], "beyond": ["inv-001", "inv-002"]}
    assert loss.message == ("the answer's 170 is the total or count of 2 records of step 0's observation, and 2 of them "
                            "(inv-001, inv-002) lie beyond character 1,000")
    required = verify_package(doc, Options(require_sft=True))
    assert required.codes == ["evidence_truncated"] and required.findings == [loss]


def test_a_value_past_the_cut_names_the_record_and_the_step() -> None:
    verdict = verify(_owed(FILLER + HARWICK, "Harwick owes 170.00 EUR (inv-001, inv-002)."))
    assert not verdict.sft_ready
    values = [f for f in verdict.sft if "value" in f.detail]
    assert [(f.step, f.detail) for f in values] == [
        (0, {"value": "inv-001", "record": "inv-001", "field": "id"}),
        (0, {"value": "inv-002", "record": "inv-002", "field": "id"})]
    assert values[0].message == ("the answer depends on 'inv-001', which only record inv-001 (id) shows, beyond "
                                 "character 1,000 of step 0's observation")


def test_a_longer_observation_limit_keeps_everything() -> None:
    verdict = verify_package(_owed(FILLER + HARWICK), Options(obs_limit=5000))
    assert verdict.accepted and verdict.sft_ready, messages(verdict)


def _expo(filler: int) -> Data:
    """A claw exhibitor page fetched whole (``web_fetch`` answers with the page itself) whose
    registration deadline follows ``filler`` characters of programme text."""
    from pipeline.generation.tools import catalogue_tool

    content = ("The programme spans three halls of robotics vendors and university labs. " * (filler // 74 + 1))[:filler]
    content += " Exhibitor registration closes on 2027-02-14."
    return {
        "capability": "general", "workflow": "hand-built", "services": ["web"], "service_profile": "claw",
        "request": {"text": "Look up the Nordic Robotics Expo exhibitor page and tell me the last day we can register."},
        "initial_state": {"web": {"search_results": [], "pages": [
            {"url": "https://nre.example/exhibit", "title": "Exhibit at NRE 2027", "content": content,
             "content_type": "text/html", "status_code": 200, "error": None}]}},
        "tools": [catalogue_tool("web_fetch", "claw").model_dump(mode="json")],
        "checks": [{"id": "deadline", "kind": "answer_matches", "weight": 1.0,
                    "pattern": "2027-02-14|14 Feb(ruary)? 2027|Feb(ruary)? 14,? 2027"}],
        "reference": [{"call": "web_fetch", "args": {"url": "https://nre.example/exhibit"}},
                      {"answer": "Exhibitor registration closes on 2027-02-14."}]}


def test_a_value_past_the_cut_of_a_page_fetched_whole_is_lost() -> None:
    """The page is one record answered whole: the deadline at character ~2,700 of its content is
    cut away, though the content field begins before the cut."""
    verdict = verify(_expo(2600))
    lost = [f for f in verdict.sft if f.code is Code.EVIDENCE_TRUNCATED]
    assert lost and lost[0].detail["field"] == "content" and not verdict.sft_ready, messages(verdict)
    kept = verify(_expo(300))
    assert kept.sft_ready and kept.accepted, messages(kept)


def test_a_code_of_digit_groups_past_the_cut_is_lost() -> None:
    """A door code "48-19-07" is one value, not the numbers 48, 19 and 7 (which the text before the
    cut may hold for other reasons): where the page gives it past the cut, the answer's evidence is lost."""
    doc = _expo(2600)
    page = doc["initial_state"]["web"]["pages"][0]
    page["content"] = "Gate 48 opens at 19:00 on 7 December. " + page["content"].replace(
        "Exhibitor registration closes on 2027-02-14.", "The new side-door code is 48-19-07.")
    doc["request"]["text"] = "Look up the Nordic Robotics Expo exhibitor page and tell me the new side-door code."
    doc["checks"] = [{"id": "code", "kind": "answer_matches", "weight": 1.0, "pattern": "48-19-07"}]
    doc["reference"][-1] = {"answer": "The new side-door code is 48-19-07."}
    verdict = verify(doc)
    assert any(f.code is Code.EVIDENCE_TRUNCATED and "48-19-07" in f.message for f in verdict.sft), messages(verdict)


def test_a_two_character_code_past_the_cut_is_lost() -> None:
    """A berth "7B" (a digit and a letter) that a page gives past the cut, graded with boundaries the
    pattern captures ("(^|[^0-9A-Za-z])7B"): the answer's evidence is lost; before the cut it is kept."""
    def berth(filler: int) -> Data:
        doc = _expo(filler)
        page = doc["initial_state"]["web"]["pages"][0]
        page["content"] = page["content"].replace("Exhibitor registration closes on 2027-02-14.", "Your stand: hall 7B.")
        doc["request"]["text"] = "Look up the Nordic Robotics Expo exhibitor page and tell me which hall our stand is in."
        doc["checks"] = [{"id": "hall", "kind": "answer_matches", "weight": 1.0, "pattern": "(^|[^0-9A-Za-z])7B($|[^0-9A-Za-z])"}]
        doc["reference"][-1] = {"answer": "Your stand is in hall 7B"}
        return doc
    lost = verify(berth(2600))
    assert any(f.code is Code.EVIDENCE_TRUNCATED and "'7B'" in f.message for f in lost.sft), messages(lost)
    kept = verify(berth(300))
    assert kept.sft_ready and kept.accepted, messages(kept)


def _booth(request: str) -> Data:
    """A booking of 120 minutes where the one event of 120 minutes lies past the cut."""
    events = [{"id": f"evt-{n:03d}", "title": f"Workshop session {n}", "start": f"2026-12-{n + 2:02d}T13:00",
               "duration_minutes": 60, "attendees": [], "location": "Bench room",
               "description": "Long-standing weekly bench session, bring your own tools and aprons",
               "created_at": "2026-11-01T09:00:00Z"} for n in range(1, 9)]
    events.append({"id": "evt-100", "title": "Varnish cure", "start": "2026-12-01T08:00", "duration_minutes": 120,
                   "attendees": [], "location": "Spray booth", "description": "", "created_at": "2026-11-01T09:00:00Z"})
    return package(request, {"calendar": {"events": events}}, ["calendar_list_events", "calendar_create_event"],
                   [{"id": "booked", "kind": "state_count", "weight": 1.0, "collection": "calendar.events",
                     "scope": "created", "where": {"start": "2026-12-08T09:00", "duration_minutes": 120}, "op": "==",
                     "value": 1}],
                   [{"call": "calendar_list_events", "args": {}},
                    {"call": "calendar_create_event", "args": {"title": "Spray booth", "start": "2026-12-08T09:00",
                                                               "duration_minutes": 120, "location": "Spray booth"}},
                    {"answer": "Booked the spray booth on Tuesday 8 December at 09:00."}])


def test_a_length_the_request_states_in_words_depends_on_no_record_past_the_cut() -> None:
    """"for two hours" tells the 120 minutes; a record past the cut holding 120 takes nothing away."""
    told = verify(_booth("Book the spray booth for two hours on 2026-12-08 at 09:00."))
    assert not [f for f in told.sft if f.code is Code.EVIDENCE_TRUNCATED], messages(told)


def test_a_code_of_letters_and_digit_groups_is_one_answer_value() -> None:
    """"The licence reference is NLD-2026-44718": one value the answer states, not two."""
    from pipeline.verify.truncation import _ANSWER_VALUES
    assert [m.group(0) for m in _ANSWER_VALUES.finditer("The licence reference is NLD-2026-44718; todo-004.")] == [
        "NLD-2026-44718", "todo-004"]

"""Data patterns run on RE2: linear time, the common look-arounds rewritten, the rest refused."""

from __future__ import annotations

import pytest
import re2

from pipeline.core import patterns
from pipeline.core.patterns import PatternError, compile_pattern
from pipeline.verify.verifier import verify_package


def test_catastrophic_patterns_answer_at_once() -> None:
    assert not compile_pattern(r"(a+)+$").search("a" * 5000 + "!")
    assert not compile_pattern(r"^(\w+\s?)*$").search("Book the venue " + "aaaaaaaaaa " * 3000 + "!")


@pytest.mark.parametrize(("pattern", "text", "found"), [
    (r"(?s)^(?=.*trunk)(?=.*native).*allowed", "Trunk port,\nnative VLAN, allowed list", True),
    (r"(?s)^(?=.*trunk)(?=.*native).*allowed", "trunk port, allowed list", False),
    (r"^(?=[\s\S]*\bsigned\b)(?![\s\S]*\bnot signed\b)", "The contract is signed.", True),
    (r"^(?=[\s\S]*\bsigned\b)(?![\s\S]*\bnot signed\b)", "It is not signed yet, signed soon", False),
    (r"(?<![\d.])72(?!\d)", "order 72 units", True),
    (r"(?<![\d.])72(?!\d)", "order 172 units", False),
    (r"(?<![\d.])72(?!\d)", "version 1.72", False),
    (r"(?<!\w)Omar(?!\w)", "Omar", True),
])
def test_supported_look_arounds_mean_what_they_say(pattern: str, text: str, found: bool) -> None:
    assert compile_pattern(pattern, ignore_case=True).search(text) is found


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?<!not )approved", r"x(?=y)", r"(?<=\$)\d+"])
def test_other_look_arounds_and_back_references_are_refused_with_advice(pattern: str) -> None:
    with pytest.raises(PatternError, match="RE2 cannot run .* linear time"):
        compile_pattern(pattern)


def test_fullmatch_needs_the_whole_text() -> None:
    assert compile_pattern(r"1,?284\.50?").fullmatch("1,284.50")
    assert not compile_pattern(r"\b5\b").fullmatch("15927.5")


def test_a_package_with_a_pattern_re2_cannot_run_is_schema_invalid(example_doc) -> None:
    doc = example_doc("todo-three-items")
    doc["checks"][0]["where"] = {"title": {"$regex": r"(venue)\1"}}
    verdict = verify_package(doc)
    assert verdict.codes == ["schema_invalid"] and "RE2 cannot run" in verdict.findings[0].message


def test_a_catastrophic_pattern_in_a_package_is_just_a_failing_check(example_doc) -> None:
    doc = example_doc("todo-three-items")
    doc["checks"][0]["weight"] = round(doc["checks"][0]["weight"] - 0.1, 6)
    doc["checks"].append({"id": "bomb", "kind": "answer_matches", "weight": 0.1, "pattern": "(a+)+$"})
    doc["reference"][-1]["answer"] += " " + "a" * 60 + "!"
    verdict = verify_package(doc)
    assert "reference_not_full_score" in verdict.codes and "bomb" in verdict.findings[0].message


PLAIN = [r"rotate\ the\ API\ keys", r"Weekly\ sync\ with\ Ivan_2\ \(x\)\ a\-b", "Room Granite", r"5,\ 750\.00", "K"]
TEXTS = ["Please ROTATE the api keys", "rotate the API keys", "weekly SYNC with ivan_2 (x) a-b!", "room granite",
         "ROOM GRANITE", "5, 750.00", "\u212a", "k", "Ünïcode ROTATE THE API KEYS", "ſ rotate", "", "\udc80 room granite"]


@pytest.mark.parametrize("ignore_case", [False, True])
def test_plain_text_patterns_find_what_re2_finds(ignore_case: bool) -> None:
    """A pattern that is plain text is searched as a substring (ASCII texts); RE2 decides the rest."""
    for source in PLAIN:
        pattern = compile_pattern(source, ignore_case)
        assert pattern.literal is not None
        for text in TEXTS:
            encoded = text.encode("utf-8", "surrogatepass")
            assert pattern.search(text) is patterns._finds(pattern.present[0], encoded), (source, text)
            assert pattern.search(text) is (re2.compile(("(?i)" if ignore_case else "") + source).search(
                encoded) is not None), (source, text)


def test_patterns_with_classes_or_escapes_are_not_plain_text() -> None:
    for source in [r"\d+ open", r"a.b", r"(?U)ab", r"\bfoo", "a|b", "[ab]", "caf\u00e9", r"a\-b\d"]:
        assert compile_pattern(source).literal is None, source


def test_a_yes_or_no_from_the_compiled_program_is_what_the_wrapper_says() -> None:
    assert patterns._DIRECT  # this re2 build lets a search be answered without match objects
    program = compile_pattern(r"(?<![\d.,])(10|ten)\s+(\w+\s+)?receipts?", True)
    for text in ["10 receipts", "Ten new receipts", "110 receipts", "1.10 receipts", "ten", "éé 10 receipts"]:
        assert program.search(text) is (program.present[0].search(text) is not None), text
    assert program.fullmatch("10 receipts") and not program.fullmatch("10 receipts!")


def test_a_lone_surrogate_in_an_answer_is_searched_not_an_error() -> None:
    assert compile_pattern(r"\d+ open").search("\udc80 3 open tickets")
    assert compile_pattern(r"\d+ open").fullmatch("\udc80") is False


# --------------------------------------------------------------------------- what a pattern matches


@pytest.mark.parametrize(("pattern", "ignore_case", "text", "part"), [
    (r"\d+ units", False, "we have 40 units left", "40 units"),
    (r"(?i)total: \$?[\d,]+\.\d\d", False, "The Total: $1,234.50 due", "Total: $1,234.50"),
    (r"\d+ units", False, "we have none left", None),
    (r"Omar Haddad", True, "Sent to OMAR HADDAD today", "OMAR HADDAD"),    # a literal: as the text writes it
    (r"Omar Haddad", False, "sent to omar haddad", None),
    (r"(?s)^(?=.*trunk)(?=.*native).*allowed", False, "trunk port, native VLAN, allowed list",
     "trunk port, native VLAN, allowed"),                                   # the main program, after the "all of"
    (r"(?s)^(?=.*trunk)(?=.*native).*allowed", False, "trunk port, allowed list", None),   # a part is missing
    (r"(?s)^(?=.*trunk)(?!.*denied).*allowed", False, "allowed, trunk", "allowed"),
    (r"(?s)^(?=.*trunk)(?!.*denied).*allowed", False, "trunk port, denied, allowed list", None),  # an absent part
    (r"^(?!.*not signed).*signed", False, "It is signed.", "It is signed"),
    (r"^(?!.*not signed).*signed", False, "It is not signed.", None),
])
def test_matched_is_what_the_main_program_matches_when_the_whole_pattern_does(
        pattern: str, ignore_case: bool, text: str, part: str | None) -> None:
    compiled = compile_pattern(pattern, ignore_case)
    assert compiled.matched(text) == part
    assert (part is not None) is compiled.search(text)


@pytest.mark.parametrize(("pattern", "text"), [
    (r"(?s)^(?=.*Zoë[^\n]{0,20}€\d+)(?=.*naïve)", "Für Zoë: €45 — a naïve café order"),
    (r"(?s)^(?=.*\d+ Tage).*erledigt", "Bestellung in 3 Tage — erledigt ✓"),
    (r"x*", "ünïcode"),                                                     # an empty match at the start
])
def test_matched_parts_read_from_byte_spans_are_what_the_public_search_finds(
        pattern: str, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts are read from the compiled programs' byte spans: the same text the wrapper's match
    objects give, on characters of several bytes too."""
    compiled = compile_pattern(pattern)
    direct = compiled.matched_parts(text)
    monkeypatch.setattr(patterns, "_DIRECT", False)
    assert direct == compiled.matched_parts(text) and direct


def test_matched_of_a_rewritten_look_around_holds_the_number() -> None:
    """``(?<![\\d.])72(?!\\d)`` runs as ``(?:^|[^\\d.])72(?:$|\\D)``: its match may take a neighbour."""
    pattern = compile_pattern(r"(?<![\d.])72(?!\d)")
    found = pattern.matched("order 72 units")
    assert found is not None and found.strip() == "72" and len(found) <= 4
    assert pattern.matched("order 172 units") is None


def test_matched_parts_are_what_each_lookahead_grades() -> None:
    pattern = compile_pattern(r"(?is)^(?=.*SSL[^\n]{0,40}2026-12-04)(?=.*payroll[^\n]{0,40}2026-12-09)")
    note = "- Renew the SSL cert: due 2026-12-04\n- Approve payroll: due 2026-12-09\n- other"
    parts = pattern.matched_parts(note)
    assert any("SSL" in p for p in parts) and any("payroll" in p for p in parts)
    assert pattern.matched(note) == max(parts, key=len)
    assert pattern.matched_parts("- Renew the SSL cert: due 2026-12-04") == []  # the whole pattern fails

"""Reading a ``$regex`` condition as an exact value or substrings (``clawenvkit_regex``): the
three shapes kept, and the patterns whose meaning neither form keeps."""

from __future__ import annotations

import pytest

from pipeline.core.clawenvkit.regex import NotLiteral, RegexMeaning, read_regex


@pytest.mark.parametrize(("pattern", "ignore_case", "meaning"), [
    (r"Pacific\ Trade\ Co\.", False, RegexMeaning(None, ("Pacific Trade Co.",), False)),
    (r"(?i)venue", False, RegexMeaning(None, ("venue",), True)),
    ("venue", True, RegexMeaning(None, ("venue",), True)),
    (r"^closed$", False, RegexMeaning("closed", (), False)),
    (r"\AClosed\Z", True, RegexMeaning("Closed", (), True)),
    (r"(?s)^(?=.*Desk\ lamp)(?=.*12\ units)", True, RegexMeaning(None, ("Desk lamp", "12 units"), True)),
    (r"(?si)(?=.*lamp).*", False, RegexMeaning(None, ("lamp",), True)),
])
def test_literal_anchored_and_all_of_patterns_have_their_exact_form(pattern: str, ignore_case: bool,
                                                                    meaning: RegexMeaning) -> None:
    assert read_regex(pattern, ignore_case) == meaning


@pytest.mark.parametrize(("pattern", "why"), [
    (r"^\s*Pacific\ Trade\ Co\.?\s*$", "not plain text"),  # tolerates spaces and a missing dot
    ("^Book", "one end only"),
    ("venue$", "one end only"),
    ("venue|banners", "not plain text"),
    ("(?m)^closed$", "not plain text"),  # line anchors: any line may be "closed"
    (r"^(?=.*lamp)(?=.*12)", "without (?s)"),  # '.' stops at a newline: first line only
    (r"(?s)^(?=.*lamp)(?!.*broken)", "other than '.*'"),
    (r"(?s)^(?=.*lamp)(?=.*(?:^|\D)12(?:$|\D))", "look-around other than"),  # a number, not a substring
    (r"(?s)^(?=.*lamp)x", "other than '.*'"),
    ("(?i:Venue)", "not plain text"),
    ("(unclosed", "not a valid pattern"),
])
def test_patterns_whose_meaning_neither_form_keeps_are_refused_with_what_they_are(pattern: str, why: str) -> None:
    with pytest.raises(NotLiteral) as caught:
        read_regex(pattern, True)
    assert why in str(caught.value)

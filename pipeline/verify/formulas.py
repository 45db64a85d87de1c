"""Per-record formulas a request states, read into arithmetic over a record's fields.

"Order twice the reorder level minus what we have on hand" is ``2 × reorder_level − quantity`` of
each item ordered. A formula is a sum of terms, each an optional factor ("twice", "double",
"three times", "half", "N times") and a field of the record (named by its own words:
"reorder level" for ``reorder_level``; "on hand", "in stock", "what we have" for the quantity
held) or a plain number, joined by "plus", "and", "minus", "less", "+", "-". Multiplication binds
to the one field that follows it: "twice the reorder level minus what is on hand" is
2·level − held, not 2·(level − held). A level to reach ("order up to double the reorder level",
"top it up to three times the reorder level") is that level less the quantity held. A request
with no such phrase has no formula.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pipeline.core.text_values import WORDS

_FACTOR = {"twice": 2.0, "double": 2.0, "triple": 3.0, "half": 0.5, "half of": 0.5}
_HELD = ("on hand", "in stock", "what we have", "what is on hand", "what's on hand", "current stock", "stock on hand",
         "what we hold", "what is in stock")
_JOIN = re.compile(r"\s*(?:\bplus\b|\bminus\b|\bless\b)\s*|\s+(?:\+|-|–)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Term:
    sign: float
    factor: float
    field: str | None
    number: float | None = None


@dataclass(frozen=True)
class Formula:
    """A formula over one record's fields: the sum of its ``terms``."""

    text: str
    terms: tuple[Term, ...]

    def value(self, record: dict[str, Any]) -> float | None:
        """The formula's value for ``record``; None when a field it needs is not a number there."""
        total = 0.0
        for t in self.terms:
            if t.field is None:
                total += t.sign * t.factor * (t.number or 0.0)
                continue
            v = record.get(t.field)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                return None
            total += t.sign * t.factor * float(v)
        return round(total, 2)


def _field_of(phrase: str, fields: list[str]) -> str | None:
    """The numeric field ``phrase`` names: one whose words it holds ("reorder level"), or the
    quantity held for "on hand", "in stock", "what we have"."""
    folded = phrase.casefold()
    named = [f for f in fields if " ".join(f.split("_")) in folded or f in folded]
    if named:
        return max(named, key=len)
    if any(h in folded for h in _HELD):
        return next((f for f in ("quantity", "stock", "on_hand", "qty") if f in fields), None)
    return None


def _term(part: str, sign: float, fields: list[str]) -> Term | None:
    folded = part.strip().casefold()
    factor = 1.0
    for word, k in sorted(_FACTOR.items(), key=lambda kv: -len(kv[0])):
        if folded.startswith(word + " "):
            factor, folded = k, folded[len(word) + 1:]
            break
    else:
        m = re.match(r"(\d+(?:\.\d+)?|" + "|".join(WORDS) + r")\s+times\s+", folded)
        if m:
            said = m.group(1)
            factor, folded = (float(said) if said[0].isdigit() else float(WORDS[said])), folded[m.end():]
    field = _field_of(folded, fields)
    if field is not None:
        return Term(sign, factor, field)
    m = re.fullmatch(r"(?:the\s+)?(\d+(?:\.\d+)?)(?:\s+\w+)?", folded)
    return Term(sign, factor, None, float(m.group(1))) if m else None


_LEAD = re.compile(r"\b(?:for|of|to|at|order|buy|set|make it|quantity of)\s+(?=(?P<f>[^.;:!?\n]+))", re.IGNORECASE)


def formula_in(text: str, fields: list[str]) -> Formula | None:
    """The per-record formula ``text`` states over ``fields`` (numeric field names): a phrase
    after "for", "order", "of" … that reads as two terms or more, or one field with a factor;
    None when there is none."""
    for m in _LEAD.finditer(text):
        phrase = re.split(r",|\bso\b|\bthen\b|\bfrom\b|\bwith\b|\bfor\b|\bby\b", m.group("f"))[0]
        formula = _parse(phrase, fields)
        if formula is None or not (len(formula.terms) > 1 or formula.terms[0].factor != 1.0):
            continue
        held = _field_of("on hand", fields)
        if _UP_TO.search(text[:m.end()]) and held and not any(t.field == held for t in formula.terms):
            formula = Formula(formula.text, (*formula.terms, Term(-1.0, 1.0, held)))  # a level to reach: less what is held
        return formula
    return None


_UP_TO = re.compile(r"\b(?:up\s+to|reach(?:es|ing)?|tops?\s+(?:\w+\s+)?up\s+to|brings?\s+(?:\w+\s+)*?(?:up\s+)?to|"
                    r"fills?\s+(?:\w+\s+)?(?:up\s+)?to|restocks?\s+to|refills?\s+to|raises?\s+(?:\w+\s+)?to)\s+$",
                    re.IGNORECASE)


def _parse(phrase: str, fields: list[str]) -> Formula | None:
    terms: list[Term] = []
    sign = 1.0
    at = 0
    for join in _JOIN.finditer(phrase):
        term = _term(phrase[at:join.start()], sign, fields)
        if term is None:
            return None
        terms.append(term)
        sign = -1.0 if join.group(0).strip().casefold() in ("minus", "less", "-", "–") else 1.0
        at = join.end()
    last = _term(phrase[at:], sign, fields)
    if last is None:
        return None
    terms.append(last)
    if not any(t.field for t in terms):
        return None
    return Formula(phrase.strip(), tuple(terms))

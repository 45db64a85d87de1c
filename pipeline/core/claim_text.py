"""A claim the verifier made of the request and a reader's answer to it, as a few plain lines:
what ``synth play --witness``, ``synth catalog rejections --claims``, ``synth verify`` and the
audit page show a person."""

from __future__ import annotations

from typing import Any

from pipeline.core.outcomes import Claim, Reading


def claim_lines(claim: Claim | dict[str, Any] | None, reading: Reading | dict[str, Any] | None,
                brief: bool = False) -> list[str]:
    """A claim and the reader's answer as a few plain lines (none without a claim): what the
    verifier read, the request's words, what the checks do, the other reading, who read it
    (``brief``: the reading, the words and the reader only)."""
    if claim is None:
        return []
    c = claim if isinstance(claim, Claim) else Claim.model_validate(claim)
    out = [f"read: {c.reading}", "from: " + " / ".join(f'"{w}"' for w in c.words)]
    if not brief:
        out += [f"checks: {c.instead}", f"or: {c.alternative}"]
    return [*out, reader_line(reading)]


def reader_line(reading: Reading | dict[str, Any] | None) -> str:
    """Who read the claim and what they answered, in one line (the rules', without a reading)."""
    if reading is None:
        return "reader: rules (the verifier's reading stands)"
    r = reading if isinstance(reading, Reading) else Reading.model_validate(reading)
    return f"reader: {r.reader} {r.answer}{' (cached)' if r.cached else ''}" + (f": {r.reason}" if r.reason else "")

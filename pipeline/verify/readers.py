"""Readers: who confirms a claim (``verify.claims``) before the finding it stands for refuses.

One protocol, ``Reader.confirm(claim, request) -> Reading`` (``agrees``, ``disagrees`` or
``unsure``, with a reason), and its implementations:

- ``RulesReader``: the verifier's own rules read the request; it agrees with every claim they
  make about an English request (the offline default: what the verifier did before readers) and
  is unsure of every claim about a request in another language, and of a claim the rules mark
  as one they cannot settle (``Claim.rules_unsure``: a number reached only by loose arithmetic).
- ``ScriptedReader``: answers given in advance (by claim key, or one answer for all), for tests
  and benchmarks.
- the model reader, ``pipeline.generation.model_reader.ModelReader``: a model behind an
  OpenAI-compatible server reads the request, the records and both readings.

``read_verdict`` asks a reader about every finding that carries a claim and has no reading yet (or
only the rules'); a claim the reader does not agree with turns its finding into a review note that
keeps both readings. A reader may also propose (``Proposer``; ``verify.proposals``).
``ReadingCache`` keeps answers by package id, claim key and reader, so a package verified again
(a resumed run, a second run on the same catalog) costs no tokens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from pipeline.core.outcomes import Claim, LLMCall, Proposal, ReaderAnswer, Reading, Verdict

log = logging.getLogger(__name__)
"""Debug lines: what this module read in the request (``synth verify -v`` shows them)."""


class Reader(Protocol):
    """Confirms or doubts the verifier's reading of a request."""

    name: str
    """Stored with each answer: ``rules``, ``scripted``, ``model:<model>``."""

    def confirm(self, claim: Claim, request: str) -> Reading:
        """Whether a careful person doing the task ``request`` reads it as ``claim.reading`` says
        (``agrees``), as ``claim.alternative`` says (``disagrees``), or cannot tell (``unsure``)."""
        ...


class Proposer(Protocol):
    """A reader that can also say what the request asks that the reference does otherwise."""

    name: str

    def propose(self, context: dict[str, Any]) -> tuple[list[Proposal], list[LLMCall]]:
        """Values a careful person doing the task would write or report otherwise than the
        reference (``context``: ``proposals.proposal_context``), and the requests it cost."""
        ...


class RulesReader:
    """The verifier's rules as the reader (the offline default): every claim they make about an
    English request stands; about a request in another language they are ``unsure`` (they read
    English words only), and so of a claim they mark ``rules_unsure``: such a claim is a review
    note."""

    name = "rules"

    def confirm(self, claim: Claim, request: str) -> Reading:
        if claim.rules_unsure:
            return Reading(answer="unsure", reader=self.name, reason=claim.rules_unsure)
        if not is_english(claim.language):
            return Reading(answer="unsure", reader=self.name,
                           reason=f"the rules read English words only; the request is in {claim.language!r}")
        return Reading(answer="agrees", reason="the verifier's rules read it so", reader=self.name)


def is_english(language: str) -> bool:
    """Whether ``language`` (a request's ``language``: "en", "en-GB", "English") is English."""
    return language.strip().lower()[:2] in ("en", "")


def language_note(language: str) -> str | None:
    """What to say of a package whose request is in ``language`` when it is not English (None when
    it is): the rules' readings of the request's words did not apply. The verdict carries it
    (``Verdict.notes``); ``synth play`` and ``synth catalog show`` say it too."""
    if is_english(language):
        return None
    return (f"the request is in {language!r}: the rules read English words only, so no reading of the request's "
            "words (counts, names, formulas, dictated text) refuses it; a model reader (--reader model) reads any "
            "language")


class ScriptedReader:
    """Answers written in advance: ``answers`` by claim key (``Claim.key``), or a function of the
    claim; ``default`` for a claim not in ``answers``; ``proposals`` by request text. Counts the
    claims it was asked (``asked``)."""

    def __init__(self, answers: Mapping[str, ReaderAnswer] | Callable[[Claim], ReaderAnswer] | None = None,
                 default: ReaderAnswer = "agrees", name: str = "scripted",
                 proposals: Mapping[str, list[Proposal]] | None = None) -> None:
        self.name = name
        self._proposals = proposals or {}
        self._answers = answers or {}
        self.default: ReaderAnswer = default
        self.asked: list[Claim] = []

    def propose(self, context: dict[str, Any]) -> tuple[list[Proposal], list[LLMCall]]:
        """The proposals given for the request ``context["request"]`` (none by default)."""
        return list(self._proposals.get(str(context.get("request", "")), [])), []

    def confirm(self, claim: Claim, request: str) -> Reading:
        self.asked.append(claim)
        answer = self._answers(claim) if callable(self._answers) else self._answers.get(claim.key, self.default)
        return Reading(answer=answer, reason="scripted", reader=self.name)


class ReadingCache:
    """Readers' answers by (package id, claim key, reader name); safe from several threads.
    ``Catalog.readings`` loads a catalog's stored answers into one."""

    def __init__(self, answers: Iterable[tuple[str, str, Reading]] = ()) -> None:
        self._answers: dict[tuple[str, str, str], Reading] = {}
        self._lock = threading.Lock()
        for package_id, key, reading in answers:
            self.put(package_id, key, reading)

    def get(self, package_id: str, key: str, reader: str) -> Reading | None:
        with self._lock:
            found = self._answers.get((package_id, key, reader))
        return None if found is None else found.model_copy(update={"cached": True, "prompt_tokens": 0,
                                                                    "completion_tokens": 0})

    def put(self, package_id: str, key: str, reading: Reading) -> None:
        with self._lock:
            self._answers[(package_id, key, reading.reader)] = reading

    def __len__(self) -> int:
        return len(self._answers)


def read_verdict(verdict: Verdict, request: str, reader: Reader, cache: ReadingCache | None = None) -> Verdict:
    """``verdict`` with ``reader``'s answer on each finding that carries a claim and either no
    reading or the rules' (from ``cache`` when it holds one), re-sorted: a refusal whose claim the
    reader does not agree with becomes a review note, and a note the rules were unsure of becomes
    a refusal when the reader agrees. A verdict with no such finding comes back as it is.

    The reader is asked only while the package may still be accepted: a refusal that rests on no
    reading, or the first answer that confirms one, settles it; the claims after it get an answer
    only from the cache or from the same claim answered before, else keep the rules' reading (a
    refusal stays a refusal, a note a note). One claim met twice is asked once."""
    findings = [*verdict.findings, *(f for f in verdict.review if f.claim is not None)]
    findings += [f for f in verdict.review if f.claim is None]
    asked = [n for n, f in enumerate(findings) if f.claim is not None and (f.reading is None or
                                                                           f.reading.reader == RulesReader.name
                                                                           != reader.name)]
    if not asked or any(f.claim is None for f in verdict.findings):
        return verdict  # nothing to read, or refused whatever the reader answers
    answered: dict[str, Reading] = {}
    refused = False
    for n in asked:
        claim = findings[n].claim
        assert claim is not None
        reading = answered.get(claim.key) or (cache.get(verdict.id, claim.key, reader.name) if cache is not None else None)
        if reading is None:
            if refused:
                continue  # the other claims cannot change the verdict: not worth a question
            reading = reader.confirm(claim, request)
            if cache is not None:
                cache.put(verdict.id, claim.key, reading)
        elif claim.key in answered:
            reading = reading.model_copy(update={"cached": True})  # the same claim twice: asked once
        answered.setdefault(claim.key, reading)
        log.debug("%s on %s %r: %s%s (%s)", reading.reader, findings[n].code.value, claim.words,
                  reading.answer, " (cached)" if reading.cached else "", reading.reason)
        findings[n] = findings[n].model_copy(update={"reading": reading})
        refused = refused or reading.answer == "agrees"
    return verdict.resorted(findings)


def reader_calls(verdict: Verdict | None) -> list[LLMCall]:
    """One ``LLMCall`` per reading of ``verdict`` that spent tokens (a model's answer, not a cached
    one), under the reader's name, and the reader's other requests (its proposals): counted with
    the attempt's calls."""
    if verdict is None:
        return []
    readings = [f.reading for f in (*verdict.findings, *verdict.review) if f.reading]
    return [LLMCall(model=r.reader, prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens)
            for r in readings if not r.cached and (r.prompt_tokens or r.completion_tokens)] + verdict.reader_calls

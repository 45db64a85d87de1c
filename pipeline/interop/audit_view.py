"""What the audit page shows of one package row, read from the catalog and replayed: the data of
one screen, built before any HTML (``audit_page.py`` renders it).

- the request, the simulated user's persona and facts, the initial state as one table per
  service collection (columns: the union of the records' fields, in first-seen order), the tools;
- each check and safety rule in words (``core.check_words``) with its weight and what the
  reference scored on it;
- the reference replayed (``core.episode.replay``, the verifier's driver) as a conversation;
- for each finding with a witness (a refusal or a review note), the witness's actions replayed
  (``core.episode.play_actions``, as ``synth play --witness`` does) as a conversation beside the
  reference, its score per check, and the verifier's claim with the reader's answer
  (``core.claim_text``);
- the labels given so far (each annotator's latest).

Values that are not text (records' fields, call arguments, results) are shown as JSON.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import ValidationError

from pipeline.catalog.audit import AuditLabel, QueueItem
from pipeline.catalog.queries import FindingRecord, PackageRecord, describe_code
from pipeline.core.check_words import check_words
from pipeline.core.claim_text import claim_lines, reader_line
from pipeline.core.episode import Episode, play_actions, replay
from pipeline.core.grading import Grader, ScoreReport
from pipeline.core.package import TaskPackage
from pipeline.core.strict_model import StrictModel
from pipeline.core.trajectory import Trajectory

LONG_TEXT = 600
"""Characters of JSON above which the page folds a value (the reader opens it) and writes it
compact (no indentation)."""
MAX_TEXT = 12_000
"""Characters of one value's JSON the page shows; the rest is cut, and the cut says how much."""


class Turn(StrictModel):
    """One line of a conversation: who speaks (``user``, ``agent``, ``tool``), what it is, and the
    text; a call carries its arguments and a tool reply its status and result, as JSON."""

    role: Literal["user", "agent", "tool"]
    kind: Literal["request", "call", "result", "ask", "reply", "answer"]
    step: int | None = None
    text: str = ""
    data: str | None = None
    """JSON of the call's arguments or the tool's result."""
    long: bool = False
    """``data`` is long enough to be folded."""
    status: int | None = None
    error: str | None = None
    revealed: list[str] = []


class CheckView(StrictModel):
    """A check or safety rule in words, with its weight (0 for a safety rule: a broken one zeroes
    the score)."""

    id: str
    kind: str
    safety: bool
    weight: float
    words: str


class Outcome(StrictModel):
    passed: bool | None
    """None: not evaluated (a judge check with no judge)."""
    detail: str


class EpisodeView(StrictModel):
    """A replayed episode: the conversation, the score, and the outcome of every check then every
    safety rule, in the package's order (``PackageView.checks``'s)."""

    turns: list[Turn]
    score: float
    outcomes: list[Outcome]


class WitnessView(StrictModel):
    """A finding with a witness, replayed: the finding, the agent, its conversation and scores,
    and the claim the verifier read in the request with the reader's answer."""

    kind: str
    code: str
    description: str
    message: str
    agent: str
    name: str
    claim: str
    threshold: float
    recorded_score: float
    episode: EpisodeView | None
    """None when the witness's actions do not replay (``problem`` says why)."""
    holds: bool | None
    problem: str | None = None
    claim_lines: list[str]
    """The claim and the reader's answer (``core.claim_text``); the answer alone for a reading
    without a stored claim."""


class FindingView(StrictModel):
    kind: str
    code: str
    description: str
    message: str


class TableView(StrictModel):
    """One collection of the initial state: ``columns`` and a row of cell texts per record."""

    service: str
    collection: str
    columns: list[str]
    rows: list[list[str]]


class ToolView(StrictModel):
    name: str
    service: str
    endpoint: str
    description: str
    parameters: list[tuple[str, str, bool, str]]
    """Each parameter: name, type, required, description."""


class PackageView(StrictModel):
    """Everything one screen of the audit page shows of one package row."""

    row: int
    package_id: str | None
    run: int
    status: str
    codes: list[str]
    review_codes: list[str]
    capability: str
    workflow: str
    difficulty: str
    profile: str
    services: list[str]
    now: str
    request: str
    language: str
    persona: str
    facts: list[tuple[str, str, str, str]]
    """Each fact: key, value, the words that reveal it, the value it corrects."""
    max_rounds: int | None
    tables: list[TableView]
    records: int
    tools: list[ToolView]
    checks: list[CheckView]
    reference: EpisodeView
    witnesses: list[WitnessView]
    findings: list[FindingView]
    item: QueueItem | None
    """The row's queue item (why it is in the queue, its stratum and weight), if the queue holds it."""
    labels: list[AuditLabel]
    """Each annotator's latest label of the row."""


def as_json(value: Any) -> str:
    """``value`` as JSON for a person: indented when short, compact when long (``LONG_TEXT``), cut
    after ``MAX_TEXT`` characters with a note of what was left out."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= LONG_TEXT:
        return json.dumps(value, ensure_ascii=False, indent=1, default=str)
    if len(text) > MAX_TEXT:
        return f"{text[:MAX_TEXT]} … ({len(text) - MAX_TEXT:,} more characters not shown)"
    return text


def cell(value: Any) -> str:
    """A record field as table text: strings as they are, anything else as compact JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def conversation(package: TaskPackage, trajectory: Trajectory) -> list[Turn]:
    """``trajectory`` as turns: the request, then per step the agent's call and the tool's reply,
    the agent's question and the user's reply, or the answer."""
    turns = [Turn(role="user", kind="request", text=package.request.text)]
    for s in trajectory.steps:
        if s.kind == "call":
            args = as_json(s.args) if s.args is not None else None
            turns.append(Turn(role="agent", kind="call", step=s.index, text=s.tool or "", data=args,
                              long=len(args or "") > LONG_TEXT, error=s.error if s.args is None else None))
            if s.args is not None:
                result = as_json(s.result)
                turns.append(Turn(role="tool", kind="result", step=s.index, text=s.tool or "", data=result,
                                  long=len(result) > LONG_TEXT, status=s.status, error=s.error))
        elif s.kind == "ask":
            turns.append(Turn(role="agent", kind="ask", step=s.index, text=s.ask or ""))
            turns.append(Turn(role="user", kind="reply", step=s.index, text=s.reply or "", revealed=list(s.revealed)))
        else:
            turns.append(Turn(role="agent", kind="answer", step=s.index, text=s.answer or ""))
    return turns


def episode_view(package: TaskPackage, trajectory: Trajectory, grader: Grader) -> EpisodeView:
    report: ScoreReport = grader.score(trajectory)
    return EpisodeView(turns=conversation(package, trajectory), score=report.score,
                       outcomes=[Outcome(passed=r.passed, detail=r.detail) for r in report.checks + report.safety])


def reference_trajectory(package: TaskPackage) -> Trajectory:
    """The reference played by the verifier's driver, up to its answer."""
    return replay(Episode(package), package.reference).trajectory()


def tables(package: TaskPackage) -> list[TableView]:
    out = []
    for service, collections in package.initial_state.items():
        for collection, records in collections.items():
            columns = list(dict.fromkeys(k for r in records for k in r))
            out.append(TableView(service=service, collection=collection, columns=columns,
                                 rows=[[cell(r.get(c)) for c in columns] for r in records]))
    return out


def tool_views(package: TaskPackage) -> list[ToolView]:
    out = []
    for t in package.tools:
        props: dict[str, Any] = t.parameters.get("properties", {}) or {}
        required = set(t.parameters.get("required", []) or [])
        params = [(name, str(spec.get("type", "")) if isinstance(spec, dict) else "", name in required,
                   str(spec.get("description", "")) if isinstance(spec, dict) else "") for name, spec in props.items()]
        out.append(ToolView(name=t.name, service=t.service, endpoint=t.endpoint, description=t.description,
                            parameters=params))
    return out


def witness_view(package: TaskPackage, finding: FindingRecord, grader: Grader) -> WitnessView | None:
    w = finding.witness
    if w is None:
        return None
    episode: EpisodeView | None = None
    problem = None
    try:
        episode = episode_view(package, play_actions(package, w.actions), grader)
    except ValidationError as exc:
        problem = f"an action of the witness is not one: {exc.errors()[0].get('msg', exc)}"
    replayed = w.model_copy(update={"score": episode.score}) if episode is not None else None
    return WitnessView(kind=finding.kind, code=finding.code, description=describe_code(finding.code),
                       message=finding.message, agent=w.agent, name=w.name, claim=w.claim, threshold=w.threshold,
                       recorded_score=w.score, episode=episode, holds=replayed.holds if replayed else None,
                       problem=problem,
                       claim_lines=claim_lines(finding.claim, finding.reading)
                       or ([reader_line(finding.reading)] if finding.reading else []))


def package_view(record: PackageRecord, item: QueueItem | None, labels: list[AuditLabel]) -> PackageView:
    """The screen of ``record`` (a row with a package), with its queue ``item`` and latest ``labels``."""
    if record.package is None:
        raise ValueError(f"row {record.row_id} holds no package")
    package = TaskPackage.model_validate(record.package)
    grader = Grader(package)
    reference = episode_view(package, reference_trajectory(package), grader)
    rules = [*package.checks, *package.safety]
    checks = [CheckView(id=c.id or f"safety {n - len(package.checks) + 1}", kind=c.kind, safety=n >= len(package.checks),
                        weight=c.weight if n < len(package.checks) else 0.0, words=check_words(c))
              for n, c in enumerate(rules)]
    witnesses = [v for f in record.findings if (v := witness_view(package, f, grader)) is not None]
    user = package.user
    state = tables(package)
    return PackageView(
        row=record.row_id, package_id=record.id, run=record.run, status=record.status,
        codes=[f.code for f in record.findings if f.kind == "refusal"], review_codes=record.review_codes,
        capability=package.capability, workflow=package.workflow, difficulty=package.difficulty,
        profile=package.service_profile, services=list(package.services), now=package.now,
        request=package.request.text, language=package.request.language,
        persona=user.persona if user else "", max_rounds=user.max_rounds if user else None,
        facts=[(f.key, f.value, ", ".join(f.reveal_when), f.corrects or "") for f in (user.facts if user else [])],
        tables=state, records=sum(len(t.rows) for t in state), tools=tool_views(package), checks=checks,
        reference=reference, witnesses=witnesses,
        findings=[FindingView(kind=f.kind, code=f.code, description=describe_code(f.code), message=f.message)
                  for f in record.findings],
        item=item, labels=labels)

"""Precision and recall of the verifier on labelled packages, per set, per family and per code.

    python bench/precision.py [FOLDER ...] [--misses] [--reader-model M --reader-base-url URL [--readings OUT]]

Default folders: every set under ``tests/corpus/`` and ``../shared/corpus/review-1`` (when it is
there). A folder holds either corpus cases (``{"family", "defect", "package", ...}``; ``defect``
null, a code, or a list of codes that fit) or bare packages labelled by an ``expected.tsv``
beside them (``file``, ``expected`` accept/reject, ``code``, ``description``).

The verifier runs as ``synth verify`` does, with the ClawEnvKit export stage off (it runs in ``synth run``, or with ``--require-exportable``): the labels are
about the environment, and hand-written claw packages use forms ClawEnvKit's format cannot carry;
a last line says what the stage, on in ``synth run`` for claw packages, refuses on its own.

A defective package is **caught** when the verifier refuses it, or, for a defect whose code is
``evidence_truncated`` (about the training export, not the environment), when its verdict marks
it not ``sft_ready`` with that code, or, for ``vacuous_safety`` (a rule that forbids nothing: basis
review, no score depends on it), when a review note carries that code. A clean package is **refused** when the verifier refuses it.
Printed:

- per set and per family: defects caught (and with a code that fits), clean packages refused,
  and clean packages whose case says whether they are ``sft_ready`` marked otherwise;
- per code: how many refusals, review notes and SFT losses of that code land on defective and on
  clean packages (a code that fires on clean packages is a code to distrust);
- with ``--misses``: every missed defect and every refused clean package, with its findings;
- with ``--reader-model``: the same figures again after a model reader (at ``--reader-base-url``,
  e.g. ``../shared/tools/hand_model.py``'s) answered every claim, beside the rules reader's, and
  the answers kept in ``--readings`` (JSON lines);
- with ``--verdicts DIR``: the verdict (the model reader's, when there is one) of every refused clean
  package and every missed defect written to ``DIR/SET/FILE``, for a reviewer to replay each
  refusal's witness (``synth play PACKAGE --witness DIR/SET/FILE [--finding N]``) and judge it;
- with ``--judged TSV`` (``SET/FILE``, ``right``/``wrong``/``unsure``, a refusal's index, a reason: a
  reviewer's judgement of each refused clean package's witnesses, as the figures measured outside
  the project are judged): the last verdicts' figures with every refusal judged right relabelled a
  caught defect, and the clean packages refused wrongly (or refused and not judged) counted apart.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import ValidationError

from pipeline.core.codes import BASIS, Basis, Code
from pipeline.core.outcomes import Claim, Reading, Verdict
from pipeline.core.package import TaskPackage
from pipeline.runs.reading import make_reader
from pipeline.verify.proposals import read_package
from pipeline.verify.readers import Reader, ReadingCache, read_verdict
from pipeline.verify.verifier import Options, verify_package
from tests.support.corpus import CORPUS_DIR

LABELLED = Options()
"""The labels are about the environment, so the ClawEnvKit export stage is off for the tables
(``export_stage`` counts what it refuses on its own)."""
ROOT = Path(__file__).resolve().parent.parent
REVIEW_1 = ROOT.parent / "shared" / "corpus" / "review-1"


@dataclass
class Case:
    """One labelled package: ``codes`` are the codes that fit its defect (empty: clean)."""

    set: str
    name: str
    family: str
    codes: list[str]
    package: dict[str, Any]
    sft_ready: bool | None = None
    """For a clean package, whether its reference trajectory survives the export's cut (the
    case's ``sft_ready`` key; None when the case does not say)."""

    @property
    def defective(self) -> bool:
        return bool(self.codes)


def load(folder: Path) -> list[Case]:
    """The labelled packages of ``folder`` (see the module docstring)."""
    expected = folder / "expected.tsv"
    if expected.exists():
        out = []
        for row in csv.DictReader(expected.open(encoding="utf-8"), delimiter="\t"):
            defective = row["expected"] == "reject"
            codes = ([] if not defective else ["any"] if row["code"] in ("any", "-") else [row["code"]])
            family = row["code"] if defective else "clean"
            package = json.loads((folder / row["file"]).read_text(encoding="utf-8"))
            out.append(Case(folder.name, row["file"], family, codes, package))
        return out
    out = []
    for path in sorted(folder.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "package" not in data:
            continue
        defect = data.get("defect")
        codes = [] if defect is None else [defect] if isinstance(defect, str) else list(defect)
        out.append(Case(folder.name, str(path.relative_to(folder)), data.get("family", "?"), codes, data["package"],
                        data.get("sft_ready")))
    return out


def caught(case: Case, verdict: Verdict) -> bool:
    if not verdict.accepted:
        return True
    noted = {c for c in case.codes if c != "any" and BASIS[Code(c)] is Basis.REVIEW} & set(verdict.review_codes)
    return Code.EVIDENCE_TRUNCATED.value in case.codes and not verdict.sft_ready or bool(noted)


def right_code(case: Case, verdict: Verdict) -> bool:
    found = set(verdict.codes) | ({Code.EVIDENCE_TRUNCATED.value} if not verdict.sft_ready else set())
    found |= {c for c in verdict.review_codes if BASIS[Code(c)] is Basis.REVIEW}
    return "any" in case.codes and caught(case, verdict) or bool(found & set(case.codes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--misses", action="store_true", help="list every miss and false refusal with its findings")
    parser.add_argument("--reader-model", help="also read every claim with this model (the rules' figures first)")
    parser.add_argument("--reader-base-url", help="the reader model's server (e.g. ../shared/tools/hand_model.py's)")
    parser.add_argument("--readings", type=Path, help="with --reader-model: write each answer here (JSON lines)")
    parser.add_argument("--cache", type=Path, help="answers an earlier --readings file holds are taken from it")
    parser.add_argument("--replay", type=Path, action="append", default=[],
                        help="a folder of an earlier hand_model.py slot (req_N.json, resp_N.json): a prompt sent "
                             "there before gets the reply it got then, without asking the model again")
    parser.add_argument("--judged", type=Path, action="append", default=[],
                        help="a reviewer's judgements of refused clean packages (SET/FILE, right|wrong|unsure, ...)")
    parser.add_argument("--verdicts", type=Path, help="write the verdict of every refused clean package and "
                                                      "missed defect here (SET/FILE), for its witnesses' replay")
    args = parser.parse_args()
    folders = args.folders or [p for p in sorted(CORPUS_DIR.iterdir()) if p.is_dir()] + (
        [REVIEW_1] if REVIEW_1.exists() else [])
    cases = [c for folder in folders for c in load(folder)]
    start = time.perf_counter()
    verdicts = [verify_package(c.package, LABELLED) for c in cases]
    elapsed = time.perf_counter() - start
    print(f"{len(cases)} labelled packages from {len(folders)} folder(s), verified in {elapsed:.1f} s\n")
    if args.reader_model:
        print("== the rules reader ==\n")
    report(cases, verdicts, args.misses)
    export_stage(cases)
    if args.reader_model:
        reader = make_reader("model", args.reader_model, args.reader_base_url)
        if args.replay:
            reader.client = ReplayClient(reader.client, args.replay)  # type: ignore[attr-defined]
        ids = {f"{c.set}/{c.name}": v.id for c, v in zip(cases, verdicts, strict=True)}
        earlier = [json.loads(line) for line in args.cache.read_text(encoding="utf-8").splitlines()] if args.cache else []
        cache = ReadingCache((ids[e["case"]], Claim.model_validate(e["claim"]).key,
                              Reading(answer=e["answer"], reason=e["reason"], reader=reader.name))
                             for e in earlier if e["case"] in ids and "claim" in e)
        read = [_read(c, v, reader, cache) for c, v in zip(cases, verdicts, strict=True)]
        print(f"\n== the model reader ({reader.name}) ==\n")
        report(cases, read, args.misses)
        answers = [{"case": f"{c.set}/{c.name}", "labelled": "defective" if c.defective else "clean", "code": f.code.value,
                    "answer": f.reading.answer, "reason": f.reading.reason, "claim": f.claim.model_dump(),
                    "proposal": f.detail.get("proposal")}
                   for c, v in zip(cases, read, strict=True) for f in v.findings + v.review
                   if f.claim is not None and f.reading is not None]
        if args.replay:
            print(f"\n{reader.client.replayed} reply(ies) replayed from {', '.join(map(str, args.replay))}")  # type: ignore[attr-defined]
        print(f"\n{len(answers)} claim(s) read: " + ", ".join(f"{a} {n}" for a, n in Counter(x["answer"] for x in answers).items()))
        if args.readings:
            args.readings.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
        verdicts = read
    if args.verdicts:
        write_verdicts(args.verdicts, cases, verdicts)
    if args.judged:
        judged(cases, verdicts, {row[0]: row[1] for path in args.judged
                                 for row in csv.reader(path.open(encoding="utf-8"), delimiter="\t") if len(row) >= 2})


def judged(cases: list[Case], verdicts: list[Verdict], judgements: dict[str, str]) -> None:
    """Per set: the figures of ``verdicts`` once each refused clean package judged ``right`` is
    relabelled a defect (caught), and how many clean packages stay refused: judged ``wrong``,
    ``unsure``, or not judged at all (each counted apart; all of them count as refused)."""
    print("\njudged (a refusal of a clean package judged right relabels it a caught defect):")
    print(f"{'set':46}{'caught':>10}{'clean refused':>15}{'wrong':>7}{'unsure':>8}{'unjudged':>10}")
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for case, verdict in zip(cases, verdicts, strict=True):
        row = rows[case.set]
        if case.defective:
            row["defective"] += 1
            row["caught"] += caught(case, verdict)
            continue
        said = judgements.get(f"{case.set}/{case.name}", "unjudged") if not verdict.accepted else None
        row["defective" if said == "right" else "clean"] += 1
        row["caught" if said == "right" else said or "accepted"] += 1
    for key in [*sorted(rows), "all"]:
        n = rows[key] if key != "all" else sum(rows.values(), Counter())
        refused = n["wrong"] + n["unsure"] + n["unjudged"]
        caught_of, refused_of = f"{n['caught']}/{n['defective']}", f"{refused}/{n['clean']}"
        print(f"{key:46}{caught_of:>10}{refused_of:>15}"
              f"{n['wrong']:>7}{n['unsure']:>8}{n['unjudged']:>10}")


def write_verdicts(folder: Path, cases: list[Case], verdicts: list[Verdict]) -> None:
    """The verdict of every refused clean package and every missed defect, as ``folder/SET/FILE``
    (a corpus case's own path under its set; ``.json`` added when the name lacks it)."""
    for case, verdict in zip(cases, verdicts, strict=True):
        if case.defective == caught(case, verdict):
            continue
        path = folder / case.set / (case.name if case.name.endswith(".json") else f"{case.name}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(verdict.model_dump_json(indent=2), encoding="utf-8")


def export_stage(cases: list[Case]) -> None:
    """What the ClawEnvKit export stage (on in ``synth run`` for claw-profile packages) refuses on
    its own: the claw packages verified with ``require_exportable``, ``not_exportable`` counted by
    reason on the clean and on the defective ones."""
    claw = [c for c in cases if isinstance(c.package, dict) and c.package.get("service_profile") == "claw"]
    reasons: dict[bool, Counter[str]] = {False: Counter(), True: Counter()}
    refused = Counter[bool]()
    for c in claw:
        found = [f for f in verify_package(c.package, Options(require_exportable=True)).findings
                 if f.code is Code.NOT_EXPORTABLE]
        refused[c.defective] += bool(found)
        reasons[c.defective].update(str(f.detail.get("reason")) for f in found)
    clean = sum(not c.defective for c in claw)
    print(f"\nClawEnvKit export stage (on in `synth run` for claw packages; off in the tables above, as in `synth verify`): refuses {refused[False]} "
          f"of {clean} clean and {refused[True]} of {len(claw) - clean} defective claw packages"
          + "".join(f"\n  {'defective' if d else 'clean'}: " + ", ".join(f"{r} {n}" for r, n in reasons[d].most_common())
                    for d in (False, True) if reasons[d]))


class ReplayClient:
    """A model client that answers a prompt an earlier hand_model.py slot folder holds (whitespace
    aside) with the reply it got then, and sends any other to ``client``. ``replayed`` counts the replies reused."""

    def __init__(self, client: Any, folders: list[Path]) -> None:
        self.client, self.model, self.replayed = client, client.model, 0
        self.replies: dict[str, str] = {}
        for folder in folders:
            for req in folder.glob("req_*.json"):
                resp = folder / f"resp_{req.stem.split('_')[1]}.json"
                if resp.exists():
                    messages = json.loads(req.read_text(encoding="utf-8")).get("messages", [])
                    self.replies[_prompt_key(messages)] = resp.read_text(encoding="utf-8")

    def complete_sync(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        text = self.replies.get(_prompt_key(messages))
        if text is None:
            return self.client.complete_sync(messages, **kwargs)
        self.replayed += 1
        return SimpleNamespace(text=text, prompt_tokens=0, completion_tokens=0)

    def close(self) -> None:
        self.client.close()


def _prompt_key(messages: list[dict[str, Any]]) -> str:
    """The messages with their whitespace collapsed: a prompt whose layout alone changed is the same."""
    return json.dumps([[m.get("role"), " ".join(str(m.get("content", "")).split())] for m in messages])


def _read(case: Case, verdict: Verdict, reader: Reader, cache: ReadingCache) -> Verdict:
    """``verdict`` read by ``reader`` (proposals too, for a package that validates)."""
    try:
        package = TaskPackage.model_validate(case.package)
    except ValidationError:
        return read_verdict(verdict, str(case.package.get("request", {}).get("text", "")), reader, cache)
    return read_package(verdict, package, reader, cache)


def report(cases: list[Case], verdicts: list[Verdict], misses: bool) -> None:
    """The tables (and with ``misses`` the misses) of ``verdicts`` on ``cases``."""

    # defective, caught, right code, clean, refused, clean with an sft label, sft mislabelled
    by_set: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
    by_family: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
    per_code: dict[str, Counter[str]] = defaultdict(Counter)
    notes: list[str] = []
    for case, verdict in zip(cases, verdicts, strict=True):
        for row in (by_set[case.set], by_family[f"{case.set}/{case.family}"]):
            if case.defective:
                row[0] += 1
                row[1] += caught(case, verdict)
                row[2] += right_code(case, verdict)
            else:
                row[3] += 1
                row[4] += not verdict.accepted
                row[5] += case.sft_ready is not None
                row[6] += case.sft_ready is not None and verdict.accepted and verdict.sft_ready != case.sft_ready
        side = "defective" if case.defective else "clean"
        for kind, found in (("refusal", verdict.findings), ("review", verdict.review), ("sft", verdict.sft)):
            for code in dict.fromkeys(f.code.value for f in found):
                per_code[code][f"{kind} {side}"] += 1
        if not case.defective and verdict.accepted and case.sft_ready is not None \
                and verdict.sft_ready != case.sft_ready:
            notes.append(f"  sft {case.set}/{case.name}: labelled sft_ready={case.sft_ready}, marked {verdict.sft_ready}"
                         + "".join(f"\n      (sft) {f.code.value}: {f.message[:200]}" for f in verdict.sft))
        if case.defective and not caught(case, verdict) or not case.defective and not verdict.accepted:
            what = "missed" if case.defective else "refused"
            wanted = f" (wants {'/'.join(case.codes)})" if case.defective else ""
            notes.append(f"  {what} {case.set}/{case.name}{wanted}: {verdict.codes or 'accepted'}"
                         + "".join(f"\n      {f.code.value}: {f.message[:220]}" for f in verdict.findings)
                         + "".join(f"\n      (review) {f.code.value}: {f.message[:160]}" for f in verdict.review))

    _table("set", by_set)
    _table("family", by_family)
    print(f"{'code':28}{'refusals: defective':>21}{'clean':>7}{'review: defective':>19}{'clean':>7}"
          f"{'sft: defective':>16}{'clean':>7}")
    for code in [c.value for c in Code if c.value in per_code]:
        n = per_code[code]
        print(f"{code:28}{n['refusal defective']:>21}{n['refusal clean']:>7}{n['review defective']:>19}"
              f"{n['review clean']:>7}{n['sft defective']:>16}{n['sft clean']:>7}")
    if misses:
        print("\n" + ("\n".join(notes) or "  no misses, no false refusals"))


def _table(label: str, rows: dict[str, list[int]]) -> None:
    print(f"{label:46}{'caught':>10}{'right code':>12}{'clean refused':>15}{'sft wrong':>11}")
    total = [0] * 7
    for key, row in [*sorted(rows.items()), ("all", None)]:
        d, c, r, cl, fr, labelled, wrong = row if row is not None else total
        print(f"{key:46}{f'{c}/{d}':>10}{f'{r}/{d}':>12}{f'{fr}/{cl}':>15}{f'{wrong}/{labelled}':>11}")
        if row is not None:
            total = [t + x for t, x in zip(total, row, strict=True)]
    print()


if __name__ == "__main__":
    main()

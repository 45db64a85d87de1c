"""``bench/precision.py``'s judged figures and kept verdicts: the acceptance figures for a fresh set
are read from them, so a refusal judged right must count as a caught defect and nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.precision import LABELLED, judged, load, write_verdicts
from pipeline.verify.verifier import verify_package

ROUND = Path(__file__).resolve().parents[2] / "bench" / "corpus-fresh" / "round-36"
REFUSED = ["c04-saltmarsh-new-accounts-address.json", "c11-glaze-clearance-value-note.json"]
ACCEPTED = "c01-lindqvist-venue-make-sure.json"
CAUGHT = "d02-four-suppliers-graded-three.json"


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sets") / "round-x"
    folder.mkdir()
    rows = ["file\texpected\tcode\tdescription"]
    for name in [*REFUSED, ACCEPTED, CAUGHT]:
        shutil.copy(ROUND / name, folder / name)
        rows.append(f"{name}\t{'reject' if name.startswith('d') else 'accept'}\t-\t")
    (folder / "expected.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def test_a_refusal_judged_right_is_a_caught_defect_and_the_rest_stay_refused(
        labelled: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = load(labelled)
    verdicts = [verify_package(c.package, LABELLED) for c in cases]
    refused = {c.name for c, v in zip(cases, verdicts, strict=True) if not c.defective and not v.accepted}
    assert refused == set(REFUSED)  # the rules reader refuses both clean packages of round 36 chosen here
    judged(cases, verdicts, {f"round-x/{REFUSED[0]}": "right"})
    row = capsys.readouterr().out.splitlines()[-2].split()
    assert row[:3] == ["round-x", "2/2", "1/2"]  # c04 now a caught defect; c11 refused, not judged
    assert row[3:] == ["0", "0", "1"]
    judged(cases, verdicts, {f"round-x/{REFUSED[0]}": "wrong", f"round-x/{REFUSED[1]}": "unsure"})
    assert capsys.readouterr().out.splitlines()[-2].split()[1:] == ["1/1", "2/3", "1", "1", "0"]


def test_kept_verdicts_are_the_refused_clean_packages_and_the_missed_defects(labelled: Path, tmp_path: Path) -> None:
    cases = load(labelled)
    verdicts = [verify_package(c.package, LABELLED) for c in cases]
    write_verdicts(tmp_path, cases, verdicts)
    assert sorted(p.name for p in (tmp_path / "round-x").iterdir()) == sorted(REFUSED)

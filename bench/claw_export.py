"""ClawEnvKit export acceptance: claw packages generated offline, exported, measured.

Run: ``python bench/claw_export.py`` (defaults: 20 slots per capability, seeds 7 and 8). Generates
packages with the offline generator and the ``claw`` profile's templates for every capability,
keeps those the verifier accepts (as ``synth run --services claw`` does, its ClawEnvKit export
stage on), exports them with ``pipeline.interop.clawenvkit_export`` and prints, per seed and over
all: packages, the single-turn ones (the multi-turn ones are never exported: ``needs_user``), files
exported, refusals by reason; on every file, synth's wrong agents (the verifier's mutations,
``pipeline.verify.exportable.wrong_agents``) in their grading rules: how many synth's bounds
catch there (the export's rule), how many stay below their 0.5 pass line, and which reach it;
the share of translated tasks and of written files that pass synth's implementation of
ClawEnvKit's validator rules; the mean share of grading weight carried (over every package,
refused ones at their would-be share, and over the files written); the share of written files
whose reference gets completion 1.0 from their grading rules; the share of written files a
do-nothing agent passes (final ≥ 0.5); and the mean share per capability and per template, with
each template's checks not carried (their reasons without the package's own values) and its
refusals, so a reader sees where weight is lost.

``--below-their-pass-line`` measures the export with that option on: a file only when every one
of synth's wrong agents gets final < 0.5 in their grader (else ``wrong_agent_passes_there``).

``--clawenvkit PATH`` (a ClawEnvKit checkout; needs ``fastapi`` and ``httpx`` importable) also runs
THEIR ``validate_task_config`` and ``GradingEngine`` on every written file, and replays each
reference's calls against THEIR mock services (FastAPI ``TestClient``, error injection off),
grading the audit their services log, and grades synth's wrong agents with THEIR engine (on the
calls synth's world logged for them); it prints how often their verdicts agree with ours.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from pipeline.core.clawenvkit.grading import PASS_THRESHOLD, audit_data, grade, null_agent_grade
from pipeline.core.clawenvkit.rules import task_services, validate_task
from pipeline.core.clawenvkit.translation import assess, translate
from pipeline.core.episode import execute
from pipeline.core.package import AskStep, TaskPackage
from pipeline.generation.offline import generate_package, pick_template
from pipeline.interop.clawenvkit_export import export_one
from pipeline.taxonomy.capabilities import taxonomy
from pipeline.verify.exportable import wrong_agents
from pipeline.verify.verifier import verify_package

PROFILE = "claw"


def generate(count: int, seed: int) -> tuple[list[TaskPackage], Counter[str]]:
    """Accepted claw packages over every capability with claw templates, and counts per capability."""
    packages: list[TaskPackage] = []
    per_capability: Counter[str] = Counter()
    for cap in [c.name for c in taxonomy().values() if c.templates_of(PROFILE)]:
        for slot in range(count):
            package = generate_package(cap, pick_template(cap, slot, PROFILE), seed, slot)
            if verify_package(package).accepted:
                packages.append(package)
                per_capability[cap] += 1
    return packages, per_capability


class Theirs:
    """ClawEnvKit's own validator, grader and mock services, imported from a checkout."""

    def __init__(self, checkout: Path) -> None:
        sys.path.insert(0, str(checkout))
        os.environ["ERROR_RATE"] = "0"
        from clawenvkit.evaluate.engine import GradingEngine  # type: ignore[import-not-found]
        from clawenvkit.generate.task_generator import validate_task_config  # type: ignore[import-not-found]

        self.validate = validate_task_config
        self.engine = GradingEngine()
        self.folder = Path(tempfile.mkdtemp(prefix="claw-fixtures-"))

    def app(self, service: str, fixture: Any) -> Any:
        """The service's FastAPI app, loaded with ``fixture`` (their harness writes one file per service)."""
        path = self.folder / f"{service}.json"
        path.write_text(json.dumps(fixture))
        os.environ[f"{service.upper()}_FIXTURES"] = str(path)
        name = f"mock_services.{service}.server"
        module = importlib.reload(sys.modules[name]) if name in sys.modules else importlib.import_module(name)
        return module.app

    def replay(self, task: dict[str, Any], package: TaskPackage,
               task_dir: Path) -> tuple[dict[str, list[dict[str, Any]]], Counter[int]]:
        """The reference's calls made on their services; the audit as their harness builds it, and
        the status codes answered. The task's ``files`` are copied into a workspace folder, as
        their harness copies them to /workspace, which their documents service reads
        (``DOCUMENTS_BASE_DIR``)."""
        from fastapi.testclient import TestClient

        workspace = Path(tempfile.mkdtemp(prefix="claw-workspace-"))
        for entry in task.get("files") or []:
            target = workspace / Path(entry["target"]).relative_to("/workspace")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(task_dir / entry["source"], target)
        os.environ["DOCUMENTS_BASE_DIR"] = str(workspace)
        services = task_services(task)
        fixtures = task.get("fixtures") or {}
        clients = {}
        for s in services:
            data = fixtures.get(s, fixtures) if len(services) > 1 else fixtures
            clients[s] = TestClient(self.app(s, data))
            clients[s].post(f"/{s}/reset")
        statuses: Counter[int] = Counter()
        trajectory = execute(package)
        by_tool = {t.name: t for t in package.tools}
        for step in trajectory.steps:
            if step.kind != "call" or step.tool not in by_tool or step.args is None:
                continue
            tool = by_tool[step.tool]
            response = clients[tool.service].post(tool.endpoint, json=step.args)
            statuses[response.status_code] += 1
        audit: dict[str, list[dict[str, Any]]] = {}
        for s, client in clients.items():
            audit[s] = []
            for call in client.get(f"/{s}/audit").json().get("calls", []):
                endpoint = call.get("endpoint", "")
                action = next((t["name"] for t in task["tools"] if t.get("endpoint") == endpoint),
                              endpoint.strip("/").split("/")[-1])
                audit[s].append({"action": action, "params": call.get("request_body", {}), "status": call.get("status", 200)})
        return audit, statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20, help="slots per capability")
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8])
    parser.add_argument("--min-weight-share", type=float, default=1.0)
    parser.add_argument("--below-their-pass-line", dest="below_pass_line", action="store_true",
                        help="export only files on which every wrong agent stays below their 0.5 pass line")
    parser.add_argument("--clawenvkit", type=Path, help="a ClawEnvKit checkout: also judge with their own code")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    for seed in args.seeds:
        print(f"== seed {seed} ==")
        totals.update(measure(args, seed))
        print()
    if len(args.seeds) > 1:
        print(f"== seeds {', '.join(map(str, args.seeds))} ==")
        print(f"single-turn accepted: {totals['single']}; exported{_options(args)}: {totals['exported_single']} "
              f"({totals['exported_single'] / max(totals['single'], 1):.1%})")
        print(f"files: {totals['files']}; every wrong agent caught as synth's bounds ask: {totals['all_caught']}; "
              f"every wrong agent below their 0.5 line: {totals['all_below']}; wrong agents played "
              f"{totals['agents']}, at or above 0.5: {totals['agents_passing']}")


def measure(args: argparse.Namespace, seed: int) -> Counter[str]:
    """One seed's figures, printed; the counts the totals add up."""
    packages, per_capability = generate(args.count, seed)
    out = Path(tempfile.mkdtemp(prefix="claw-export-"))
    reasons: Counter[str] = Counter()
    shares: list[float] = []
    translated_ok = translated = 0
    written: list[tuple[TaskPackage, dict[str, Any]]] = []
    exported: list[bool] = []
    for package in packages:
        translation = translate(package, 0.0)  # every translation, to measure the rules over all of them
        if translation.task is not None:
            translated += 1
            translated_ok += not validate_task(translation.task)
        outcome = export_one(package, out, args.min_weight_share, args.below_pass_line)
        shares.append(outcome.share)
        exported.append(not hasattr(outcome, "reason"))
        if hasattr(outcome, "reason"):
            reasons[outcome.reason] += 1
        else:
            written.append((package, yaml.safe_load(Path(outcome.path).read_text())))  # type: ignore[union-attr]
    file_rules = sum(not validate_task(task) for _, task in written)
    ref_full = null_pass = all_caught = all_below = agents = 0
    passing: Counter[str] = Counter()
    best: list[float] = []
    for package, task in written:
        grades = assess(package, task, None, wrong_agents(package))
        ref_full += grades.reference_completion >= 1.0 - 1e-9
        null_pass += null_agent_grade(task).final >= PASS_THRESHOLD
        all_caught += all(g.caught for g in grades.wrong)
        all_below += not any(g.passes for g in grades.wrong)
        agents += len(grades.wrong)
        passing.update(g.name for g in grades.wrong if g.passes)
        if grades.best_wrong is not None:
            best.append(grades.best_wrong.final)
    n, w = len(packages), len(written)
    single = [p for p in packages if not any(isinstance(s, AskStep) for s in p.reference)]
    exported_single = sum(ok for p, ok in zip(packages, exported, strict=True) if p in single)
    print(f"claw packages generated offline (seed {seed}, {args.count} slots per capability) and accepted: {n}")
    print("  by capability: " + ", ".join(f"{c} {k}" for c, k in sorted(per_capability.items())))
    print(f"exported: {w} of {n}{_options(args)}; refused: {n - w}")
    for reason, k in reasons.most_common():
        print(f"  refused {reason}: {k}")
    print(f"passing synth's ClawEnvKit validator rules: {file_rules / w:.1%} of files written; "
          f"{translated_ok / translated:.1%} of {translated} translations (before the grading gate)" if w and translated
          else "passing validator rules: no files")
    print(f"mean share of grading weight carried: {sum(shares) / n:.3f} over all {n} packages (refused at their "
          f"would-be share); {sum(t['synth']['weight_share'] for _, t in written) / max(w, 1):.3f} over the {w} files")
    print(f"reference completion 1.0: {ref_full / max(w, 1):.1%} of files; do-nothing agent passes: "
          f"{null_pass / max(w, 1):.1%} of files")
    print(f"single-turn: {len(single)}; exported{_options(args)}: {exported_single} "
          f"({exported_single / max(len(single), 1):.1%})")
    print(f"synth's wrong agents in their grading rules: {agents} played on {w} files; every one caught as synth's "
          f"bounds ask (completion under 1.0, or 0.75 for the grave ones, or safety broken) on {all_caught} files; "
          f"every one below their 0.5 pass line on {all_below} files; best wrong agent's final: "
          + (f"median {sorted(best)[len(best) // 2]:.2f}, max {max(best):.2f}" if best else "none"))
    if passing:
        print("  wrong agents at or above their 0.5 line (partial credit), by mutation: "
              + ", ".join(f"{name} {k}" for name, k in passing.most_common()))
    where_lost(packages, shares, exported)
    if args.clawenvkit:
        compare(Theirs(args.clawenvkit), written, out)
    return Counter({"single": len(single), "exported_single": exported_single, "files": w, "all_caught": all_caught,
                    "all_below": all_below, "agents": agents, "agents_passing": sum(passing.values())})


def _options(args: argparse.Namespace) -> str:
    """The export options measured, as the command line says them."""
    return f" (--min-weight-share {args.min_weight_share:g}" + (", --below-their-pass-line)" if args.below_pass_line
                                                                else ")")


def where_lost(packages: list[TaskPackage], shares: list[float], exported: list[bool]) -> None:
    """Mean share per capability and per template, and per template the checks not carried (each
    check id once, with its weight and the first clause of its reason) and the refusals."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(packages):
        groups.setdefault(p.capability, []).append(i)
    print("mean share by capability: " + ", ".join(
        f"{cap} {sum(shares[i] for i in idx) / len(idx):.3f}" for cap, idx in sorted(groups.items())))
    by_template: dict[tuple[str, str], list[int]] = {}
    for i, p in enumerate(packages):
        by_template.setdefault((p.capability, p.workflow), []).append(i)
    print("by template (packages, exported, mean share; checks not carried, in how many packages):")
    for (cap, workflow), idx in sorted(by_template.items()):
        print(f"  {cap} / {workflow}: {len(idx)}, {sum(exported[i] for i in idx)}, "
              f"{sum(shares[i] for i in idx) / len(idx):.3f}")
        lost: Counter[str] = Counter()
        refused: Counter[str] = Counter()
        for i in idx:
            t = translate(packages[i], 0.0)
            for u in t.unmapped:
                if not u.safety:
                    lost[f"{_stem(u.id)} ({u.kind}, {u.weight:g}): {_gist(u.reason)}"] += 1
            if t.refusal and t.refusal[0] != "weight_lost":
                refused[t.refusal[0]] += 1
        for what, k in lost.most_common():
            print(f"      - {what} ×{k}")
        for reason, k in refused.most_common():
            print(f"      refused {reason} ×{k}")


def _gist(reason: str) -> str:
    """A reason without the package's own values (quoted texts, numbers), so reasons group."""
    return re.sub(r"(?<![A-Za-z])'(?:\\.|[^'\\])*'(?![A-Za-z])|\"[^\"]*\"|\{.*?\}|\d+", "…", reason)[:110]


def _stem(check_id: str) -> str:
    """A per-item check id without its number (``step-3`` → ``step-N``)."""
    head, _, tail = check_id.rpartition("-")
    return f"{head}-N" if head and tail.isdigit() else check_id


def compare(theirs: Theirs, written: list[tuple[TaskPackage, dict[str, Any]]], out: Path) -> None:
    valid = full = null_ok = agree_ref = agree_null = wrong = wrong_agree = wrong_passing = 0
    statuses: Counter[int] = Counter()
    for package, task in written:
        services = task_services(task)
        valid += not theirs.validate(task, services=services)
        audit, answered = theirs.replay(task, package, out)
        statuses.update(answered)
        trajectory = execute(package)
        answer = trajectory.answer
        result = theirs.engine.grade(task, audit, answer)
        no_judge = [c for c in result.component_results if c.name not in _judges(task)]
        full += all(c.score >= 1.0 - 1e-9 for c in no_judge)
        ours = grade(task, audit_data(package, trajectory, task["tools"]), answer)
        agree_ref += abs(ours.completion - result.completion) < 1e-9
        null = theirs.engine.grade(task, {s: [] for s in services}, "")
        null_ok += null.final_score < PASS_THRESHOLD
        agree_null += abs(null.final_score - null_agent_grade(task).final) < 1e-9
        for agent in wrong_agents(package):  # their grader on the calls synth's world logged for them
            audit_of = audit_data(package, agent.trajectory, task["tools"])
            their_final = theirs.engine.grade(task, audit_of, agent.trajectory.answer).final_score
            ours_final = grade(task, audit_of, agent.trajectory.answer).final
            wrong += 1
            wrong_agree += abs(their_final - ours_final) < 1e-9
            wrong_passing += their_final >= PASS_THRESHOLD
    w = max(len(written), 1)
    print("ClawEnvKit's own code on the files written:")
    print(f"  their validate_task_config accepts: {valid / w:.1%}")
    print(f"  reference replayed on their mock services: every non-judge component 1.0 in {full / w:.1%}; "
          f"statuses {dict(sorted(statuses.items()))}")
    print(f"  their completion equals ours on that audit: {agree_ref / w:.1%}")
    print(f"  do-nothing agent below their 0.5: {null_ok / w:.1%}; their null final equals ours: {agree_null / w:.1%}")
    print(f"  synth's wrong agents ({wrong}, their calls as synth's world logs them): their final equals ours for "
          f"{wrong_agree / max(wrong, 1):.1%}; at or above their 0.5: {wrong_passing}")


def _judges(task: dict[str, Any]) -> set[str]:
    return {c["name"] for c in task["scoring_components"] if c["check"]["type"] == "llm_judge"}


if __name__ == "__main__":
    main()

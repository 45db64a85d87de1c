"""synth: verified training environments (task packages) for tool-using LLM agents.

The public Python API; everything else is internal and may move::

    import pipeline as synth

    packages = synth.generate("multi-turn", 10)          # verified, offline by default
    verdict = synth.verify_package(packages[0])          # Verdict: accepted, findings (with witnesses), review, sft_ready
    env = synth.TaskEnv(packages[0])                     # reset / step / score, for RL
    summary = synth.start_run(synth.RunOptions(capability="general", count=20))  # into output/catalog.duckdb
    for package in synth.load_packages("output/catalog.duckdb", where="capability = 'general'"):
        env = synth.TaskEnv(package)                     # the catalog's accepted packages, as environments

Functions that run an event loop (``generate``, ``start_run``, ``resume_run``, ``regenerate``)
and ``import_tasks`` each have an async form named with an ``a`` in front (``agenerate``,
``astart_run``, ``aresume_run``, ``aregenerate``, ``aimport_tasks``) that takes the same arguments:
``await`` it from async code. The plain forms work anywhere, inside a running event loop too
(a notebook): there they run on their own loop in a worker thread and block until done.

Names are imported when first used, so ``import pipeline`` stays cheap (the ``synth`` command
starts in a fraction of a second and never imports the model client unless a model is used). No
module of the package shares a name with a public name, so importing internals never replaces one
(the generators live in ``pipeline.generation``; ``pipeline.generate`` is the function).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # the contract
    "TaskPackage": "pipeline.core.package",
    "load_package": "pipeline.core.package",
    # verification
    "verify_package": "pipeline.verify.verifier",
    "Verdict": "pipeline.core.outcomes",
    "Finding": "pipeline.core.outcomes",
    "Witness": "pipeline.core.outcomes",
    "Code": "pipeline.core.codes",
    # environments and grading
    "TaskEnv": "pipeline.env.task_env",
    "load_packages": "pipeline.env.catalog_packages",
    "ToolCall": "pipeline.core.episode",
    "Ask": "pipeline.core.episode",
    "Answer": "pipeline.core.episode",
    "Episode": "pipeline.core.episode",
    "play_actions": "pipeline.core.episode",
    "Grader": "pipeline.core.grading",
    "ScoreReport": "pipeline.core.grading",
    # generation and runs
    "generate": "pipeline.runs.dataset",
    "agenerate": "pipeline.runs.dataset",
    "RunOptions": "pipeline.runs.options",
    "RunSummary": "pipeline.runs.options",
    "RunInterrupted": "pipeline.runs.api",
    "start_run": "pipeline.runs.api",
    "astart_run": "pipeline.runs.api",
    "resume_run": "pipeline.runs.api",
    "aresume_run": "pipeline.runs.api",
    "regenerate": "pipeline.runs.api",
    "aregenerate": "pipeline.runs.api",
    "import_tasks": "pipeline.runs.api",
    "aimport_tasks": "pipeline.runs.api",
    # rollouts: agent models on catalog packages
    "Rollout": "pipeline.core.rollouts",
    "RolloutOptions": "pipeline.runs.rollout_options",
    "RolloutSummary": "pipeline.runs.rollout_options",
    "RolloutInterrupted": "pipeline.runs.rollout",
    "start_rollouts": "pipeline.runs.rollout",
    "astart_rollouts": "pipeline.runs.rollout",
    "resume_rollouts": "pipeline.runs.rollout",
    "aresume_rollouts": "pipeline.runs.rollout",
    # the catalog and its exports
    "Catalog": "pipeline.catalog.store",
    "export_catalog": "pipeline.interop.export",
}

__all__ = [
    "Answer", "Ask", "Catalog", "Code", "Episode", "Finding", "Grader", "RunInterrupted", "RunOptions", "RunSummary",
    "ScoreReport", "TaskEnv", "TaskPackage", "ToolCall", "Verdict", "Witness", "agenerate",
    "aimport_tasks", "aregenerate", "aresume_run", "astart_run", "export_catalog", "generate", "import_tasks",
    "load_package", "load_packages", "play_actions", "regenerate", "resume_run", "start_run", "verify_package",
    "Rollout", "RolloutInterrupted", "RolloutOptions", "RolloutSummary", "aresume_rollouts", "astart_rollouts",
    "resume_rollouts", "start_rollouts",
]



def _version() -> str:
    """The installed distribution's version; in a checkout that is not installed, the version
    ``pyproject.toml`` beside the package states (the one place it is written)."""
    from importlib.metadata import PackageNotFoundError, version

    from pipeline.core.distribution import DISTRIBUTION

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    else:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
        value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})




if TYPE_CHECKING:
    from pipeline.catalog.store import Catalog
    from pipeline.core.codes import Code
    from pipeline.core.episode import Answer, Ask, Episode, ToolCall, play_actions
    from pipeline.core.grading import Grader, ScoreReport
    from pipeline.core.outcomes import Finding, Verdict, Witness
    from pipeline.core.package import TaskPackage, load_package
    from pipeline.core.rollouts import Rollout
    from pipeline.env.catalog_packages import load_packages
    from pipeline.env.task_env import TaskEnv
    from pipeline.interop.export import export_catalog
    from pipeline.runs.api import (
        RunInterrupted,
        aimport_tasks,
        aregenerate,
        aresume_run,
        astart_run,
        import_tasks,
        regenerate,
        resume_run,
        start_run,
    )
    from pipeline.runs.dataset import agenerate, generate
    from pipeline.runs.options import RunOptions, RunSummary
    from pipeline.runs.rollout import (
        RolloutInterrupted,
        aresume_rollouts,
        astart_rollouts,
        resume_rollouts,
        start_rollouts,
    )
    from pipeline.runs.rollout_options import RolloutOptions, RolloutSummary
    from pipeline.verify.verifier import verify_package

    __version__: str

"""synth: verified training environments (task packages) for tool-using LLM agents.

The public Python API; everything else is internal and may move::

    import pipeline as synth

    packages = synth.generate("multi-turn", 10)          # verified, offline by default
    verdict = synth.verify_package(packages[0])          # Verdict: accepted, findings (with witnesses), review, sft_ready
    env = synth.TaskEnv(packages[0])                     # reset / step / score, for RL
    with synth.Catalog.open("output/catalog.duckdb", read_only=True) as catalog:
        print(catalog.stats().accepted)

Names are imported when first used, so ``import pipeline`` stays cheap (the ``synth`` command
starts in a fraction of a second and never imports the model client unless a model is used).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

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
    "ToolCall": "pipeline.core.episode",
    "Ask": "pipeline.core.episode",
    "Answer": "pipeline.core.episode",
    "Episode": "pipeline.core.episode",
    "play_actions": "pipeline.core.episode",
    "Grader": "pipeline.core.grading",
    "ScoreReport": "pipeline.core.grading",
    # generation and runs
    "generate": "pipeline.runs.dataset",
    "RunOptions": "pipeline.runs.options",
    "RunSummary": "pipeline.runs.options",
    "start_run": "pipeline.runs.api",
    "resume_run": "pipeline.runs.api",
    "regenerate": "pipeline.runs.api",
    "import_tasks": "pipeline.runs.api",
    # the catalog and its exports
    "Catalog": "pipeline.catalog.store",
    "export_catalog": "pipeline.interop.export",
}

__all__ = [
    "Answer", "Ask", "Catalog", "Code", "Episode", "Finding", "Grader", "RunOptions", "RunSummary", "ScoreReport",
    "TaskEnv", "TaskPackage", "ToolCall", "Verdict", "Witness", "export_catalog", "generate", "import_tasks",
    "load_package", "play_actions", "regenerate", "resume_run", "start_run", "verify_package",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:
    from pipeline.catalog.store import Catalog
    from pipeline.core.codes import Code
    from pipeline.core.episode import Answer, Ask, Episode, ToolCall, play_actions
    from pipeline.core.grading import Grader, ScoreReport
    from pipeline.core.outcomes import Finding, Verdict, Witness
    from pipeline.core.package import TaskPackage, load_package
    from pipeline.env.task_env import TaskEnv
    from pipeline.interop.export import export_catalog
    from pipeline.runs.api import import_tasks, regenerate, resume_run, start_run
    from pipeline.runs.dataset import generate
    from pipeline.runs.options import RunOptions, RunSummary
    from pipeline.verify.verifier import verify_package

"""What a rollout job is asked to do (``RolloutOptions``) and what it reports (``RolloutProgress``,
``RolloutStart``, ``RolloutSummary``): the models shared by the job (``runs.rollout``), its episodes
on this event loop or on Ray (``runs.rollout_episode``, ``runs.ray_rollouts``) and the CLI."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from pydantic import Field

from pipeline.core.strict_model import StrictModel


class RolloutOptions(StrictModel):
    """A rollout job's settings, stored with the job (``rollout_jobs.parameters``) for ``--resume``.
    The catalog and the Ray cluster are ``start_rollouts``' own arguments."""

    elsewhere: ClassVar[Mapping[str, str]] = {
        "catalog": "the catalog is start_rollouts' argument: start_rollouts(options, catalog=PATH)",
        "catalog_path": "the catalog is start_rollouts' argument: start_rollouts(options, catalog=PATH)",
        "ray": "Ray is start_rollouts' argument: start_rollouts(options, ray='local')",
    }

    model: str
    """The agent model's name on the server."""
    base_url: str | None = None
    """The OpenAI-compatible server (None: ``OPENAI_BASE_URL``, else the OpenAI API)."""
    where: str | None = None
    """One SQL boolean over the ``packages`` columns selecting accepted packages (None: all)."""
    samples: int = Field(default=1, ge=1)
    """Episodes per package."""
    concurrency: int = Field(default=8, ge=1)
    """Episodes in progress at once."""
    max_turns: int = Field(default=30, ge=1)
    """Assistant messages per episode before it ends with ``turn_limit``."""
    user_model: str | None = None
    """A model that plays the simulated user (``env.llm_user``); None: the deterministic user."""
    user_base_url: str | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    """Sent with every agent request; None: the server's default."""
    stream: bool = False
    """Ask for streamed replies (assembled by ``ModelClient``)."""
    budget_tokens: int | None = Field(default=None, ge=1)
    """Prompt and completion tokens per episode before it ends with ``budget``."""
    timeout_s: float = Field(default=120.0, gt=0)
    """The deadline of one agent request, retries included: connect, first byte and the whole reply
    or stream (``ModelClient``'s ``timeout`` and ``deadline``); past it the episode ends with
    ``server_timeout``."""


class RolloutProgress(StrictModel):
    """Counters after every finished episode."""

    done: int = 0
    """Episodes finished in this invocation."""
    total: int = 0
    """Episodes this invocation runs (those a resumed job had recorded are left out)."""
    passed: int = 0
    errors: int = 0
    in_flight: int = 0
    tokens: int = 0


class RolloutStart(StrictModel):
    """What a job says when its work begins."""

    job_id: int
    model: str
    server: str
    packages: int
    samples: int
    todo: int
    """Episodes to run now."""
    recorded: int
    """Episodes the job had recorded before (a resumed job)."""


class RolloutSummary(StrictModel):
    """What one invocation of a job did (``rollouts`` counts this invocation's episodes)."""

    job_id: int
    model: str
    status: str
    packages: int
    samples: int
    recorded_before: int
    rollouts: int
    passed: int
    pass_rate: float | None
    """Passed over the episodes that count (``Rollout.counted``: not ended by the server or an
    error); None when none counts. ``mean_score`` is over the same episodes."""
    mean_score: float | None
    finish_reasons: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    rollouts_per_s: float


StartFn = Callable[[RolloutStart], None]
ProgressFn = Callable[[RolloutProgress], None]

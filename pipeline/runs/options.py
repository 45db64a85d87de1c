"""What a run is asked to do (``RunOptions``) and what it reports (``Progress``, ``RunSummary``,
``RegenSummary``): the models shared by the batch job, its Python API and the CLI."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import Field

from pipeline.core.strict_model import StrictModel
from pipeline.verify.verifier import Options


class RunOptions(StrictModel):
    """A run's settings, stored with the run (``runs.parameters``) so that ``resume`` continues it.
    Where the run is written and which model generates are ``start_run``'s own arguments."""

    elsewhere: ClassVar[Mapping[str, str]] = {
        "catalog": "the catalog is start_run's argument: start_run(options, catalog=PATH)",
        "catalog_path": "the catalog is start_run's argument: start_run(options, catalog=PATH)",
        "model": "the model is start_run's argument: start_run(options, model=NAME, base_url=URL)",
        "base_url": "the server is start_run's argument: start_run(options, model=NAME, base_url=URL)",
        "ray": "Ray is start_run's argument: start_run(options, ray='local')",
    }

    capability: str
    """The capability to generate (``synth capabilities`` lists them)."""
    service_profile: str = "default"
    """The service profile whose workflow templates (and so services) the run uses
    (``synth run --services``; ``synth services --profile`` lists each profile's services)."""
    count: int = Field(ge=1)
    """Accepted packages wanted."""
    max_attempts: int = Field(default=3, ge=1)
    """Attempts per slot: the first try and its repairs."""
    concurrency: int = Field(default=4, ge=1)
    """Generations in progress at once (an LLM request with its retries)."""
    seed: int = 7
    budget_tokens: int | None = Field(default=None, ge=1)
    """Stop opening attempts after this many tokens."""
    defect_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    """Offline only: the share of first attempts given a known defect on purpose."""
    obs_limit: int = 1_000
    sample_budget: int = 40_000
    require_sft: bool = False
    """Refuse packages whose reference loses evidence under the SFT policy (``obs_limit``,
    ``sample_budget``); otherwise they are accepted and stored with ``sft_ready`` false."""
    allow_unexportable: bool = False
    """Accept claw-profile packages ClawEnvKit's format cannot carry at full weight (otherwise
    ``not_exportable`` refuses them; ``pipeline/verify/exportable.py``)."""
    name: str | None = None
    reader: Literal["auto", "rules", "model"] = "auto"
    """Who confirms a reading of the request before a finding resting on it refuses
    (``runs.reading``): ``auto`` is the generator's model with one, the rules offline."""
    reader_model: str | None = None
    """The reader's model, when not the generator's."""
    reader_base_url: str | None = None
    """The reader's server, when not the generator's."""
    verify_processes: int | None = Field(default=None, ge=0)
    """Worker processes for verification; 0 verifies in this process; None picks the cheaper for
    the generator: in process for the offline generator (a worker costs more than it saves), one
    worker for an LLM (so verification never holds up requests in flight)."""

    def verifier_options(self) -> Options:
        """The verifier's options this run asks for."""
        return Options(obs_limit=self.obs_limit, sample_budget=self.sample_budget, require_sft=self.require_sft,
                       require_exportable=not self.allow_unexportable)


class Progress(StrictModel):
    """Counters the progress display reads after every recorded attempt."""

    accepted: int = 0
    rejected: int = 0
    in_flight: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    slots_opened: int = 0
    codes: Counter[str] = Field(default_factory=Counter)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class RunSummary(StrictModel):
    """What one run (or one resumption of it) did."""

    run_id: int
    capability: str
    generator: str
    model: str | None
    target: int
    accepted: int
    rejected_attempts: int
    slots: int
    failed_slots: int
    """Slots that used every attempt without an accepted package."""
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    """Wall time of this session, whole: from the call (``start_run``, ``resume_run``) to its end,
    with the start-up before the first slot (starting Ray, asking the model server once) and the
    shutdown after the last (ending Ray's workers)."""
    work_s: float
    """Of ``elapsed_s``, the time from the first slot opened to the last attempt recorded."""
    accepted_per_s: float
    """Packages accepted in this session per second of ``elapsed_s``."""
    status: str
    """``finished`` (target reached) or ``failed``."""
    stop_reason: str
    rejection_codes: dict[str, int]
    """Reason or failure code → rejected attempts carrying it."""


class RegenSummary(StrictModel):
    """What ``regenerate`` did: slots retried and repaired, per run."""

    slots: int
    repaired: int
    repair_rate: float | None
    by_run: dict[int, dict[str, int]]
    prompt_tokens: int
    completion_tokens: int


def run_parameters(options: RunOptions, generator_name: str, model: str | None, base_url: str | None) -> dict[str, Any]:
    """What a run records about itself (never an API key)."""
    return {**options.model_dump(), "generator": generator_name, "model": model, "base_url": base_url}

"""The mock-service catalogues: one YAML file per service, loaded into ``ServiceSpec``.

A service declares its collections (record fields, id field, id format) and its operations
(endpoint, parameter JSON Schema, read or write, collection, effect). The engine that runs them is
``pipeline.core.world``; adding a service means adding one YAML file.

Services come in profiles, each its own catalogue: ``default`` (the YAML files in this folder) and
one per subfolder (``claw/``: services that mirror ClawEnvKit's mock services, see
docs/clawenvkit.md). A package names its profile (``TaskPackage.service_profile``); service names
and endpoints are unique within a profile, not across profiles.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from pipeline.core import yaml_text
from pipeline.core.strict_model import StrictModel

SERVICES_DIR = Path(__file__).parent

Effect = Literal["list", "search", "get", "create", "update", "delete"]
Test = Literal["equals", "equals_ci", "contains", "contains_ci", "has", "any_contains", "at_least", "at_most",
               "day_window", "shares_token"]
Behaviour = Literal["job_history", "feeds_by_source", "playback_control", "playback_state", "playlists_with_tracks",
                    "extract_text", "ranked_search", "fetch_page", "image_lookup"]


class WhereSpec(StrictModel):
    """One list condition: the record passes when the test holds for any of ``fields``. A
    parameter that is absent, or whose value is one of ``unless`` (default: null), sets no
    condition. Tests, with ``v`` the argument and ``x`` the record's field:

    - ``equals``: ``x == v``; ``equals_ci``: both lower-cased strings are equal.
    - ``contains``: ``v`` is a substring of ``x`` (case-sensitive); ``contains_ci``: ignoring case.
    - ``has``: ``x`` is a list holding ``v``; ``any_contains``: ``x`` is a list with an item
      containing ``v`` as a substring.
    - ``at_least`` / ``at_most``: ``x >= v`` / ``x <= v`` compared as strings (ISO dates).
    - ``day_window``: ``v`` is a date ``YYYY-MM-DD``; ``x``, an ISO date-time (no offset means
      UTC), lies in ``[v 00:00 UTC, v + days)``, ``days`` the argument ``days_param`` (1 without
      one). A ``v`` that is not such a date answers ``{"error": "Invalid date format: v"}``.
    - ``shares_token``: the tokens of ``v`` and of the fields joined by spaces (list fields
      joined by spaces first) overlap; tokens of a text are its lower-cased whitespace-split
      words, every two-character slice of it lower-cased (but whitespace alone), and each CJK
      character.
    """

    param: str
    fields: list[str] = Field(min_length=1)
    test: Test
    unless: list[Any] = Field(default_factory=lambda: [None])
    days_param: str | None = None


class SnippetSpec(StrictModel):
    """A ``snippet`` added to each listed record: the first ``length`` characters of ``field``
    followed by ``suffix`` (always)."""

    field: str
    length: int = Field(gt=0)
    suffix: str = ""


class FixtureSpec(StrictModel):
    """How the service's collections sit in a ClawEnvKit fixture file (see
    ``pipeline.core.services.claw_fixtures``): ``collections`` in the order the file must list
    them, the first being the one their list loader reads; ``raw``: the service reads the named
    keys of the file itself (every collection listed is loaded); ``files``: the records are files
    on disk (documents), not fixture data."""

    collections: list[str] = Field(min_length=1)
    raw: bool = False
    files: bool = False


class CollectionSpec(StrictModel):
    record: str = Field(description="Singular noun of one record, the key of single-record results.")
    nouns: list[str] = Field(default_factory=list, description="Other singular nouns a request uses for one "
                             "record ('todo' for a task, 'meeting' for an event): 'three todos' counts tasks.")
    id_field: str = "id"
    id_format: str = Field(description="Python format for new ids, e.g. 'todo-{n:03d}'.")
    fields: dict[str, dict[str, Any]] = Field(description="Record fields as JSON Schema properties.")
    id_numbering: Literal["highest", "count"] = Field(
        "highest", description="A new id's number: after the highest ever held (highest), or the collection's "
                               "length plus one (count, as ClawEnvKit's services number; a deleted id can recur).")
    keyed: bool = Field(True, description="Records carry an id; false for outbox collections (sent messages, "
                                          "orders): created records get none, and none can be got by id.")


class OperationSpec(StrictModel):
    """One endpoint. Effects:

    - ``list``: records whose fields equal every given filter parameter (``filters``: param→field),
      at most ``limit`` if given; result ``{<collection>: [...], "total": n}`` where ``total``
      counts every match, so a caller can tell a limited page from the whole.
    - ``search``: records where ``query`` is a case-insensitive substring of any ``search_fields``
      (and filters match); same result shape as ``list``.
    - ``get``: the record whose id equals ``id_param``; 404 if none; result ``{<record>: {...}}``.
    - ``create``: a new record from the parameters mapped by ``fields`` (param→field, default: same
      name), ``defaults`` for the rest, a new id from the collection's ``id_format``, and
      ``timestamp_field`` from the package clock; result ``{<record>: {...}}``.
    - ``update``: set the given mapped fields on the record with ``id_param``; 404 if none.
    - ``delete``: remove the record with ``id_param``; 404 if none; result ``{"deleted": id}``.

    ``refs`` (param→"service.collection[.field]") makes a write fail with 404 when a value does
    not name an existing record (by id, or by the named field).

    ``intents`` (writes): word or phrase beginnings by which a request asks for this operation
    ("notif" covers notify and notification); ``_`` in a phrase stands for one to three words ("let
    _ know" covers "let Kwame Asante know"). A write none of them names in the request is
    unrequested. Keep them specific: "update" names updating a record, not messaging someone.

    Fields for services that mirror another implementation (each off by default):

    - ``where``: list conditions (``WhereSpec``), beside ``filters``; ``sort_by``: listed records
      ordered by that field as text (stable; missing is ""); ``hide_fields``: fields left out of
      listed records; ``snippet``: a snippet field added to listed records.
    - ``limit_param`` (default ``limit``): the parameter limiting a list; ``total``: ``matches``
      counts every match, ``returned`` counts the records returned after the limit.
    - ``response``: the result body as a template; ``"$record"`` is the record (got, created, the
      updated copy, or the deleted one), ``"$record.<field>"`` a field of it, ``"$records"`` the
      listed records, ``"$total"`` their total, ``"$arg.<name>"`` an argument (after defaults);
      anything else is literal.
    - ``not_found``: the message of an unknown id, ``{id}`` the id given: answered with HTTP 200
      and ``{"error": message}`` instead of 404. ``id_also``: other record fields an id may equal.
    - ``constants``: fields an update also sets; ``skip_empty``: a create or an update ignores
      empty values ("", [], false, 0), so a create keeps the ``defaults`` for them; ``date_field``: set to the clock's date (YYYY-MM-DD) on create and update.
    - ``prune_refs`` (param → "service.collection"): list items naming no record are left out.
    - ``behaviour``: a named effect beyond the generic ones (``pipeline.core.world`` documents
      each); such operations may act on no id (``id_param`` unset).
    """

    name: str
    endpoint: str = Field(pattern=r"^/[a-z0-9_]+(/[a-z0-9_]+)+$")
    description: str
    access: Literal["read", "write"]
    collection: str
    effect: Effect
    parameters: dict[str, Any]
    id_param: str | None = None
    search_fields: list[str] = Field(default_factory=list)
    filters: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)
    refs: dict[str, str] = Field(default_factory=dict)
    timestamp_field: str | None = None
    intents: list[str] = Field(default_factory=list)
    where: list[WhereSpec] = Field(default_factory=list)
    sort_by: str | None = None
    hide_fields: list[str] = Field(default_factory=list)
    snippet: SnippetSpec | None = None
    limit_param: str = "limit"
    total: Literal["matches", "returned"] = "matches"
    response: Any = None
    not_found: str | None = None
    id_also: list[str] = Field(default_factory=list)
    constants: dict[str, Any] = Field(default_factory=dict)
    skip_empty: bool = False
    date_field: str | None = None
    prune_refs: dict[str, str] = Field(default_factory=dict)
    behaviour: Behaviour | None = None

    @model_validator(mode="after")
    def _consistent(self) -> OperationSpec:
        needs_id = self.effect in ("get", "update", "delete") and self.behaviour is None
        if needs_id and not self.id_param:
            raise ValueError(f"{self.endpoint}: effect {self.effect} needs id_param")
        if (self.access == "write") != (self.effect in ("create", "update", "delete")):
            raise ValueError(f"{self.endpoint}: access {self.access} disagrees with effect {self.effect}")
        if self.effect == "search" and not self.search_fields:
            raise ValueError(f"{self.endpoint}: search needs search_fields")
        return self

    def field_for(self, param: str) -> str:
        return self.fields.get(param, param)

    @property
    def target_param(self) -> str:
        """The parameter naming the record a get, update or delete acts on (``id_param``, which
        these effects are checked to have); ValueError for the other effects."""
        if self.id_param is None:
            raise ValueError(f"{self.endpoint}: effect {self.effect} names no record by id")
        return self.id_param


class ServiceSpec(StrictModel):
    """A service. ``dialect``: how calls are checked and answered. ``synth``: arguments must match
    the parameter schema (400 naming the field otherwise), unknown ids answer 404. ``fastapi``: as a
    FastAPI service with pydantic request models answers (``pipeline.core.services.request_models``):
    bad arguments answer 422 with ``{"detail": [{"type", "loc", "msg"}, ...]}``, unknown arguments
    are dropped, parameter ``default``s fill omitted ones. ``fixture``: the ClawEnvKit fixture
    layout of the service's collections."""

    name: str
    description: str
    collections: dict[str, CollectionSpec]
    operations: list[OperationSpec]
    dialect: Literal["synth", "fastapi"] = "synth"
    fixture: FixtureSpec | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ServiceSpec:
        seen: set[str] = set()
        for op in self.operations:
            if not op.endpoint.startswith(f"/{self.name}/"):
                raise ValueError(f"{op.endpoint}: endpoints of {self.name} start with /{self.name}/")
            if op.collection not in self.collections:
                raise ValueError(f"{op.endpoint}: unknown collection {op.collection!r}")
            if op.endpoint in seen:
                raise ValueError(f"{op.endpoint}: declared twice")
            seen.add(op.endpoint)
            fields = self.collections[op.collection].fields
            named = [*op.search_fields, *op.filters.values(), *(f for w in op.where for f in w.fields),
                     *([op.sort_by] if op.sort_by else [])]
            unknown = [f for f in named if f not in fields]
            if unknown:
                raise ValueError(f"{op.endpoint}: search/filter fields not in the record: {unknown}")
            if op.id_param and op.id_param not in op.parameters.get("required", []):
                raise ValueError(f"{op.endpoint}: id_param {op.id_param!r} must be a required parameter")
            if op.effect in ("get", "update", "delete") and op.id_param and not self.collections[op.collection].keyed:
                raise ValueError(f"{op.endpoint}: collection {op.collection!r} has no ids to act on")
        if self.fixture is not None:
            unknown = [c for c in self.fixture.collections if c not in self.collections]
            if unknown:
                raise ValueError(f"{self.name}: fixture collections not declared: {unknown}")
        return self

    def operation(self, endpoint: str) -> OperationSpec | None:
        return next((op for op in self.operations if op.endpoint == endpoint), None)

    @property
    def endpoints(self) -> list[str]:
        return [op.endpoint for op in self.operations]


def load_service_file(path: Path) -> ServiceSpec:
    spec = ServiceSpec.model_validate(yaml_text.load(path.read_text(encoding="utf-8")))
    if spec.name != path.stem:
        raise ValueError(f"{path.name}: service name {spec.name!r} must match the file name")
    return spec


DEFAULT_PROFILE = "default"
CLAW_PROFILE = "claw"
"""The profile whose services mirror ClawEnvKit's (``claw/``): its packages export to their format."""


@cache
def profile_names() -> tuple[str, ...]:
    """The service profiles shipped: ``default``, then each subfolder holding service files."""
    folders = sorted(p.name for p in SERVICES_DIR.iterdir() if p.is_dir() and any(p.glob("*.yaml")))
    return (DEFAULT_PROFILE, *folders)


def unknown_profile(profile: str) -> str | None:
    """Why ``profile`` is not a shipped service profile (naming the profiles there are), or None."""
    if profile in profile_names():
        return None
    return f"unknown service profile {profile!r}; profiles: {', '.join(profile_names())}"


def known_profile(profile: str) -> str:
    """``profile`` when it is a shipped service profile, else ValueError (``unknown_profile``)."""
    problem = unknown_profile(profile)
    if problem:
        raise ValueError(problem)
    return profile


ProfileName = Annotated[str, AfterValidator(known_profile)]
"""A field naming a shipped service profile."""


def profile_dir(profile: str) -> Path:
    """The folder of a profile's service files; ValueError for an unknown profile."""
    return SERVICES_DIR if known_profile(profile) == DEFAULT_PROFILE else SERVICES_DIR / profile


def catalogue(profile: str = DEFAULT_PROFILE) -> dict[str, ServiceSpec]:
    """Every service of a profile, by name. Cross-service ``refs`` must name a real collection of
    a real service of the same profile. ValueError for an unknown profile."""
    return _load_catalogue(profile)


@cache
def _load_catalogue(profile: str) -> dict[str, ServiceSpec]:
    services = {p.stem: load_service_file(p) for p in sorted(profile_dir(profile).glob("*.yaml"))}
    for spec in services.values():
        for op in spec.operations:
            for param, target in op.refs.items():
                service, _, rest = target.partition(".")
                if rest.split(".")[0] not in getattr(services.get(service), "collections", {}):
                    raise ValueError(f"{op.endpoint}: refs {param!r} → unknown collection {target!r}")
    return services


def get_service(name: str, profile: str = DEFAULT_PROFILE) -> ServiceSpec | None:
    return catalogue(profile).get(name)


@lru_cache(maxsize=1024)
def record_id_field(collection: str, profile: str = DEFAULT_PROFILE) -> str | None:
    """The field holding the id of a record of collection ``service.name`` in ``profile``
    (``id`` in the default profile, ``task_id``, ``event_id`` ... in ``claw``); None for a keyless
    collection (an outbox: its records carry no id). ``id`` for a service or collection the
    profile lacks."""
    service, _, name = collection.partition(".")
    spec = get_service(service, profile) if profile in profile_names() else None
    coll = spec.collections.get(name) if spec is not None else None
    if coll is None:
        return "id"
    return coll.id_field if coll.keyed else None


@lru_cache(maxsize=256)
def id_shapes(services: tuple[str, ...], profile: str = DEFAULT_PROFILE) -> tuple[re.Pattern[str], ...]:
    """What the record ids of ``services`` look like (``todo-`` and digits ...), one pattern per
    collection, in service and collection order; unknown services have none."""
    return tuple(re.compile(re.escape(coll.id_format.split("{")[0]) + r"\d+$")
                 for name in services if (spec := get_service(name, profile))
                 for coll in spec.collections.values() if coll.keyed)


@cache
def _routes(profile: str) -> dict[str, tuple[ServiceSpec, OperationSpec]]:
    return {op.endpoint: (spec, op) for spec in catalogue(profile).values() for op in spec.operations}


def find_operation(endpoint: str, profile: str = DEFAULT_PROFILE) -> tuple[ServiceSpec, OperationSpec] | None:
    """The service and operation behind an endpoint of a profile's catalogue, or None."""
    return _routes(profile).get(endpoint)


def default_tool_name(service: str, op: OperationSpec, profile: str = DEFAULT_PROFILE) -> str:
    """The conventional tool name for an operation: ``<service>_<operation name>`` in the default
    profile; in another profile, the operation's own name (the name its ecosystem calls it by,
    such as ClawEnvKit's canonical action names)."""
    return f"{service}_{op.name}" if profile == DEFAULT_PROFILE else op.name


def intent_pattern(intents: list[str]) -> str:
    """A regex alternation of ``intents`` (see ``OperationSpec``): each a word or phrase
    beginning, ``_`` standing for one to three words, the first not "me" or "us" ("let me know"
    asks for an answer, not a message)."""
    words = r"(?!(?:me|us)\b)[\w'’.@+-]+(?:\s+[\w'’.@+-]+){0,2}"
    return "|".join(r"\s+".join(words if part == "_" else re.escape(part) for part in w.split()) for w in intents)

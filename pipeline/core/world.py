"""The mock-service world: stateful, deterministic, in-process services built from a package.

Every call, good or bad, lands in the audit log. Bad input gets a 400 whose message names the bad
field; an unknown id gets 404; an unknown endpoint gets 404 listing the service's real endpoints;
``faults`` inject deterministic errors. Time comes from the package clock (``now`` plus one second
per call made so far), never from the wall clock. Services of the ``fastapi`` dialect answer as
FastAPI services do instead: bad input gets a 422 listing the errors (``request_models``), unknown
arguments are dropped, and an operation's ``not_found`` turns an unknown id into a 200 error body.

Records are values: no operation changes a record in place (an update stores a changed copy), and
a collection is copied on a world's first write to it after ``reset`` or ``fork``. So ``reset``
costs nothing, a ``fork`` costs a few dict copies, and forks never see each other's writes.
Results, the audit log and the state share records; none of them may be changed by a caller
(``TaskEnv`` gives agents copies). A world keeps the argument objects it is called with: callers
must not change them afterwards.
"""

from __future__ import annotations

import posixpath
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from pathlib import PurePosixPath
from typing import Any

from pipeline.core.arguments import ArgumentCheck
from pipeline.core.jsonvalues import clone
from pipeline.core.package import DEFAULT_NOW, Fault, TaskPackage, Tool
from pipeline.core.services import (
    DEFAULT_PROFILE,
    CollectionSpec,
    OperationSpec,
    ServiceSpec,
    catalogue,
    find_operation,
    get_service,
)
from pipeline.core.services.request_models import RequestModel
from pipeline.core.trajectory import AuditEntry, State

Record = dict[str, Any]


@dataclass(slots=True)
class CallResult:
    status: int
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _error(status: int, message: str, **extra: Any) -> CallResult:
    return CallResult(status=status, body={"error": {"status": status, "message": message, **extra}})


def empty_state(services: list[str], profile: str = DEFAULT_PROFILE) -> State:
    """Every collection of every named service of ``profile``, empty."""
    out: State = {}
    for name in services:
        spec = get_service(name, profile)
        if spec is not None:
            out[name] = {c: [] for c in spec.collections}
    return out


class World:
    """Services named by a package, with its initial state, tools, faults and clock."""

    def __init__(
        self,
        services: list[str],
        initial_state: State | None = None,
        tools: list[Tool] | None = None,
        faults: list[Fault] | None = None,
        now: str = DEFAULT_NOW,
        profile: str = DEFAULT_PROFILE,
    ) -> None:
        self.services = list(services)
        self.profile = profile
        self.tools = {t.name: t for t in tools or []}
        self.faults = list(faults or [])
        self.now = now
        base = datetime.fromisoformat(now.replace("Z", "+00:00"))
        self._start = base.astimezone(UTC) if base.tzinfo is not None else base
        # What ``reset`` restores: the caller's own lists, never changed (copy on write).
        self.initial: State = empty_state(self.services, profile)
        for service, collections in (initial_state or {}).items():
            self.initial.setdefault(service, {}).update(collections)
        self._initial_highest: dict[str, int] = {}  # "service.collection" → highest id number initially
        self._clocks: dict[int, str] = {}
        """The clock's text after so many calls (shared by forks: they share ``now``)."""
        self._routes: dict[str, _Route | None] = {}
        """This world's routes by endpoint (None: not a route of its services); shared by forks."""
        self._valid: dict[tuple[str, int], dict[str, Any]] = {}
        """A package's own argument objects (``call(..., known=True)``) that passed their endpoint's
        check, by endpoint and identity: a replayed reference step brings the same object again
        (shared by forks; emptied by ``reset`` and past ``_REMEMBERED_ARGUMENTS``)."""
        self.reset()

    @classmethod
    def from_package(cls, package: TaskPackage) -> World:
        return cls(package.services, package.initial_state, package.tools, package.faults, package.now,
                   package.service_profile)

    # ------------------------------------------------------------------ state

    def reset(self) -> None:
        """Back to the initial state, with an empty audit log and fault counters."""
        self._valid.clear()
        self.state: State = {service: dict(collections) for service, collections in self.initial.items()}
        self._owned: set[tuple[str, str]] = set()  # collections this world has copied since reset/fork
        self.audit: list[AuditEntry] = []
        self._tool_calls: dict[str, int] = {}
        self.allocated: dict[str, int] = {}  # "service.collection" → highest id number handed out

    def fork(self) -> World:
        """A copy of this world as it is now (state, audit log, fault counters, ids handed out)
        that evolves independently of it."""
        twin = object.__new__(World)
        twin.services, twin.tools, twin.faults, twin.now, twin._start, twin.profile = (
            self.services, self.tools, self.faults, self.now, self._start, self.profile)
        twin.initial, twin._initial_highest, twin._valid = self.initial, self._initial_highest, self._valid
        twin._routes, twin._clocks = self._routes, self._clocks
        twin.state = {service: dict(collections) for service, collections in self.state.items()}
        twin._owned = set()
        self._owned = set()  # the twin shares this world's lists now: both copy before writing
        twin.audit = list(self.audit)
        twin._tool_calls = dict(self._tool_calls)
        twin.allocated = dict(self.allocated)
        return twin

    def collection(self, dotted: str) -> list[Record]:
        service, _, name = dotted.partition(".")
        return self.state.get(service, {}).get(name, [])

    def _writable(self, service: str, name: str) -> list[Record]:
        """The collection's list, copied first if this world does not own it yet."""
        key = (service, name)
        collections = self.state.setdefault(service, {})
        if key not in self._owned:
            collections[name] = list(collections.get(name, []))
            self._owned.add(key)
        return collections[name]

    def _clock(self) -> str:
        seconds = len(self.audit)
        text = self._clocks.get(seconds)
        if text is None:
            text = self._clocks[seconds] = _clock_text(self._start, seconds)
        return text

    # ------------------------------------------------------------------ calls

    def call(self, tool: str, args: dict[str, Any] | None = None, known: bool = False) -> CallResult:
        """Call a tool of the package: resolve it to its service operation, apply faults, run it.
        ``known``: ``args`` is the package's own data (a reference step's arguments, never changed
        while the package is verified), so that passing its check once is remembered; any other
        arguments, an agent's, are checked on every call."""
        args = args if args is not None else {}
        spec = self.tools.get(tool)
        if spec is None:
            result = _error(404, f"unknown tool {tool!r}; tools offered: {sorted(self.tools)}")
            return self._log(tool, "", args, result)
        count = self._tool_calls[tool] = self._tool_calls.get(tool, 0) + 1
        for fault in self.faults:
            if fault.tool == tool and fault.on_call <= count < fault.on_call + fault.times:
                extra = {"retry_after": fault.retry_after} if fault.retry_after is not None else {}
                return self._log(tool, spec.endpoint, args, _error(fault.status, fault.message, **extra))
        result, read = self._dispatch(spec.endpoint, args, known)
        self.audit.append(AuditEntry(tool, spec.endpoint, read, result.status, result.body))
        return result

    def answered_by_fault(self, tool: str) -> bool:
        """Whether the last call of ``tool`` was answered by one of the package's faults."""
        count = self._tool_calls.get(tool, 0)
        return any(f.tool == tool and f.on_call <= count < f.on_call + f.times for f in self.faults)

    def call_endpoint(self, endpoint: str, args: dict[str, Any] | None = None) -> CallResult:
        """Call a service endpoint directly (the HTTP route), without a tool binding or faults."""
        args = args if args is not None else {}
        result, read = self._dispatch(endpoint, args)
        return self._log(None, endpoint, read, result)

    def _log(self, tool: str | None, endpoint: str, args: dict[str, Any], result: CallResult) -> CallResult:
        self.audit.append(AuditEntry(tool, endpoint, args, result.status, result.body))
        return result

    def _dispatch(self, endpoint: str, args: dict[str, Any], known: bool = False) -> tuple[CallResult, dict[str, Any]]:
        """The call's result, and its arguments as the audit log records them: for a
        ``fastapi``-dialect service that accepts them, as its request model dumps them (converted,
        defaults filled in, None for the rest, unknown ones dropped: what ClawEnvKit's services log
        as the request body); otherwise ``args`` as given."""
        route = self._routes.get(endpoint, _UNROUTED)
        if route is _UNROUTED:
            found = _route(endpoint, self.profile)
            route = self._routes[endpoint] = found if found is not None and found.service.name in self.services else None
        if route is not None and route.request is not None:
            parsed, errors = route.request.parse(args)
            if errors:
                return CallResult(status=422, body={"detail": errors}), args
            missing = self._dangling_ref(route, parsed) if route.refs else None
            return (_error(404, missing) if missing else route.effect(self, route, parsed)), route.request.logged(parsed)
        if route is not None:
            key = (endpoint, id(args))
            if not known or key not in self._valid:
                problem = route.check.problem(args)
                if problem:
                    return _error(400, problem), args
                if known:
                    if len(self._valid) >= _REMEMBERED_ARGUMENTS:
                        self._valid.clear()
                    self._valid[key] = args  # kept alive: its id names it alone
            missing = self._dangling_ref(route, args) if route.refs else None
            if missing:
                return _error(404, missing), args
            return route.effect(self, route, args), args
        service_name = endpoint.strip("/").split("/")[0]
        service = catalogue(self.profile).get(service_name)
        if service is None or service_name not in self.services:
            return _error(404, f"no service for endpoint {endpoint!r}; services in this world: "
                               f"{', '.join(self.services)}"), args
        return _error(404, f"unknown endpoint {endpoint!r} on service {service_name!r}; "
                           f"valid endpoints: {', '.join(service.endpoints)}", valid_endpoints=service.endpoints), args

    def _dangling_ref(self, route: _Route, args: dict[str, Any]) -> str | None:
        """Why a ``refs`` argument names no existing record, or None."""
        for param, ref_service, ref_coll, field_name in route.refs:
            if param not in args:
                continue
            pool = self.state.get(ref_service, {}).get(ref_coll, [])
            values = args[param] if isinstance(args[param], list) else [args[param]]
            for v in values:
                for r in pool:  # a loop: faster than any() over a generator, on the hot path
                    if r.get(field_name) == v:
                        break
                else:
                    return f"field {param!r}: no {ref_coll} record with {field_name} {v!r}"
        return None

    def _next_id(self, route: _Route) -> str:
        """A new id in the collection's format, after every id it ever held: a deleted id is never reused."""
        coll, where = route.collection, route.where
        if coll.id_numbering == "count":
            return coll.id_format.format(n=len(self.collection(where)) + 1)
        floor = self._initial_highest.get(where)
        if floor is None:
            pattern = _id_pattern(coll.id_format)
            initial = self.initial.get(route.service.name, {}).get(route.op.collection, [])
            numbers = (pattern.match(str(r.get(coll.id_field, ""))) for r in initial)
            floor = self._initial_highest[where] = max((int(m.group(1)) for m in numbers if m), default=0)
        number = max(floor, self.allocated.get(where, 0)) + 1
        self.allocated[where] = number
        return coll.id_format.format(n=number)


@dataclass(frozen=True, slots=True)
class _Route:
    """An endpoint of the catalogue compiled for calls: its service and operation, the compiled
    check of its parameters, its effect, its collection, and its ``refs`` resolved to
    ``(param, service, collection, field)``."""

    service: ServiceSpec
    op: OperationSpec
    check: ArgumentCheck
    effect: Callable[[World, _Route, dict[str, Any]], CallResult]
    collection: CollectionSpec
    where: str
    """``service.collection``: the key of the collection's id counters."""
    refs: tuple[tuple[str, str, str, str], ...]
    defaults: dict[str, Any]
    """``op.defaults``; copied into each created record (deeply only when it holds lists or dicts)."""
    nested_defaults: bool
    request: RequestModel | None = None
    """The request model of a ``fastapi``-dialect service (None: the ``synth`` dialect)."""
    prune: tuple[tuple[str, str, str, str], ...] = ()
    """``op.prune_refs`` resolved like ``refs``."""

    @property
    def missing(self) -> Any:
        """What a field a record lacks reads as in id lookups and ``where`` tests: ``""`` for a
        ``fastapi``-dialect service (ClawEnvKit's services read fields with ``.get(name, "")``),
        else None."""
        return "" if self.request is not None else None


_ROUTES: dict[tuple[str, str], _Route | None] = {}
_REMEMBERED_ARGUMENTS = 4096
_UNROUTED: Any = object()


def _route(endpoint: str, profile: str) -> _Route | None:
    """The compiled route of an endpoint of a profile's catalogue (endpoints are unique across the
    profile's services), or None."""
    key = (profile, endpoint)
    if key in _ROUTES:
        return _ROUTES[key]
    found = find_operation(endpoint, profile)
    route = None
    if found is not None:
        service, op = found
        refs, prune = _resolved(op.refs, profile), _resolved(op.prune_refs, profile)
        effect = _BEHAVIOURS[op.behaviour] if op.behaviour else _EFFECTS[op.effect]
        request = RequestModel(op.parameters) if service.dialect == "fastapi" else None
        route = _Route(service, op, ArgumentCheck(op.parameters), effect,
                       service.collections[op.collection], f"{service.name}.{op.collection}", refs,
                       op.defaults, any(isinstance(v, (dict, list)) for v in op.defaults.values()), request, prune)
    _ROUTES[key] = route
    return route


def argument_check(endpoint: str, profile: str) -> ArgumentCheck | None:
    """The compiled parameter check of an endpoint of a profile's catalogue (the one its calls
    pass), or None for an endpoint it does not have."""
    route = _route(endpoint, profile)
    return route.check if route is not None else None


def _resolved(refs: dict[str, str], profile: str) -> tuple[tuple[str, str, str, str], ...]:
    """``refs``-style mappings (param → "service.collection[.field]") as ``(param, service,
    collection, field)``, the field defaulting to the collection's id field."""
    out = []
    for param, target in refs.items():
        ref_service, ref_coll, *ref_field = target.split(".")
        ref_spec = get_service(ref_service, profile)
        field_name = ref_field[0] if ref_field else (ref_spec.collections[ref_coll].id_field if ref_spec else "id")
        out.append((param, ref_service, ref_coll, field_name))
    return tuple(out)


@lru_cache(maxsize=4096)
def _clock_text(start: datetime, seconds: int) -> str:
    """``start`` plus ``seconds`` as ISO text (shared by the worlds of packages with one clock)."""
    return (start + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


@cache
def _id_pattern(id_format: str) -> re.Pattern[str]:
    """Matches the ids ``id_format`` makes (``todo-{n:03d}`` → ``todo-(\\d+)``), the number as group 1."""
    parts = list(string.Formatter().parse(id_format))
    suffix = "".join(literal for literal, *_ in parts[1:])
    return re.compile(re.escape(parts[0][0]) + r"(\d+)" + re.escape(suffix) + "$")


# --------------------------------------------------------------------------- effects


def _render(template: Any, args: dict[str, Any], record: Any = None, records: Any = None, total: Any = None) -> Any:
    """``OperationSpec.response`` filled in: ``$record``, ``$record.<field>``, ``$records``,
    ``$total``, ``$arg.<name>`` (null when absent); other values literal."""
    if isinstance(template, str) and template.startswith("$"):
        if template == "$record":
            return record
        if template == "$records":
            return records
        if template == "$total":
            return total
        if template.startswith("$record."):
            return record.get(template[8:]) if isinstance(record, dict) else None
        if template.startswith("$arg."):
            return args.get(template[5:])
        return template
    if isinstance(template, dict):
        return {k: _render(v, args, record, records, total) for k, v in template.items()}
    if isinstance(template, list):
        return [_render(v, args, record, records, total) for v in template]
    return template


class _BadCondition(Exception):
    """A ``where`` argument the service answers with an error body (an invalid date)."""


@cache
def _cjk() -> re.Pattern[str]:
    """A CJK ideograph. Compiled on first need: its range makes it one of the dearest patterns to
    compile, and only the claw profile's search services use it."""
    return re.compile(r"[\u4e00-\u9fff]")


def _kb_tokens(text: str) -> set[str]:
    """``shares_token`` tokens (see ``WhereSpec``)."""
    tokens = set(text.lower().split())
    tokens.update(b for b in (text[i:i + 2].lower() for i in range(len(text) - 1)) if not b.isspace())
    tokens.update(_cjk().findall(text))
    return tokens


def _as_text(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, list) else str(value if value is not None else "")


def _utc(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _condition(test: str, value: Any, days: int) -> Callable[[Any], bool]:
    """The predicate of one ``WhereSpec`` test on a record field's value (see ``WhereSpec``)."""
    if test == "equals":
        return lambda x: bool(x == value)
    if test == "equals_ci":
        return lambda x: str(x if x is not None else "").lower() == str(value).lower()
    if test == "contains":
        return lambda x: str(value) in _as_text(x)
    if test == "contains_ci":
        return lambda x: str(value).lower() in _as_text(x).lower()
    if test == "has":
        return lambda x: isinstance(x, list) and value in x
    if test == "any_contains":
        return lambda x: isinstance(x, list) and any(str(value) in str(a) for a in x)
    if test == "at_least":
        return lambda x: str(x if x is not None else "") >= str(value)
    if test == "at_most":
        return lambda x: str(x if x is not None else "") <= str(value)
    if test == "day_window":
        try:
            start = datetime.strptime(str(value), "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            raise _BadCondition(f"Invalid date format: {value}") from None
        end = start + timedelta(days=days)
        return lambda x: (m := _utc(str(x or ""))) is not None and start <= m < end
    query = _kb_tokens(str(value))
    return lambda x: bool(query & _kb_tokens(x))


def _matching(op: OperationSpec, records: list[Record], args: dict[str, Any], missing: Any = None) -> list[Record]:
    """``records`` passing ``op.where`` for ``args``, in order, a field a record lacks read as
    ``missing``; _BadCondition for an invalid date."""
    hits = records
    for w in op.where:
        value = args.get(w.param)
        if w.param not in args or value in w.unless:
            continue
        days = args.get(w.days_param, 1) if w.days_param else 1
        test = _condition(w.test, value, days if isinstance(days, int) else 1)
        if w.test == "shares_token":
            hits = [r for r in hits if test(" ".join(_as_text(r.get(f, "")) for f in w.fields))]
        else:
            hits = [r for r in hits if any(test(r.get(f, missing)) for f in w.fields)]
    return hits


def _list(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    op = route.op
    records = world.state.get(route.service.name, {}).get(op.collection, [])
    filters = [(field_name, args[param]) for param, field_name in op.filters.items() if param in args]
    hits = [r for r in records if all(r.get(f) == v for f, v in filters)] if filters else list(records)
    if op.effect == "search":
        q = str(args.get("query", "")).casefold()
        hits = [r for r in hits if any(q in str(r.get(f, "")).casefold() for f in op.search_fields)]
    if op.where:
        try:
            hits = _matching(op, hits, args, route.missing)
        except _BadCondition as bad:
            return CallResult(status=200, body={"error": str(bad)})
    if op.sort_by:
        key = op.sort_by
        hits.sort(key=lambda r: str(r.get(key) or ""))
    total = len(hits)
    limit = args.get(op.limit_param)
    if isinstance(limit, int):
        hits = hits[:limit]
    if op.total == "returned":
        total = len(hits)
    if op.hide_fields:
        hidden = set(op.hide_fields)
        hits = [{k: v for k, v in r.items() if k not in hidden} for r in hits]
    if op.snippet:
        cut = op.snippet
        hits = [{**r, "snippet": str(r.get(cut.field, ""))[:cut.length] + cut.suffix} for r in hits]
    if op.response is not None:
        return CallResult(status=200, body=_render(op.response, args, records=hits, total=total))
    return CallResult(status=200, body={op.collection: hits, "total": total})


def _find(records: list[Record], id_field: str, value: Any, missing: Any = None) -> int | None:
    """The position of the first record whose ``id_field`` (``missing`` where it lacks one) equals ``value``."""
    for i, r in enumerate(records):  # a loop: faster than next() over a generator, on the hot path
        if r.get(id_field, missing) == value:
            return i
    return None


def _pruned(world: World, route: _Route, param: str, value: Any) -> Any:
    """``value`` without the list items that name no record, where ``op.prune_refs`` names ``param``."""
    for name, service, coll, field_name in route.prune:
        if name == param and isinstance(value, list):
            known = {r.get(field_name) for r in world.state.get(service, {}).get(coll, [])}
            return [v for v in value if v in known]
    return value


def _create(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    op, coll = route.op, route.collection
    record: Record = {coll.id_field: world._next_id(route)} if coll.keyed else {}
    record.update(clone(route.defaults) if route.nested_defaults else route.defaults)
    fields = op.fields  # param → field, where they differ (``op.field_for``)
    lax = route.request is not None
    for param, value in args.items():
        if lax and value is None or op.skip_empty and not value:
            continue  # sets nothing, as their ``x or default`` / ``is not None`` do
        if route.prune:
            value = _pruned(world, route, param, value)
        record[fields.get(param, param)] = clone(value) if isinstance(value, (dict, list)) else value
    if op.timestamp_field:
        record[op.timestamp_field] = world._clock()
    if op.date_field:
        record[op.date_field] = world._clock()[:10]
    world._writable(route.service.name, op.collection).append(record)
    if op.response is not None:
        return CallResult(status=200, body=_render(op.response, args, record=record))
    return CallResult(status=200, body={coll.record: record})


def _position(records: list[Record], op: OperationSpec, id_field: str, target_id: Any, missing: Any = None) -> int | None:
    """Where the first record with ``target_id`` in its id field or one of ``op.id_also`` is (a
    field a record lacks read as ``missing``)."""
    fields = (id_field, *op.id_also)
    for i, r in enumerate(records):
        if any(r.get(f, missing) == target_id for f in fields):
            return i
    return None


def _unknown_id(route: _Route, target_id: Any) -> CallResult:
    op, coll = route.op, route.collection
    if op.not_found is not None:
        return CallResult(status=200, body={"error": op.not_found.format(id=target_id)})
    return _error(404, f"field {op.id_param!r}: no {coll.record} with id {target_id!r}")


def _by_id(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """get, update and delete: the record whose id is ``args[op.id_param]``."""
    op, coll = route.op, route.collection
    target_id = args[op.target_param]
    records = world.state.get(route.service.name, {}).get(op.collection, [])
    position = (_position(records, op, coll.id_field, target_id, route.missing) if op.id_also
                else _find(records, coll.id_field, target_id, route.missing))
    if position is None:
        return _unknown_id(route, target_id)
    if op.effect == "get":
        if op.response is not None:
            return CallResult(status=200, body=_render(op.response, args, record=records[position]))
        return CallResult(status=200, body={coll.record: records[position]})
    records = world._writable(route.service.name, op.collection)
    if op.effect == "delete":
        removed = records.pop(position)
        if op.response is not None:
            return CallResult(status=200, body=_render(op.response, args, record=removed))
        return CallResult(status=200, body={"deleted": target_id})
    record = dict(records[position])
    fields = op.fields  # param → field, where they differ (``op.field_for``)
    lax = route.request is not None
    for param, value in args.items():
        if param != op.id_param:
            if lax and value is None or op.skip_empty and not value:
                continue
            if route.prune:
                value = _pruned(world, route, param, value)
            record[fields.get(param, param)] = clone(value) if isinstance(value, (dict, list)) else value
    record.update(op.constants)
    if op.timestamp_field:
        record[op.timestamp_field] = world._clock()
    if op.date_field:
        record[op.date_field] = world._clock()[:10]
    records[position] = record
    if op.response is not None:
        return CallResult(status=200, body=_render(op.response, args, record=record))
    return CallResult(status=200, body={coll.record: record})


_EFFECTS: dict[str, Callable[[World, _Route, dict[str, Any]], CallResult]] = {"list": _list, "search": _list, "create": _create, "get": _by_id, "update": _by_id, "delete": _by_id}


# --------------------------------------------------------------------------- behaviours
# Named effects (``OperationSpec.behaviour``) of services that mirror ClawEnvKit's, one each where no
# generic effect fits. Each answers HTTP 200 unless its docstring says otherwise.


def _records(world: World, route: _Route, collection: str | None = None) -> list[Record]:
    return world.state.get(route.service.name, {}).get(collection or route.op.collection, [])


def _job_history(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """The job ``job_id``'s ``execution_history``: ``{"job_id", "history": the first ``limit``
    entries, "total": every entry}``; an unknown job answers ``not_found``."""
    records = _records(world, route)
    position = _find(records, route.collection.id_field, args["job_id"], route.missing)
    if position is None:
        return _unknown_id(route, args["job_id"])
    history = records[position].get("execution_history") or []
    limit = args.get("limit")
    shown = history[:limit] if isinstance(limit, int) else list(history)
    return CallResult(status=200, body={"job_id": args["job_id"], "history": shown, "total": len(history)})


def _feeds_by_source(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """Articles passing ``where``, grouped by ``source`` in first-seen order: ``{"feeds":
    [{"source", "categories": distinct categories in first-seen order, "article_count"}], "total"}``."""
    feeds: dict[Any, dict[str, Any]] = {}
    for a in _matching(route.op, _records(world, route), args, route.missing):
        feed = feeds.setdefault(a.get("source", ""), {"source": a.get("source", ""), "categories": [], "article_count": 0})
        if a.get("category", "") not in feed["categories"]:
            feed["categories"].append(a.get("category", ""))
        feed["article_count"] += 1
    return CallResult(status=200, body={"feeds": list(feeds.values()), "total": len(feeds)})


_PLAYER = {"is_playing": False, "current_track": None, "volume": 50}


def _player(world: World, route: _Route) -> Record:
    """The player's state: the one record of the service's ``playback`` collection, else the
    initial state (not playing, no track, volume 50)."""
    held = world.state.get(route.service.name, {}).get("playback", [])
    return dict(held[0]) if held else dict(_PLAYER)


def _playback_control(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """Change the player (``action`` ignoring case): ``play`` the track ``track_id`` (unknown:
    ``{"error": "Track 'x' not found"}``, nothing changes), else the current one, else the first
    track; ``pause``; ``next``/``previous``: the track after/before the current one in the tracks'
    order, wrapping (``next`` without a current track: the first; ``previous`` without one does
    nothing), and play; ``set_volume``: ``volume`` clamped to 0-100 when given. Any other action:
    an error naming the valid ones. Answers ``{"playback": state}``; the state is kept as the one
    record of ``playback``."""
    player, tracks = _player(world, route), _records(world, route, "tracks")
    action = str(args["action"]).lower()
    current = player["current_track"]
    at = next((i for i, t in enumerate(tracks) if isinstance(current, dict) and t.get("id") == current.get("id")), None)
    if action == "play":
        if args.get("track_id"):
            found = _find(tracks, "id", args["track_id"])
            if found is None:
                return CallResult(status=200, body={"error": f"Track '{args['track_id']}' not found"})
            player["current_track"] = tracks[found]
        if player["current_track"] is None and tracks:
            player["current_track"] = tracks[0]
        player["is_playing"] = True
    elif action == "pause":
        player["is_playing"] = False
    elif action in ("next", "previous"):
        if tracks and current:
            step = 1 if action == "next" else -1
            base = at if at is not None else (-1 if action == "next" else 0)
            player["current_track"], player["is_playing"] = tracks[(base + step) % len(tracks)], True
        elif tracks and action == "next":
            player["current_track"], player["is_playing"] = tracks[0], True
    elif action == "set_volume":
        if args.get("volume") is not None:
            player["volume"] = max(0, min(100, args["volume"]))
    else:
        return CallResult(status=200, body={
            "error": f"Unknown action '{args['action']}'. Use play, pause, next, previous, set_volume"})
    held = world._writable(route.service.name, route.op.collection)
    held[:] = [player]
    return CallResult(status=200, body={"playback": player})


def _playback_state(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """``{"playback": the player's state}``."""
    return CallResult(status=200, body={"playback": _player(world, route)})


def _playlists_with_tracks(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """Playlists passing ``where``, each with ``tracks`` (the tracks it names, in the tracks'
    order) and ``track_count``: ``{"playlists", "total"}``."""
    tracks = _records(world, route, "tracks")
    out = []
    for pl in _matching(route.op, _records(world, route), args, route.missing):
        ids = pl.get("track_ids") or []
        listed = [t for t in tracks if t.get("id") in ids]
        out.append({**pl, "tracks": listed, "track_count": len(listed)})
    return CallResult(status=200, body={"playlists": out, "total": len(out)})


def _extract_text(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """The document at ``path`` (compared after normalising ``./`` and ``..``): ``{"path",
    "page_count", "pages_returned": min(max_pages or page_count, page_count), "text": those pages
    joined by a blank line, stripped}``. A path not ending in .pdf, or a folder (the documents'
    folder itself, "" or ".", or one holding a document): HTTP 400 ``{"detail": "Only PDF files are
    supported"}``; else no such document: HTTP 404 ``{"detail": "File not found: <path>"}``."""
    wanted = posixpath.normpath(str(args["path"]))
    paths = [posixpath.normpath(str(d.get("path", ""))) for d in _records(world, route)]
    doc = next((d for d, p in zip(_records(world, route), paths, strict=True) if p == wanted), None)
    if doc is None and (wanted == "." or any(p.startswith(wanted + "/") for p in paths)):
        return CallResult(status=400, body={"detail": "Only PDF files are supported"})
    if doc is None:
        return CallResult(status=404, body={"detail": f"File not found: {args['path']}"})
    if not wanted.lower().endswith(".pdf"):
        return CallResult(status=400, body={"detail": "Only PDF files are supported"})
    pages = [str(p) for p in doc.get("pages") or []]
    limit = min(args.get("max_pages") or len(pages), len(pages))
    return CallResult(status=200, body={"path": wanted, "page_count": len(pages), "pages_returned": limit,
                                        "text": "\n\n".join(pages[:limit]).strip()})


_PUNCTUATION = ",.!?;:\"'()[]{}。，！？；：“”‘’（）【】《》"


def _web_tokens(text: str) -> set[str]:
    """Search tokens: lower-cased words stripped of punctuation, CJK characters and CJK pairs."""
    tokens = {w.strip(_PUNCTUATION) for w in text.lower().split()} - {""}
    cjk = _cjk()
    tokens.update(cjk.findall(text))
    tokens.update(text[i:i + 2] for i in range(len(text) - 1) if cjk.match(text[i]) and cjk.match(text[i + 1]))
    return tokens


def _ranked_search(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """Results whose ``keywords`` share tokens with ``query``, most shared first (ties in stored
    order), at most ``limit_param``: ``{"results": [{url, title, snippet, source, published_at}],
    "total": returned, "query"}``."""
    query = _web_tokens(str(args["query"]))
    scored = []
    for i, item in enumerate(_records(world, route)):
        keywords: set[str] = set()
        for kw in item.get("keywords") or []:
            keywords |= _web_tokens(str(kw))
        if overlap := len(query & keywords):
            scored.append((-overlap, i, item))
    scored.sort(key=lambda s: (s[0], s[1]))
    limit = args.get(route.op.limit_param)
    shown = [item for *_, item in (scored[:limit] if isinstance(limit, int) else scored)]
    results = [{"url": r.get("url"), "title": r.get("title"), "snippet": r.get("snippet"),
                "source": r.get("source", ""), "published_at": r.get("published_at", "")} for r in shown]
    return CallResult(status=200, body={"results": results, "total": len(results), "query": args["query"]})


def _fetch_page(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """The page at ``url``, its ``status_code`` (default 200) in the body: below 400 ``{"status_code",
    "url", "title", "content", "content_type" (default text/html), "fetched_at": the clock}``; else
    ``{"status_code", "url", "error" (default "HTTP <code>"), "content": null}``; an unknown URL as
    status_code 404 with error "Page not found or unavailable"."""
    url = args["url"]
    page = next((p for p in _records(world, route) if p.get("url") == url), None)
    if page is None:
        return CallResult(status=200, body={"status_code": 404, "url": url, "error": "Page not found or unavailable",
                                            "content": None})
    code = page.get("status_code", 200)
    if isinstance(code, int) and code >= 400:
        return CallResult(status=200, body={"status_code": code, "url": url, "error": page.get("error", f"HTTP {code}"),
                                            "content": None})
    return CallResult(status=200, body={"status_code": code, "url": url, "title": page.get("title", ""),
                                        "content": page.get("content", ""),
                                        "content_type": page.get("content_type", "text/html"),
                                        "fetched_at": world._clock()})


def _image_lookup(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """The image record for ``image_path``: the first whose path equals it, else whose file name,
    else whose stem does (checked record by record); no match or no path: the first record; none:
    nothing. The answer is ``response`` rendered with ``$record`` = ``defaults`` (rendered with the
    arguments) overlaid by that record."""
    images = _records(world, route)
    wanted = str(args.get("image_path") or "")
    found: Record = images[0] if images else {}
    if wanted:
        name, stem = PurePosixPath(wanted).name, PurePosixPath(wanted).stem
        for item in images:
            raw = str(item.get("image_path", ""))
            path = PurePosixPath(raw)
            if raw == wanted or path.name == name or path.stem == stem:
                found = item
                break
    record = {**_render(route.defaults, args), **found}
    return CallResult(status=200, body=_render(route.op.response, args, record=record))


_BEHAVIOURS: dict[str, Callable[[World, _Route, dict[str, Any]], CallResult]] = {
    "job_history": _job_history, "feeds_by_source": _feeds_by_source, "playback_control": _playback_control,
    "playback_state": _playback_state, "playlists_with_tracks": _playlists_with_tracks,
    "extract_text": _extract_text, "ranked_search": _ranked_search, "fetch_page": _fetch_page,
    "image_lookup": _image_lookup}

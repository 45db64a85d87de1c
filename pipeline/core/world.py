"""The mock-service world: stateful, deterministic, in-process services built from a package.

Every call, good or bad, lands in the audit log. Bad input gets a 400 whose message names the bad
field; an unknown id gets 404; an unknown endpoint gets 404 listing the service's real endpoints;
``faults`` inject deterministic errors. Time comes from the package clock (``now`` plus one second
per call made so far), never from the wall clock.

Records are values: no operation changes a record in place (an update stores a changed copy), and
a collection is copied on a world's first write to it after ``reset`` or ``fork``. So ``reset``
costs nothing, a ``fork`` costs a few dict copies, and forks never see each other's writes.
Results, the audit log and the state share records; none of them may be changed by a caller
(``TaskEnv`` gives agents copies). A world keeps the argument objects it is called with: callers
must not change them afterwards.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
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
        result = self._dispatch(spec.endpoint, args, known)
        self.audit.append(AuditEntry(tool, spec.endpoint, args, result.status, result.body))
        return result

    def call_endpoint(self, endpoint: str, args: dict[str, Any] | None = None) -> CallResult:
        """Call a service endpoint directly (the HTTP route), without a tool binding or faults."""
        args = args if args is not None else {}
        return self._log(None, endpoint, args, self._dispatch(endpoint, args))

    def _log(self, tool: str | None, endpoint: str, args: dict[str, Any], result: CallResult) -> CallResult:
        self.audit.append(AuditEntry(tool, endpoint, args, result.status, result.body))
        return result

    def _dispatch(self, endpoint: str, args: dict[str, Any], known: bool = False) -> CallResult:
        route = self._routes.get(endpoint, _UNROUTED)
        if route is _UNROUTED:
            found = _route(endpoint, self.profile)
            route = self._routes[endpoint] = found if found is not None and found.service.name in self.services else None
        if route is not None:
            key = (endpoint, id(args))
            if not known or key not in self._valid:
                problem = route.check.problem(args)
                if problem:
                    return _error(400, problem)
                if known:
                    if len(self._valid) >= _REMEMBERED_ARGUMENTS:
                        self._valid.clear()
                    self._valid[key] = args  # kept alive: its id names it alone
            missing = self._dangling_ref(route, args) if route.refs else None
            if missing:
                return _error(404, missing)
            return route.effect(self, route, args)
        service_name = endpoint.strip("/").split("/")[0]
        service = catalogue(self.profile).get(service_name)
        if service is None or service_name not in self.services:
            return _error(404, f"no service for endpoint {endpoint!r}; services in this world: "
                               f"{', '.join(self.services)}")
        return _error(404, f"unknown endpoint {endpoint!r} on service {service_name!r}; "
                           f"valid endpoints: {', '.join(service.endpoints)}", valid_endpoints=service.endpoints)

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
        refs = []
        for param, target in op.refs.items():
            ref_service, ref_coll, *ref_field = target.split(".")
            ref_spec = get_service(ref_service, profile)
            field_name = ref_field[0] if ref_field else (ref_spec.collections[ref_coll].id_field if ref_spec else "id")
            refs.append((param, ref_service, ref_coll, field_name))
        route = _Route(service, op, ArgumentCheck(op.parameters), _EFFECTS[op.effect],
                       service.collections[op.collection], f"{service.name}.{op.collection}", tuple(refs),
                       op.defaults, any(isinstance(v, (dict, list)) for v in op.defaults.values()))
    _ROUTES[key] = route
    return route


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


def _list(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    op = route.op
    records = world.state.get(route.service.name, {}).get(op.collection, [])
    filters = [(field_name, args[param]) for param, field_name in op.filters.items() if param in args]
    hits = [r for r in records if all(r.get(f) == v for f, v in filters)] if filters else list(records)
    if op.effect == "search":
        q = str(args.get("query", "")).casefold()
        hits = [r for r in hits if any(q in str(r.get(f, "")).casefold() for f in op.search_fields)]
    total = len(hits)
    limit = args.get("limit")
    if isinstance(limit, int):
        hits = hits[:limit]
    return CallResult(status=200, body={op.collection: hits, "total": total})


def _find(records: list[Record], id_field: str, value: Any) -> int | None:
    for i, r in enumerate(records):  # a loop: faster than next() over a generator, on the hot path
        if r.get(id_field) == value:
            return i
    return None


def _create(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    op, coll = route.op, route.collection
    record: Record = {coll.id_field: world._next_id(route)}
    record.update(clone(route.defaults) if route.nested_defaults else route.defaults)
    fields = op.fields  # param → field, where they differ (``op.field_for``)
    for param, value in args.items():
        record[fields.get(param, param)] = clone(value) if isinstance(value, (dict, list)) else value
    if op.timestamp_field:
        record[op.timestamp_field] = world._clock()
    world._writable(route.service.name, op.collection).append(record)
    return CallResult(status=200, body={coll.record: record})


def _by_id(world: World, route: _Route, args: dict[str, Any]) -> CallResult:
    """get, update and delete: the record whose id is ``args[op.id_param]``."""
    op, coll = route.op, route.collection
    target_id = args[op.target_param]
    records = world.state.get(route.service.name, {}).get(op.collection, [])
    position = _find(records, coll.id_field, target_id)
    if position is None:
        return _error(404, f"field {op.id_param!r}: no {coll.record} with id {target_id!r}")
    if op.effect == "get":
        return CallResult(status=200, body={coll.record: records[position]})
    records = world._writable(route.service.name, op.collection)
    if op.effect == "delete":
        del records[position]
        return CallResult(status=200, body={"deleted": target_id})
    record = dict(records[position])
    fields = op.fields  # param → field, where they differ (``op.field_for``)
    for param, value in args.items():
        if param != op.id_param:
            record[fields.get(param, param)] = clone(value) if isinstance(value, (dict, list)) else value
    if op.timestamp_field:
        record[op.timestamp_field] = world._clock()
    records[position] = record
    return CallResult(status=200, body={coll.record: record})


_EFFECTS: dict[str, Callable[[World, _Route, dict[str, Any]], CallResult]] = {"list": _list, "search": _list, "create": _create, "get": _by_id, "update": _by_id, "delete": _by_id}

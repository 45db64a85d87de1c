"""The mock-service world: stateful, deterministic, in-process services built from a package.

Every call, good or bad, lands in the audit log. Bad input gets a 400 whose message names the bad
field; an unknown id gets 404; an unknown endpoint gets 404 listing the service's real endpoints;
``faults`` inject deterministic errors. Time comes from the package clock (``now`` plus one second
per call made so far), never from the wall clock.
"""

from __future__ import annotations

import json
import re
import string
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import jsonschema
from pydantic import BaseModel, Field

from pipeline.package import DEFAULT_NOW, Fault, TaskPackage, Tool
from pipeline.services import OperationSpec, ServiceSpec, catalogue, get_service

State = dict[str, dict[str, list[dict[str, Any]]]]


class AuditEntry(BaseModel):
    tool: str | None
    endpoint: str
    args: dict[str, Any]
    status: int
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class CallResult(BaseModel):
    status: int
    body: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _error(status: int, message: str, **extra: Any) -> CallResult:
    return CallResult(status=status, body={"error": {"status": status, "message": message, **extra}})


def clone(value: Any) -> Any:
    """A deep copy of plain JSON data (dicts, lists, scalars); several times faster than ``deepcopy``."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def empty_state(services: list[str]) -> State:
    """Every collection of every named service, empty."""
    out: State = {}
    for name in services:
        spec = get_service(name)
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
    ) -> None:
        self.services = list(services)
        self.tools = {t.name: t for t in tools or []}
        self.faults = list(faults or [])
        self.now = now
        base = datetime.fromisoformat(now.replace("Z", "+00:00"))
        self._start = base.astimezone(UTC) if base.tzinfo is not None else base
        # The state ``reset`` restores. Its collections are the caller's own lists, not copies: a
        # world never mutates them (``reset`` gives ``state`` its own copy), and verification builds
        # a world for every run of a package, so copying them here too would double the work.
        self.initial: State = empty_state(self.services)
        for service, collections in (initial_state or {}).items():
            self.initial.setdefault(service, {}).update(collections)
        self.reset()

    @classmethod
    def from_package(cls, package: TaskPackage) -> World:
        return cls(package.services, package.initial_state, package.tools, package.faults, package.now)

    # ------------------------------------------------------------------ state

    def reset(self) -> None:
        """Back to the initial state, with an empty audit log and fault counters."""
        self.state: State = clone(self.initial)
        self.audit: list[AuditEntry] = []
        self._tool_calls: dict[str, int] = {}
        self.allocated: dict[str, int] = {}  # "service.collection" → highest id number handed out

    @property
    def initial_state(self) -> State:
        return clone(self.initial)

    def collection(self, dotted: str) -> list[dict[str, Any]]:
        service, _, name = dotted.partition(".")
        return self.state.get(service, {}).get(name, [])

    def _clock(self) -> str:
        return (self._start + timedelta(seconds=len(self.audit))).strftime("%Y-%m-%dT%H:%M:%SZ")

    # ------------------------------------------------------------------ calls

    def call(self, tool: str, args: dict[str, Any] | None = None) -> CallResult:
        """Call a tool of the package: resolve it to its service operation, apply faults, run it."""
        args = dict(args or {})
        spec = self.tools.get(tool)
        if spec is None:
            result = _error(404, f"unknown tool {tool!r}; tools offered: {sorted(self.tools)}")
            return self._log(tool, "", args, result)
        count = self._tool_calls[tool] = self._tool_calls.get(tool, 0) + 1
        for fault in self.faults:
            if fault.tool == tool and fault.on_call <= count < fault.on_call + fault.times:
                extra = {"retry_after": fault.retry_after} if fault.retry_after is not None else {}
                return self._log(tool, spec.endpoint, args, _error(fault.status, fault.message, **extra))
        return self._log(tool, spec.endpoint, args, self._dispatch(spec.endpoint, args))

    def call_endpoint(self, endpoint: str, args: dict[str, Any] | None = None) -> CallResult:
        """Call a service endpoint directly (the HTTP route), without a tool binding or faults."""
        args = dict(args or {})
        return self._log(None, endpoint, args, self._dispatch(endpoint, args))

    def _log(self, tool: str | None, endpoint: str, args: dict[str, Any], result: CallResult) -> CallResult:
        self.audit.append(
            AuditEntry(tool=tool, endpoint=endpoint, args=clone(args), status=result.status,
                       result=clone(result.body))
        )
        return result

    def _dispatch(self, endpoint: str, args: dict[str, Any]) -> CallResult:
        service_name = endpoint.strip("/").split("/")[0]
        service = catalogue().get(service_name)
        if service is None or service_name not in self.services:
            known = ", ".join(self.services)
            return _error(404, f"no service for endpoint {endpoint!r}; services in this world: {known}")
        op = service.operation(endpoint)
        if op is None:
            return _error(
                404,
                f"unknown endpoint {endpoint!r} on service {service_name!r}; "
                f"valid endpoints: {', '.join(service.endpoints)}",
                valid_endpoints=service.endpoints,
            )
        problem = _validate(op, args)
        if problem:
            return _error(400, problem)
        return _run(self, service, op, args)


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}
_VALID_ARGS: set[str] = set()  # endpoint + canonical args already validated (mutation runs repeat them)


def _validate(op: OperationSpec, args: dict[str, Any]) -> str | None:
    """One line naming the bad field, or None when ``args`` fit the operation's schema."""
    validator = _VALIDATORS.get(op.endpoint)
    if validator is None:
        validator = _VALIDATORS[op.endpoint] = jsonschema.Draft202012Validator(op.parameters)
    key = op.endpoint + json.dumps(args, sort_keys=True, default=str)
    if key in _VALID_ARGS:
        return None
    if validator.is_valid(args):
        if len(_VALID_ARGS) < 100_000:
            _VALID_ARGS.add(key)
        return None
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    err = errors[0]
    if err.validator == "required":
        missing = [r for r in err.validator_value if r not in (err.instance or {})]
        prefix = "".join(f"{p}." for p in err.absolute_path)
        return f"missing required field {prefix + missing[0]!r}" if missing else err.message
    where = ".".join(str(p) for p in err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed))
        name = f"{where}.{extra[0]}" if where and extra else (extra[0] if extra else where)
        return f"unknown field {name!r}; allowed fields: {', '.join(allowed)}"
    return f"invalid field {where or '(arguments)'!r}: {err.message}"


def _next_id(records: list[dict[str, Any]], id_field: str, id_format: str, floor: int = 0) -> tuple[str, int]:
    """The next id in ``id_format`` after the highest numeric id of that format in ``records`` and
    after ``floor`` (the highest this world already handed out, so a deleted id is never reused);
    returns the id and its number."""
    pattern = _id_pattern(id_format)
    highest = floor
    for rec in records:
        m = pattern.match(str(rec.get(id_field, "")))
        if m:
            highest = max(highest, int(m.group(1)))
    return id_format.format(n=highest + 1), highest + 1


@cache
def _id_pattern(id_format: str) -> re.Pattern[str]:
    """Matches the ids ``id_format`` makes (``todo-{n:03d}`` → ``todo-(\\d+)``), the number as group 1."""
    parts = list(string.Formatter().parse(id_format))
    suffix = "".join(literal for literal, *_ in parts[1:])
    return re.compile(re.escape(parts[0][0]) + r"(\d+)" + re.escape(suffix) + "$")


def _find(records: list[dict[str, Any]], id_field: str, value: Any) -> dict[str, Any] | None:
    return next((r for r in records if r.get(id_field) == value), None)


def _run(world: World, service: ServiceSpec, op: OperationSpec, args: dict[str, Any]) -> CallResult:
    coll = service.collections[op.collection]
    records = world.state.setdefault(service.name, {}).setdefault(op.collection, [])
    key = op.collection

    for param, target in op.refs.items():
        if param in args:
            ref_service, ref_coll, *ref_field = target.split(".")
            ref_spec = get_service(ref_service)
            field = ref_field[0] if ref_field else (ref_spec.collections[ref_coll].id_field if ref_spec else "id")
            pool = world.state.get(ref_service, {}).get(ref_coll, [])
            values = args[param] if isinstance(args[param], list) else [args[param]]
            for v in values:
                if not any(r.get(field) == v for r in pool):
                    return _error(404, f"field {param!r}: no {ref_coll} record with {field} {v!r}")

    if op.effect in ("list", "search"):
        hits = [r for r in records if all(
            r.get(field) == args[param] for param, field in op.filters.items() if param in args)]
        if op.effect == "search":
            q = str(args.get("query", "")).casefold()
            hits = [r for r in hits if any(q in str(r.get(f, "")).casefold() for f in op.search_fields)]
        total = len(hits)
        limit = args.get("limit")
        if isinstance(limit, int):
            hits = hits[:limit]
        return CallResult(status=200, body={key: clone(hits), "total": total})

    if op.effect == "create":
        where = f"{service.name}.{op.collection}"
        known = records + world.initial.get(service.name, {}).get(op.collection, [])
        new_id, world.allocated[where] = _next_id(known, coll.id_field, coll.id_format, world.allocated.get(where, 0))
        record: dict[str, Any] = {coll.id_field: new_id}
        record.update(clone(op.defaults))
        for param, value in args.items():
            record[op.field_for(param)] = clone(value)
        if op.timestamp_field:
            record[op.timestamp_field] = world._clock()
        records.append(record)
        return CallResult(status=200, body={coll.record: clone(record)})

    target_id = args[op.id_param]  # type: ignore[index]
    record = _find(records, coll.id_field, target_id)
    if record is None:
        return _error(404, f"field {op.id_param!r}: no {coll.record} with id {target_id!r}")
    if op.effect == "get":
        return CallResult(status=200, body={coll.record: clone(record)})
    if op.effect == "update":
        for param, value in args.items():
            if param != op.id_param:
                record[op.field_for(param)] = clone(value)
        if op.timestamp_field:
            record[op.timestamp_field] = world._clock()
        return CallResult(status=200, body={coll.record: clone(record)})
    records.remove(record)
    return CallResult(status=200, body={"deleted": target_id})

"""ClawEnvKit fixtures ↔ the initial state of a ``claw`` service, both ways.

A ClawEnvKit mock service reads one JSON fixture file (its ``<SERVICE>_FIXTURES``). Most read it
with their list loader, which takes a bare list, the value of a single-key object (a non-list
value wrapped in a list), or the FIRST list value of a several-key object, and copies ``id`` into
the service's id field where that is missing. Such a service fills one collection (the first of
``ServiceSpec.fixture.collections``); every other collection starts empty. A ``raw`` service (web)
reads each named key itself; a ``files`` service (documents) reads files from disk, so its
fixture records (``path`` and page texts) are what the files must hold.
"""

from __future__ import annotations

from typing import Any

from pipeline.core.services import ServiceSpec

Records = list[dict[str, Any]]


def first_list(data: Any) -> Records:
    """What ClawEnvKit's list loader makes of a fixture file's content (see the module docstring)."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        if len(data) == 1:
            value = next(iter(data.values()))
            return value if isinstance(value, list) else [value]
        return next((v for v in data.values() if isinstance(v, list)), [])
    return []


def to_initial_state(spec: ServiceSpec, fixture: Any) -> dict[str, Records]:
    """A service's collections from its ClawEnvKit fixture content (every collection present,
    those the service does not load empty); ValueError for a service without a fixture layout."""
    layout = _layout(spec)
    out: dict[str, Records] = {name: [] for name in spec.collections}
    if layout.raw and isinstance(fixture, dict):
        for name in layout.collections:
            out[name] = [dict(r) for r in fixture.get(name) or []]
        return out
    first = layout.collections[0]
    id_field = spec.collections[first].id_field
    records = [dict(r) if isinstance(r, dict) else r for r in (fixture if layout.raw else first_list(fixture))]
    for r in records:
        if isinstance(r, dict) and id_field != "id" and id_field not in r and "id" in r:
            r[id_field] = r["id"]
    out[first] = records
    return out


def to_fixture(spec: ServiceSpec, collections: dict[str, Records]) -> dict[str, Records]:
    """A service's ClawEnvKit fixture content from its collections: an object whose keys are the
    fixture collections in the order the service's loader needs (the loaded one first). ValueError
    when a collection the service cannot load from a fixture holds records (the service would
    start it empty, so the state cannot be carried over)."""
    layout = _layout(spec)
    carried = layout.collections if layout.raw else layout.collections[:1]
    lost = [name for name, records in collections.items() if records and name not in carried]
    if lost:
        raise ValueError(f"{spec.name}: ClawEnvKit's {spec.name} service starts {', '.join(lost)} empty; "
                         f"its fixture carries only {', '.join(carried)}")
    return {name: list(collections.get(name, [])) for name in carried}


def _layout(spec: ServiceSpec) -> Any:
    if spec.fixture is None:
        raise ValueError(f"{spec.name}: the service has no ClawEnvKit fixture layout")
    return spec.fixture

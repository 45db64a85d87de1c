"""Slot sampling: fill a workflow template's ``slots`` from the content pools with one item's RNG.

A slot spec is a mapping with exactly one *kind* key, plus options:

- ``{people: n}``: ``n`` people, each ``{first, last, name, email, local, department, title,
  phone}``. Option ``same_department: true`` puts them all in one department;
  ``distinct_titles: true`` gives each a different job title.
- ``{pool: <name>}``: one entry of ``capabilities/pools/<name>.yaml`` (a YAML list); with ``k: n``
  a list of ``n`` entries; with ``same: <field>`` all ``n`` share one value of that field (e.g.
  products of one category), the value drawn among those that have ``n`` free entries.
- ``{choice: [..]}``: one of the listed values; with ``k: n`` a list of ``n`` of them.
- ``{int: [lo, hi]}``: an integer in ``[lo, hi]`` (inclusive), a multiple of ``step`` above ``lo``.
- ``{money: [lo, hi]}``: an amount in ``[lo, hi]`` with at most two decimals, a multiple of
  ``step`` (default 0.05) above ``lo``.
- ``{date: [lo, hi]}``: an ISO date ``lo``..``hi`` days after the package clock's date; option
  ``weekdays: true`` keeps Monday to Friday only.
- ``{time: [h_lo, h_hi]}``: a ``HH:MM`` time on the hour or half hour, ``h_lo:00``..``h_hi:00``.

Every kind but ``people`` takes ``k: n`` for a list of ``n`` distinct values. Distinctness also
holds *across* slots of one item: no two people share a first or a last name, and no pool entry is
drawn twice. Slots are filled in the order they are written, so the result is a pure function of
the spec and the RNG state.
"""

from __future__ import annotations

from datetime import date, timedelta
from functools import cache
from random import Random
from typing import Any

from pipeline.core import yaml_text
from pipeline.core.package import DEFAULT_NOW
from pipeline.core.paths import capabilities_dir

SLOT_KINDS = ("people", "pool", "choice", "int", "money", "date", "time")
_OPTIONS = {"k", "step", "same", "same_department", "distinct_titles", "weekdays"}


class SlotError(ValueError):
    """A slot spec that cannot be filled (unknown kind or pool, impossible range)."""


@cache
def pools() -> dict[str, Any]:
    """Every content pool in ``capabilities/pools/``, by file stem."""
    folder = capabilities_dir() / "pools"
    return {p.stem: yaml_text.load(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.yaml"))}


def clock_date(now: str = DEFAULT_NOW) -> date:
    """The calendar date of a package clock such as ``2026-12-01T09:00:00Z``."""
    return date.fromisoformat(now[:10])


class _Draw:
    """The sampling state of one item: its RNG and what it has already drawn."""

    def __init__(self, rng: Random, now: str) -> None:
        self.rng = rng
        self.today = clock_date(now)
        self.used_first: set[str] = set()
        self.used_last: set[str] = set()
        self.used_phones: set[int] = set()
        self.used_pool: dict[str, set[int]] = {}

    def people(self, n: int, same_department: bool, distinct_titles: bool) -> list[dict[str, Any]]:
        data = pools()["people"]
        firsts = [f for f in data["first_names"] if f not in self.used_first]
        lasts = [s for s in data["last_names"] if s not in self.used_last]
        if n > min(len(firsts), len(lasts)):
            raise SlotError(f"cannot draw {n} more distinct people from the people pool")
        departments: dict[str, list[str]] = data["departments"]
        need = n if same_department and distinct_titles else 1
        shared = self.rng.choice(sorted(d for d, titles in departments.items() if len(titles) >= need))
        out: list[dict[str, Any]] = []
        for first, last in zip(self.rng.sample(firsts, n), self.rng.sample(lasts, n), strict=True):
            self.used_first.add(first)
            self.used_last.add(last)
            taken = {o["title"] for o in out} if distinct_titles else set()
            free = {d: [t for t in titles if t not in taken] for d, titles in departments.items()}
            dept = shared if same_department else self.rng.choice(sorted(d for d, t in free.items() if t))
            titles = free[dept]
            if not titles:
                raise SlotError(f"cannot give {n} people distinct titles in department {dept!r}")
            phone = self.rng.choice([p for p in range(100, 1000) if p not in self.used_phones])
            self.used_phones.add(phone)
            local = f"{first}.{last}".lower()
            out.append({
                "first": first, "last": last, "name": f"{first} {last}", "local": local,
                "email": f"{local}@{data['domain']}", "department": dept,
                "title": self.rng.choice(titles), "phone": f"+1-555-0{phone}",
            })
        return out

    def pool(self, name: str, k: int | None, same: str | None) -> Any:
        entries = pools().get(name)
        if not isinstance(entries, list):
            raise SlotError(f"unknown list pool {name!r}; pools: {', '.join(sorted(pools()))}")
        used = self.used_pool.setdefault(name, set())
        free = [i for i in range(len(entries)) if i not in used]
        count = 1 if k is None else k
        if same is not None:
            groups: dict[str, list[int]] = {}
            for i in free:
                groups.setdefault(str(entries[i][same]), []).append(i)
            shared = sorted(v for v, members in groups.items() if len(members) >= count)
            if not shared:
                raise SlotError(f"no {same!r} value of pool {name!r} has {count} free entries")
            free = groups[self.rng.choice(shared)]
        if count > len(free):
            raise SlotError(f"cannot draw {count} more entries from pool {name!r} ({len(free)} left)")
        picked = self.rng.sample(free, count)
        used.update(picked)
        values = [entries[i] for i in picked]
        return values[0] if k is None else values

    def choice(self, values: list[Any], k: int | None) -> Any:
        if k is None:
            return self.rng.choice(values)
        if k > len(values):
            raise SlotError(f"cannot choose {k} of {len(values)} values")
        return self.rng.sample(values, k)

    def numbers(self, lo: float, hi: float, step: float, k: int | None, scale: int) -> Any:
        """Values ``lo + i*step`` in ``[lo, hi]``, computed in units of 1/scale to stay exact."""
        lo_u, hi_u, step_u = round(lo * scale), round(hi * scale), round(step * scale)
        if step_u <= 0 or hi_u < lo_u:
            raise SlotError(f"empty range [{lo}, {hi}] with step {step}")
        grid = range(lo_u, hi_u + 1, step_u)
        picked = [self.rng.choice(grid)] if k is None else self._distinct(grid, k)
        values = [v // scale if scale == 1 else round(v / scale, 2) for v in picked]
        return values[0] if k is None else values

    def _distinct(self, grid: range, k: int) -> list[int]:
        if k > len(grid):
            raise SlotError(f"cannot draw {k} distinct values from {len(grid)}")
        return self.rng.sample(grid, k)

    def dates(self, lo: int, hi: int, weekdays: bool, k: int | None) -> Any:
        days = [self.today + timedelta(days=d) for d in range(lo, hi + 1)]
        days = [d for d in days if d.weekday() < 5] if weekdays else days
        if len(days) < (k or 1):
            raise SlotError(f"fewer than {k or 1} dates in [{lo}, {hi}] days from {self.today}")
        picked = [self.rng.choice(days)] if k is None else self.rng.sample(days, k)
        values = [d.isoformat() for d in picked]
        return values[0] if k is None else values

    def times(self, lo: int, hi: int, k: int | None) -> Any:
        grid = [f"{h:02d}:{m:02d}" for h in range(lo, hi + 1) for m in (0, 30) if (h, m) <= (hi, 0)]
        return self.choice(grid, k)


def _kind(name: str, spec: Any) -> str:
    if not isinstance(spec, dict):
        raise SlotError(f"slot {name!r}: expected a mapping with one of {', '.join(SLOT_KINDS)}")
    kinds = [k for k in spec if k in SLOT_KINDS]
    unknown = set(spec) - set(SLOT_KINDS) - _OPTIONS
    if len(kinds) != 1 or unknown:
        raise SlotError(f"slot {name!r}: needs exactly one of {', '.join(SLOT_KINDS)} "
                        f"(options: {', '.join(sorted(_OPTIONS))}); got {', '.join(spec)}")
    return kinds[0]


def fill_slots(specs: dict[str, Any], rng: Random, now: str = DEFAULT_NOW) -> dict[str, Any]:
    """Sample every slot of ``specs`` in order with ``rng``; see the module docstring."""
    draw = _Draw(rng, now)
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        kind = _kind(name, spec)
        arg, k = spec[kind], spec.get("k")
        if kind == "people":
            out[name] = draw.people(int(arg), bool(spec.get("same_department", False)),
                                    bool(spec.get("distinct_titles", False)))
        elif kind == "pool":
            out[name] = draw.pool(str(arg), k, spec.get("same"))
        elif kind == "choice":
            out[name] = draw.choice(list(arg), k)
        elif kind == "int":
            out[name] = draw.numbers(arg[0], arg[1], spec.get("step", 1), k, scale=1)
        elif kind == "money":
            out[name] = draw.numbers(arg[0], arg[1], spec.get("step", 0.05), k, scale=100)
        elif kind == "date":
            out[name] = draw.dates(int(arg[0]), int(arg[1]), bool(spec.get("weekdays", False)), k)
        else:
            out[name] = draw.times(int(arg[0]), int(arg[1]), k)
    return out

"""Fixtures shared by the catalog tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.catalog.store import Catalog


@pytest.fixture
def catalog(empty_catalog: Path) -> Iterator[Catalog]:
    """A write session on a fresh empty catalog."""
    with Catalog.open(empty_catalog) as cat:
        yield cat

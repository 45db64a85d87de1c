"""Waiting inside an event loop for a state that lasts only a turn or two of it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from tests.support.processes import PATIENCE_S


async def turn_when(condition: Callable[[], bool], what: str, timeout: float = PATIENCE_S) -> None:
    """Return in the first turn of the running event loop in which ``condition()`` holds, letting
    the other tasks run one turn at a time until then (a poll every few milliseconds would step
    past a state that lasts one turn); ``AssertionError`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await asyncio.sleep(0)  # one turn of the loop, no time

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
        await next_turn()


async def next_turn() -> None:
    """Return in the event loop's next turn, after the callbacks already scheduled have run (a
    future the loop resolves with ``call_soon``; no timer, no time)."""
    loop = asyncio.get_running_loop()
    turn: asyncio.Future[None] = loop.create_future()
    loop.call_soon(turn.set_result, None)
    await turn

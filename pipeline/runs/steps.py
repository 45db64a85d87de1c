"""One body for each API function, two ways to run it: blocking (``run_steps``) or awaited
(``await_steps``).

A body is a generator of steps: plain code (opening the catalog, recording a run) between
``yield``s of the coroutines that do the long work. Each yielded coroutine's result is sent back
into the body, or its exception thrown into it at the ``yield``, so the body's ``try``/``with``
blocks see a stop the same way under either driver: a stop signal arrives as ``Stopped`` (a
``KeyboardInterrupt``) under ``run_steps`` and as ``asyncio.CancelledError`` under ``await_steps``.
``blocking`` and ``awaitable`` make the two public functions of one body (``start_run``,
``astart_run``); ``in_thread`` the awaitable form of a function that runs no event loop.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Generator
from typing import Any, ParamSpec, TypeVar

from pipeline.runs.interrupt import run_until_signalled, terminate_as_interrupt

T = TypeVar("T")
P = ParamSpec("P")

Steps = Generator[Coroutine[Any, Any, Any], Any, T]
"""A body: yields coroutines, receives their results, returns the function's result."""


def run_steps(steps: Steps[T]) -> T:
    """Run ``steps`` to its result, each coroutine on an event loop of its own that SIGINT and
    SIGTERM stop (``run_until_signalled``: also from inside a running event loop); SIGTERM raises
    ``Stopped`` in the plain code between them too (``terminate_as_interrupt``)."""
    with terminate_as_interrupt():
        try:
            work = next(steps)
            while True:
                try:
                    result = run_until_signalled(work)
                except BaseException as exc:
                    work = steps.throw(exc)
                else:
                    work = steps.send(result)
        except StopIteration as done:
            return done.value


async def await_steps(steps: Steps[T]) -> T:
    """``steps``'s result, each coroutine awaited on the running event loop (cancelling the
    awaiting task throws ``CancelledError`` into the body)."""
    try:
        work = next(steps)
        while True:
            try:
                result = await work
            except BaseException as exc:
                work = steps.throw(exc)
            else:
                work = steps.send(result)
    except StopIteration as done:
        return done.value


def blocking(body: Callable[P, Steps[T]], name: str) -> Callable[P, T]:
    """The function ``name`` that runs ``body``'s steps and returns the result (``run_steps``)."""

    @functools.wraps(body)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_steps(body(*args, **kwargs))

    run.__name__ = run.__qualname__ = name
    return run


def awaitable(body: Callable[P, Steps[T]], name: str) -> Callable[P, Coroutine[Any, Any, T]]:
    """The coroutine function ``name`` that awaits ``body``'s steps (``await_steps``)."""

    @functools.wraps(body)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return await await_steps(body(*args, **kwargs))

    run.__name__ = run.__qualname__ = name
    return run


def in_thread(function: Callable[P, T], name: str) -> Callable[P, Coroutine[Any, Any, T]]:
    """The coroutine function ``name`` that runs ``function`` in a worker thread (``asyncio.to_thread``)."""

    @functools.wraps(function)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(function, *args, **kwargs)

    run.__name__ = run.__qualname__ = name
    return run

"""Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM end it the same way, as an interrupt.

``run_until_signalled`` runs a coroutine on a fresh event loop: the first SIGINT or SIGTERM cancels
it, later ones are ignored while it unwinds, and once everything it started has been cancelled
``Stopped`` (a ``KeyboardInterrupt``) is raised naming the signal. ``terminate_as_interrupt`` makes
SIGTERM raise ``Stopped`` outside an event loop too (Python's default would end the process on the
spot). ``signals_ignored`` keeps both away from a final catalog write; ``signals_blocked`` holds them
while a worker process is started, so that it starts with them blocked (``pool`` then ignores them
there: the parent alone decides when its workers stop).

Signal handlers can only be set in the main thread; elsewhere these functions change nothing.
Inside a running event loop (a notebook), ``run_until_signalled`` runs the coroutine on a loop of
its own in a worker thread; Ctrl-C (a ``KeyboardInterrupt`` in the waiting thread) cancels it there.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """A stop signal arrived; ``signum`` says which (a command exits with ``128 + signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(exc: KeyboardInterrupt) -> int:
    """The signal behind a ``KeyboardInterrupt``: ``Stopped.signum``, else SIGINT."""
    return exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_until_signalled(main: Coroutine[Any, Any, T]) -> T:
    """``main``'s result, run on a new event loop. The first SIGINT or SIGTERM cancels it; once it
    and every task still pending have unwound (their errors dropped), ``Stopped`` is raised, also
    when ``main`` ended in another exception after the signal. Off the main thread: ``asyncio.run``;
    while an event loop runs in this thread: ``run_in_worker_thread``."""
    if _loop_running():
        return run_in_worker_thread(main)
    if not _main_thread():
        return asyncio.run(main)
    loop = asyncio.new_event_loop()
    task = loop.create_task(main)
    received: list[int] = []

    def stop(signum: int) -> None:
        if not received:
            received.append(signum)
            task.cancel()

    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    try:
        try:
            return loop.run_until_complete(task)
        except BaseException:
            if received:
                raise Stopped(received[0]) from None
            raise
        finally:
            _cancel_pending(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)
            signal.signal(sig, previous[sig])
        loop.close()


def run_in_worker_thread(main: Coroutine[Any, Any, T]) -> T:
    """``main``'s result, run by ``asyncio.run`` in a new thread while this one waits (so that
    synchronous code can run a coroutine while this thread's event loop is busy running it). A
    ``KeyboardInterrupt`` while waiting cancels ``main``; once it has unwound, ``Stopped(SIGINT)``
    is raised."""
    started = threading.Event()
    cancel: list[Callable[[], object]] = []

    async def tracked() -> T:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None
        cancel.append(lambda: loop.call_soon_threadsafe(task.cancel))
        started.set()
        return await main

    with ThreadPoolExecutor(1, thread_name_prefix="synth-event-loop") as pool:
        future = pool.submit(asyncio.run, tracked())
        try:
            return future.result()
        except KeyboardInterrupt:
            if not future.done():
                started.wait()
                cancel[0]()
            with suppress(BaseException):
                future.result()
            raise Stopped(signal.SIGINT) from None


def _cancel_pending(loop: asyncio.AbstractEventLoop) -> None:
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _raise_stopped(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Inside: SIGTERM raises ``Stopped`` (a ``KeyboardInterrupt``) in the main thread, as Ctrl-C would."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_stopped)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def signals_ignored() -> Iterator[None]:
    """Inside: SIGINT and SIGTERM are ignored (for a last write that must not be cut short)."""
    if not _main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def signals_blocked() -> Iterator[None]:
    """Inside: SIGINT and SIGTERM are held for this thread (delivered when the block ends); a
    process started inside begins with them blocked."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)

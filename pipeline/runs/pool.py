"""Verification off the generation path: in this process, or in worker processes, batched.

Worker processes belong to the process that started them: they ignore SIGINT and SIGTERM (a
Ctrl-C reaches the whole process group, and the parent stops its workers itself when it has
unwound), and they die with it even when it is killed outright (SIGKILL): on Linux the kernel
sends them SIGKILL when the thread that started them ends (``PR_SET_PDEATHSIG``), and on every
system a thread in each worker exits it once its parent is gone. multiprocessing's resource tracker
exits when its last client has, so it goes with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.runs.interrupt import STOP_SIGNALS, signals_blocked
from pipeline.verify.verifier import Options, tune_collector, verify_package

PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5
"""How often a worker's watch thread checks that its parent is alive."""


class VerifierCrash(Exception):
    """``verify_package`` raised: a verifier bug, which costs the package its attempt, not the run."""


class VerifierPool:
    """Runs ``verify_package`` for the batch job: in ``processes`` worker processes (so it takes no
    time from the interpreter lock that generation needs), or in a thread of this process when
    ``processes`` is 0.

    A package is handed to a free worker the moment it arrives. Packages that arrive while every
    worker is busy wait and go to the next free worker together, at most ``MAX_BATCH`` in one call:
    under load, the cost of handing work to a process (pickling, queues, wake-ups in this process)
    is paid once per batch instead of once per package.
    """

    MAX_BATCH = 32

    def __init__(self, options: Options, processes: int) -> None:
        self.options = options
        self.processes = processes
        self._pool = self._new_pool() if processes else None
        if not processes:
            tune_collector()  # this process verifies: collect garbage the way a worker does
        self._closed = False
        self._waiting: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]] = []
        self._busy = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    async def verify(self, package: TaskPackage) -> Verdict:
        """The package's verdict; raises ``VerifierCrash`` when ``verify_package`` raised on it."""
        if self._pool is None:
            return _verdict(await asyncio.to_thread(_verify_one, package, self.options))
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (another asyncio.run): the old one's jobs are gone
            self._loop, self._waiting, self._busy = loop, [], 0
        future: asyncio.Future[Verdict | str] = loop.create_future()
        self._waiting.append((package, future))
        self._dispatch()
        return _verdict(await future)

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_start, initargs=(os.getpid(),))

    def _dispatch(self) -> None:
        assert self._loop is not None
        if self._closed:  # shut down: nothing more is verified
            for _, future in self._waiting:
                future.cancel()
            self._waiting = []
            return
        while self._waiting and self._busy < self.processes:
            batch, self._waiting = self._waiting[:self.MAX_BATCH], self._waiting[self.MAX_BATCH:]
            self._busy += 1
            with signals_blocked():  # a worker started here begins with them blocked, then ignores them
                job = self._loop.run_in_executor(self._pool, _verify_batch, [package for package, _ in batch],
                                                 self.options)
            job.add_done_callback(functools.partial(self._finished, batch))

    def _finished(self, batch: list[tuple[TaskPackage, asyncio.Future[Verdict | str]]],
                  job: asyncio.Future[list[Verdict | str]]) -> None:
        self._busy -= 1
        if job.cancelled():  # the pool was shut down
            for _, future in batch:
                future.cancel()
            return
        failure = job.exception()  # the worker process died: every package of the batch fails
        if isinstance(failure, BrokenProcessPool) and self._pool is not None and not self._closed:
            # the next batches go to new workers
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
        for index, (_, future) in enumerate(batch):
            if not future.done():
                if failure is not None:
                    future.set_exception(failure)
                else:
                    future.set_result(job.result()[index])
        self._dispatch()

    def warm(self) -> None:
        """Start the worker processes now (each imports the verifier once) instead of on first use."""
        if self._pool is not None:
            with signals_blocked():
                futures = [self._pool.submit(_ready) for _ in range(self.processes)]
            for future in futures:
                future.result()

    def close(self) -> None:
        """Stop the workers after the batch each is on; packages still waiting are cancelled."""
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def _verify_one(package: TaskPackage, options: Options) -> Verdict | str:
    """The verdict, or ``<exception class>: <message>`` when verification raised."""
    try:
        return verify_package(package, options)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"


def _verify_batch(packages: list[TaskPackage], options: Options) -> list[Verdict | str]:
    return [_verify_one(package, options) for package in packages]


def _verdict(result: Verdict | str) -> Verdict:
    if isinstance(result, str):
        raise VerifierCrash(result)
    return result


def _ready() -> bool:
    return True


def _worker_start(parent: int) -> None:
    """A worker's first act: ignore SIGINT and SIGTERM, end with process ``parent``, and set its
    garbage collector for verification (``tune_collector``)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no libc to load, or no prctl in it
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request above was in place
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()
    tune_collector()


def _watch_parent(parent: int) -> None:
    """Exit this process as soon as ``parent`` is no longer its parent (it died; we were adopted)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)

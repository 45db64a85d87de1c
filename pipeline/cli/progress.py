"""Progress of a long command over a known number of items (rows exported, files imported) on
stderr: a rich bar on a terminal; elsewhere (a pipe, a CI log) a plain line every ``every_s``
seconds and one at the end, never a bar's cut-off last frame.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from pipeline.cli.options import err_console

if TYPE_CHECKING:
    from rich.progress import Progress as Bar

PLAIN_EVERY_S = 10.0
"""Seconds between two plain progress lines when stderr is not a terminal."""


class CountProgress:
    """``with CountProgress("exported", "rows", quiet) as progress: ... progress.update(done, total)``.

    Silent when ``quiet`` (``--json``). On a terminal, a bar from the first update to the end of
    the block; otherwise ``<label> <done> of <total> <unit>`` at most every ``every_s`` seconds,
    and, when it printed any, once more with the final count at the end (a command shorter than
    ``every_s`` prints none). ``detail`` (optional, per update) is shown after the count: `` · <detail>``.
    """

    def __init__(self, label: str, unit: str, quiet: bool, *, every_s: float = PLAIN_EVERY_S,
                 console: Console = err_console) -> None:
        self.label, self.unit, self.quiet, self.every_s, self.console = label, unit, quiet, every_s, console
        self._bar: Bar | None = None
        self._task: Any = None
        self._last_line = 0.0
        self._said: tuple[int, int, str] | None = None
        self._now: tuple[int, int, str] | None = None

    def __enter__(self) -> CountProgress:
        self._last_line = time.monotonic()
        return self

    def update(self, done: int, total: int, detail: str = "") -> None:
        """``done`` of ``total`` items are finished."""
        if self.quiet:
            return
        self._now = (done, total, detail)
        if self.console.is_terminal:
            self._draw(done, total, detail)
        elif time.monotonic() - self._last_line >= self.every_s:
            self._line()

    def _draw(self, done: int, total: int, detail: str) -> None:
        if self._bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self._bar = Bar(TextColumn(f"[bold]{self.label}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn(self.unit), TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                            console=self.console, transient=False)
            self._task = self._bar.add_task(self.label, total=total, detail="")
            self._bar.start()
        self._bar.update(self._task, completed=done, total=total, detail=f"· {detail}" if detail else "")

    def _line(self) -> None:
        if self._now is None or self._now == self._said:
            return
        done, total, detail = self._now
        self.console.print(f"{self.label} {done:,} of {total:,} {self.unit}" + (f" · {detail}" if detail else ""),
                           markup=False, highlight=False, soft_wrap=True)
        self._said = self._now
        self._last_line = time.monotonic()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        elif self._said is not None and exc_type is None:
            self._line()

"""Ray workers that die as they start, for tests on a real local Ray instance.

``synth_with_dying_workers(args, claims, deaths, how)`` is the command line of ``synth args`` in a
fresh Python process whose ``synth run --ray`` actors are ``DiesAtStart`` (a ``SlotWorker``
defined in that process, so Ray sends the class itself to the actors): the first ``deaths`` actors
created in the job (counted across the actors' processes by claiming the files ``0``, ``1``, ... in
the directory ``claims`` with ``O_EXCL``) die in their constructor, before the driver hears they
are up. ``how`` is ``kill`` (the process SIGKILLs itself: a worker lost as it starts) or ``raise``
(the constructor raises ``RuntimeError("this worker cannot start (test fault)")``: a node that
cannot set synth up). The actors' processes inherit the driver's environment (the driver starts
the Ray instance), which carries the settings.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CLAIMS = "SYNTH_TEST_RAY_CLAIMS"
DEATHS = "SYNTH_TEST_RAY_DEATHS"
HOW = "SYNTH_TEST_RAY_HOW"

_SYNTH_WITH_DYING_WORKERS = f"""
import os, signal, sys
from pipeline.runs import ray_slots

class DiesAtStart(ray_slots.SlotWorker):
    def __init__(self, *args):
        claims = os.environ["{CLAIMS}"]
        for n in range(int(os.environ["{DEATHS}"])):
            try:
                os.close(os.open(os.path.join(claims, str(n)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                continue
            if os.environ["{HOW}"] == "raise":
                raise RuntimeError("this worker cannot start (test fault)")
            os.kill(os.getpid(), signal.SIGKILL)
        super().__init__(*args)

ray_slots.SlotWorker = DiesAtStart
sys.argv = ["synth", *sys.argv[1:]]
from pipeline.cli import main
main()
"""


def synth_with_dying_workers(args: list[str], claims: Path, deaths: int,
                             how: str = "kill") -> tuple[list[str], dict[str, str]]:
    """The command and environment of ``synth args`` whose first ``deaths`` Ray actors die as
    they start (see the module); ``claims`` is an empty directory."""
    env = os.environ | {CLAIMS: str(claims), DEATHS: str(deaths), HOW: how}
    return [sys.executable, "-c", _SYNTH_WITH_DYING_WORKERS, *args], env

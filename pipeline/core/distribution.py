"""The name synth is installed under, and the command that installs one of its extras.

The distribution is ``synth-task-packages``: the names ``synth`` and ``pipeline`` on the public
package index belong to other, unrelated projects. The import stays ``pipeline`` and the command
``synth``; only ``pip`` sees this name (``pyproject.toml``'s ``[project].name``, which a test
keeps equal to ``DISTRIBUTION``).
"""

from __future__ import annotations

DISTRIBUTION = "synth-task-packages"
"""The distribution's name (``pip install synth-task-packages``); ``pipeline.__version__`` is its version."""


def install_extra(extra: str) -> str:
    """The command that installs the optional extra ``extra`` (``mcp``, ``pdf``, ``ray``)."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"

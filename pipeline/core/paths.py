"""Where the data folders (``prompts/``, ``capabilities/``) are, installed or in a checkout.

A wheel carries them inside the package as ``pipeline/_data/<name>``; a checkout (or an editable
install) has them at the repository root. Neither depends on the current directory.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} not found next to {_PACKAGE}; reinstall synth")


def prompts_dir() -> Path:
    return data_dir("prompts")


def capabilities_dir() -> Path:
    return data_dir("capabilities")


DEFAULT_CATALOG = Path("output/catalog.duckdb")
"""Where commands read and write the catalog unless told otherwise (relative to the working folder)."""

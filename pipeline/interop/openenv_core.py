"""OpenEnv's core, loaded without the Gradio web interface it offers.

``openenv.core.env_server`` imports its Gradio web interface whenever Gradio can be imported, and
goes without it (``create_web_interface_app`` is None) when it cannot. synth serves no web page
through OpenEnv, and loading Gradio is about half of what importing OpenEnv costs (seconds on a
2-core machine, paid by ``synth serve --openenv`` and by every trainer importing the client).
Importing this module loads ``openenv.core.env_server`` with Gradio held back for that one import;
afterwards Gradio imports as usual for anything else in the process. Imported first by
``pipeline.interop.openenv`` and ``pipeline.interop.openenv_server``.
"""

from __future__ import annotations

import importlib
import sys

_SERVER = "openenv.core.env_server"


def _load_without_web_interface() -> None:
    """Import ``openenv.core.env_server`` with ``import gradio`` failing as if Gradio were not
    installed; if this OpenEnv needs Gradio elsewhere, import it normally instead."""
    if _SERVER in sys.modules or "gradio" in sys.modules:
        importlib.import_module(_SERVER)
        return
    sys.modules["gradio"] = None  # type: ignore[assignment]  # `import gradio` raises ModuleNotFoundError
    try:
        importlib.import_module(_SERVER)
    except ModuleNotFoundError as exc:
        if exc.name != "gradio":
            raise
        del sys.modules["gradio"]
        importlib.import_module(_SERVER)  # an OpenEnv that cannot go without it
    finally:
        if "gradio" in sys.modules and sys.modules["gradio"] is None:
            del sys.modules["gradio"]


_load_without_web_interface()

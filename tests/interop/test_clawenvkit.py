"""``pipeline.cli.interop`` on its own. The ClawEnvKit export is tested in
``test_clawenvkit_export.py``, the import in ``test_clawenvkit_import.py`` and
``test_clawenvkit_import_claw.py``."""

from __future__ import annotations

import subprocess
import sys


def test_cli_interop_imports_on_its_own() -> None:
    code = "from pipeline.cli.interop import resolve_package"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr

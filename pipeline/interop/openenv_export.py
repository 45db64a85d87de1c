"""``synth export --format openenv``: a folder that publishes the selected packages as an OpenEnv
environment, laid out as OpenEnv's own environment template is (what a Hugging Face hub entry
holds):

- ``openenv.yaml``: the manifest (``spec_version``, ``name``, ``type: space``, ``runtime: fastapi``,
  ``app: server.app:app``, ``port``);
- ``packages.jsonl``: the packages, one JSON object a line (``synth serve --openenv`` reads it too);
- ``server/app.py``: the FastAPI app, ``synth serve --openenv``'s environment over those packages;
  ``server/requirements.txt``: what it needs;
- ``client.py``: the client module a trainer imports (``SynthEnv``, ``SynthAction`` and the types);
- ``README.md``: what the environment is and how to run and call it.

The Python files are fixed text: they import ``pipeline.interop.openenv`` and read
``packages.jsonl``; nothing of a package becomes code.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.catalog.selection import Selection
from pipeline.core.distribution import DISTRIBUTION
from pipeline.core.training_format import Policy

PORT = 8000
"""The port OpenEnv's template serves on."""

APP = '''"""The OpenEnv app of these synth packages: ``uvicorn server.app:app --port 8000``.

Serves ``packages.jsonl`` (next to ``openenv.yaml``) as ``synth serve --openenv`` does, without its
Host/Origin guard: run it in the environment's container. On a workstation prefer
``synth serve --openenv packages.jsonl``, which listens on loopback only.
"""

from pathlib import Path

from pipeline.core.package import load_package
from pipeline.interop.openenv_server import PackagePool, build_app

PACKAGES = Path(__file__).resolve().parents[1] / "packages.jsonl"

app = build_app(PackagePool([load_package(line) for line in PACKAGES.read_text(encoding="utf-8").splitlines()
                             if line.strip()]))
'''

CLIENT = '''"""The client of this environment: ``from client import SynthEnv, SynthAction``.

    import asyncio
    from client import SynthAction, SynthEnv

    async def main():
        async with SynthEnv(base_url="http://localhost:8000") as env:
            result = await env.reset()                      # the request and the tools
            result = await env.step(SynthAction.final(""))  # the final answer ends the episode
            print(result.reward, result.observation.info["passed"])

    asyncio.run(main())
"""

from pipeline.interop.openenv import SynthAction, SynthEnv, SynthObservation, SynthState

__all__ = ["SynthAction", "SynthEnv", "SynthObservation", "SynthState"]
'''

REQUIREMENTS = f"{DISTRIBUTION}[openenv]\n"


def manifest(name: str) -> str:
    """``openenv.yaml`` for an environment named ``name``."""
    return (f"spec_version: 1\nname: {name}\ntype: space\nruntime: fastapi\napp: server.app:app\nport: {PORT}\n")


def readme(name: str, count: int) -> str:
    return f"""# {name}

{count:,} verified synth task packages as one OpenEnv environment: each episode is one package, a
request to complete with tools over a mock world (and, for some, a simulated user to ask). The
reward is the package's score when the episode ends: the verifier's grader, so a reward of 1.0
is a run that does everything the package checks.

- `reset(package_id=..., seed=...)` picks a package (by id, by its position in the server's
  seeded shuffle, or the next one) and returns the request and the tools (OpenAI function schemas);
- `step(SynthAction)` takes a tool call (`SynthAction.call(name, arguments)`), a question to the
  user (`SynthAction.question(text)`) or the final answer (`SynthAction.final(text)`);
- `state()` gives the episode id, step count and package id.

Run it: `uvicorn server.app:app --port {PORT}` (in a container), or `synth serve --openenv
packages.jsonl --port {PORT}` (loopback only). Call it with `client.py` (`SynthEnv`), or any
OpenEnv client with dict actions (`{{"type": "tool_call", "name": ..., "arguments": {{...}}}}`,
`{{"type": "ask", "text": ...}}`, `{{"type": "answer", "text": ...}}`).

Needs `{DISTRIBUTION}[openenv]` (`server/requirements.txt`).
"""


def export_openenv(selection: Selection, out: Path, policy: Policy | None = None) -> int:
    """Write the folder (see the module docstring) of the selected packages into ``out`` (an empty
    folder); returns how many packages it holds."""
    count = 0
    with (out / "packages.jsonl").open("w", encoding="utf-8") as sink:
        for package in selection.packages():
            sink.write(package.to_json() + "\n")
            count += 1
    name = "synth-packages"
    (out / "openenv.yaml").write_text(manifest(name), encoding="utf-8")
    (out / "README.md").write_text(readme(name, count), encoding="utf-8")
    (out / "client.py").write_text(CLIENT, encoding="utf-8")
    (out / "server").mkdir()
    (out / "server" / "__init__.py").write_text("", encoding="utf-8")
    (out / "server" / "app.py").write_text(APP, encoding="utf-8")
    (out / "server" / "requirements.txt").write_text(REQUIREMENTS, encoding="utf-8")
    return count

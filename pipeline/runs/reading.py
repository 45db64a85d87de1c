"""Which reader confirms the verifier's readings of a request in a run or a ``synth verify``, and
the stage that asks it (``verify.readers`` for the protocol, ``generation.model_reader`` for the
model reader).

``--reader auto`` (the default): with ``--model``, the generator's model reads (its server, unless
``--reader-model`` / ``--reader-base-url`` name another); offline, the rules read. ``--reader
rules`` keeps the rules' reading everywhere; ``--reader model`` asks a model (``--reader-model``,
else the generator's, else ``SYNTH_MODEL``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pipeline.core.errors import UserError
from pipeline.core.outcomes import Verdict
from pipeline.core.package import TaskPackage
from pipeline.generation.model_endpoint import Endpoint
from pipeline.verify.proposals import read_package
from pipeline.verify.readers import Reader, ReadingCache, RulesReader

if TYPE_CHECKING:  # the catalog imports duckdb: `synth verify` has no catalog, and need not load it
    from pipeline.catalog.store import Catalog

ReaderKind = Literal["auto", "rules", "model"]
READER_KINDS: tuple[str, ...] = ("auto", "rules", "model")


def make_reader(kind: str = "auto", reader_model: str | None = None, reader_base_url: str | None = None,
                generator_model: str | None = None, generator_base_url: str | None = None) -> Reader:
    """The reader ``kind`` names (see the module); a ``UserError`` for an unknown kind, or a model
    reader with no model named anywhere."""
    if kind not in READER_KINDS:
        raise UserError(f"--reader {kind!r}: not a reader; use one of {', '.join(READER_KINDS)}")
    if kind == "rules" or (kind == "auto" and generator_model is None and reader_model is None):
        return RulesReader()
    endpoint = Endpoint.from_env(reader_model or generator_model, reader_base_url or generator_base_url)
    if endpoint.offline:
        raise UserError("--reader model needs a model: pass --reader-model NAME (and --reader-base-url URL), "
                        "or --model, or set SYNTH_MODEL")
    from pipeline.generation.model_client import ModelClient  # imports openai: only when a model reads
    from pipeline.generation.model_reader import ModelReader

    key = endpoint.api_key(f"the reader's model {endpoint.model!r} needs OPENAI_API_KEY set (or --reader-base-url "
                           "for a server that needs no key)")
    own = reader_model is not None or reader_base_url is not None  # else the generator's server: its options
    return ModelReader(ModelClient(endpoint.model, endpoint.base_url, key,
                                   model_option="--reader-model" if own else "--model",
                                   url_option="--reader-base-url" if own else "--base-url"))


class ReadingStage:
    """Asks ``reader`` about each verdict's claims, with the answers ``catalog`` already holds as a
    cache (loaded once). The rules reader is never asked: its reading is the verdict as it is."""

    def __init__(self, reader: Reader, catalog: Catalog | None = None) -> None:
        self.reader = reader
        self.active = not isinstance(reader, RulesReader)
        self.cache = ReadingCache(catalog.readings(reader.name) if catalog is not None and self.active else ())

    def arguments(self) -> tuple[Reader | None, ReadingCache]:
        """``(reader, cache)`` as ``verify_package`` takes them (no reader: the rules' reading)."""
        return (self.reader if self.active else None), self.cache

    def read(self, verdict: Verdict, package: TaskPackage) -> Verdict:
        return read_package(verdict, package, self.reader, self.cache) if self.active else verdict

    async def aread(self, verdict: Verdict, package: TaskPackage) -> Verdict:
        """``read`` in a thread (a model reader blocks on its requests)."""
        import asyncio  # only under a running event loop: `synth verify` never loads asyncio

        if not self.active:
            return verdict
        return await asyncio.to_thread(self.read, verdict, package)

    def close(self) -> None:
        client = getattr(self.reader, "client", None)
        if client is not None:
            client.close()

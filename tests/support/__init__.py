"""Test doubles that run for real, for tests and benchmarks (not part of the package): a local
OpenAI-compatible server with scripted faults (``openai_server``), scripted agents to put behind it
(``agent_server``), process checks (``processes``) and the claw profile's conformance cases
(``claw_conformance``)."""

from tests.support.openai_server import Fault, FaultPlan, OpenAIServer, Responder, fixed_responder

__all__ = ["Fault", "FaultPlan", "OpenAIServer", "Responder", "fixed_responder"]

"""Test doubles that run for real: a local OpenAI-compatible server with scripted faults."""

from pipeline.testing.openai_server import Fault, FaultPlan, OpenAIServer, Responder, fixed_responder

__all__ = ["Fault", "FaultPlan", "OpenAIServer", "Responder", "fixed_responder"]

"""Packages as environments for agents: ``TaskEnv`` (in process) and the HTTP server (``http``)."""

from pipeline.env.task_env import (
    Action,
    Answer,
    Ask,
    Observation,
    StepResult,
    TaskEnv,
    ToolCall,
    play_reference,
)

__all__ = ["Action", "Answer", "Ask", "Observation", "StepResult", "TaskEnv", "ToolCall", "play_reference"]

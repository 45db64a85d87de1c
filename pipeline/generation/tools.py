"""Tools as the service catalogue defines them.

A package's tool is bound to a catalogue operation by its ``service`` and ``endpoint``; its
``parameters`` (and, unless given, its ``description``) are the operation's. Generators take them
from here rather than have a model copy JSON Schemas by hand: the offline generator builds every
tool with ``catalogue_tool``, the LLM generator completes the tools the model names with
``bound_to_catalogue``.
"""

from __future__ import annotations

from functools import cache

from pipeline.core.package import TaskPackage, Tool
from pipeline.core.services import OperationSpec, catalogue, default_tool_name, find_operation


class UnknownTool(ValueError):
    """A tool name that is no operation of the service catalogue."""


@cache
def _operations() -> dict[str, tuple[str, OperationSpec]]:
    return {default_tool_name(s.name, op): (s.name, op) for s in catalogue().values() for op in s.operations}


def catalogue_tool(name: str) -> Tool:
    """The tool ``<service>_<operation>`` exactly as the service catalogue defines the operation."""
    found = _operations().get(name)
    if found is None:
        raise UnknownTool(f"tool {name!r} is not an operation of the service catalogue")
    service, op = found
    return Tool(name=name, service=service, endpoint=op.endpoint, description=op.description,
                parameters=op.parameters)


def bound_to_catalogue(package: TaskPackage) -> TaskPackage:
    """The package with each tool whose ``service`` and ``endpoint`` name a catalogue operation
    given that operation's parameters (and its description when the tool has none). A tool bound
    to nothing is left as it is, for verification to reject."""
    tools = []
    for tool in package.tools:
        found = find_operation(tool.endpoint)
        if found is not None and found[0].name == tool.service:
            tool = tool.model_copy(update={"parameters": found[1].parameters,
                                           "description": tool.description or found[1].description})
        tools.append(tool)
    return package.model_copy(update={"tools": tools})

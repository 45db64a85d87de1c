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
from pipeline.core.services import (
    DEFAULT_PROFILE,
    OperationSpec,
    catalogue,
    default_tool_name,
    find_operation,
)


class UnknownTool(ValueError):
    """A tool name that is no operation of the service catalogue."""


@cache
def _operations(profile: str) -> dict[str, tuple[str, OperationSpec]]:
    return {default_tool_name(s.name, op, profile): (s.name, op)
            for s in catalogue(profile).values() for op in s.operations}


def catalogue_tool(name: str, profile: str = DEFAULT_PROFILE) -> Tool:
    """The tool named ``name`` (``default_tool_name``) exactly as the profile's service catalogue
    defines its operation."""
    found = _operations(profile).get(name)
    if found is None:
        raise UnknownTool(f"tool {name!r} is not an operation of the {profile} service catalogue")
    service, op = found
    return Tool(name=name, service=service, endpoint=op.endpoint, description=op.description,
                parameters=op.parameters)


def bound_to_catalogue(package: TaskPackage) -> TaskPackage:
    """The package with each tool whose ``service`` and ``endpoint`` name a catalogue operation
    given that operation's parameters (and its description when the tool has none). A tool bound
    to nothing is left as it is, for verification to reject."""
    tools = []
    for tool in package.tools:
        found = find_operation(tool.endpoint, package.service_profile)
        if found is not None and found[0].name == tool.service:
            tool = tool.model_copy(update={"parameters": found[1].parameters,
                                           "description": tool.description or found[1].description})
        tools.append(tool)
    return package.model_copy(update={"tools": tools})

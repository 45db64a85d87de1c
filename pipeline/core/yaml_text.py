"""Safe YAML for everything this project reads as data: dates stay text, aliases are refused.

- Dates and date-times stay the strings they were written as (``due_date: 2026-12-10`` must stay
  ``"2026-12-10"``: the mock world compares strings).
- Anchors and aliases (``&a`` / ``*a``) are refused: a few kilobytes of nested aliases expand to
  gigabytes (a "billion laughs" bomb), and no package, template or task needs them.
- Parsing is libyaml's (PyYAML's C parser when present); the document is then built straight from
  the node tree, which is several times faster than PyYAML's general constructor on the
  thousands of small documents the offline generator renders.
"""

from __future__ import annotations

from typing import Any

import yaml

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader without the implicit timestamp resolver."""


_Loader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class AliasError(yaml.YAMLError):
    """The document uses an anchor/alias."""

    def __init__(self, node: yaml.Node) -> None:
        mark = node.start_mark
        super().__init__(f"YAML anchors and aliases are not allowed (line {mark.line + 1}, column {mark.column + 1})")


def load(text: str) -> Any:
    """Parse YAML ``text`` safely, dates left as strings (raises ``yaml.YAMLError``, ``AliasError``
    for an alias)."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _build(loader, node, set())
    finally:
        loader.dispose()


def _build(loader: Any, node: yaml.Node, seen: set[int]) -> Any:
    """The Python value of ``node``; a node met twice is an alias."""
    if id(node) in seen:
        raise AliasError(node)
    seen.add(id(node))
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        return node.value if tag == _STR else _scalar(loader, node)
    if isinstance(node, yaml.SequenceNode) and tag == _SEQ:
        return [_build(loader, child, seen) for child in node.value]
    if isinstance(node, yaml.MappingNode) and tag == _MAP:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise AliasError(key_node)
            key, value = _build(loader, key_node, seen), _build(loader, value_node, seen)
            try:
                out[key] = value
            except TypeError as exc:
                raise yaml.constructor.ConstructorError(None, None, f"unhashable key ({exc})",
                                                        key_node.start_mark) from exc
        return out
    return _scalar(loader, node)


def _scalar(loader: Any, node: yaml.Node) -> Any:
    """``node`` built by the loader; a value it cannot build (an integer of more digits than Python
    converts, 4,300) is a ``ConstructorError`` at its place, not a ``ValueError``."""
    try:
        return loader.construct_object(node, deep=True)
    except (ValueError, OverflowError) as exc:
        raise yaml.constructor.ConstructorError(None, None, f"cannot read the value ({str(exc)[:120]})",
                                                node.start_mark) from None

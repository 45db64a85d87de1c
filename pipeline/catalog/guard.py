"""Vetting user-written SQL before it reaches the catalog.

Two layers for ``synth catalog query``: the text must parse as exactly one ``SELECT`` statement
(``SELECT``/``WITH``/``FROM``/``VALUES``/``DESCRIBE``/``SHOW``/``SUMMARIZE`` all parse as one), and it
then runs on a sandboxed read-only connection (``connect.Access.SANDBOX``) that cannot write the
database, touch files, load extensions or change settings. An ``--where`` filter must parse as
exactly one SQL expression.
"""

from __future__ import annotations

import duckdb

from pipeline.catalog.connect import first_line
from pipeline.catalog.errors import CatalogError

_QUERY_HINT = "`synth catalog query` runs one read-only SELECT"


def check_select(sql: str) -> str:
    """Return ``sql`` (stripped, trailing ``;`` removed) if it is exactly one SELECT statement.

    Raises ``CatalogError`` for anything else: several statements, a write, DDL, ``COPY``,
    ``ATTACH``, ``INSTALL``/``LOAD``, ``SET``, ``PRAGMA``, ``CALL``, transactions, or a parse error.
    """
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise CatalogError(f"empty query; {_QUERY_HINT}")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as exc:
        raise CatalogError(f"query does not parse: {first_line(str(exc))}") from exc
    if len(statements) != 1:
        raise CatalogError(f"query holds {len(statements)} statements; {_QUERY_HINT}")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise CatalogError(f"refused a {kind.name} statement: the catalog is read-only here; {_QUERY_HINT}")
    return text


def parse_where(where: str) -> duckdb.Expression:
    """Parse ``where`` as one SQL boolean expression (no ``;``, no second expression or statement)."""
    if ";" in where:
        raise CatalogError("--where must be one SQL expression without ';', e.g. \"capability = 'general'\"")
    try:
        return duckdb.SQLExpression(where)
    except duckdb.Error as exc:
        raise CatalogError(f"--where is not one SQL expression: {first_line(str(exc))}") from exc

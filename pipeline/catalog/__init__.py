"""The DuckDB catalog: a storage layer for runs, packages, verdicts and LLM calls (``store.Catalog``)."""

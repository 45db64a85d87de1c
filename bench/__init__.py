"""Benchmarks: each script runs with one command and prints its figures (see docs/benchmarks.md)."""

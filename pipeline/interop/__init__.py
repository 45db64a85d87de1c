"""Conversions between synth task packages and other projects' task formats."""

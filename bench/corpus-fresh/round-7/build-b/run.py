"""Rebuild the b-half packages (c16-c30, d16-d30) and play their reference and alternative agents.

Usage: PYTHONPATH=$PWD python bench/corpus-fresh/round-7/build-b/run.py clean1,clean2,clean3,clean4,defects1,defects2,defects3 [FILTER...]
"""
import importlib
import sys

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
import lib

for m in sys.argv[1].split(","):
    importlib.import_module(m)
lib.main(sys.argv[2:] or None)

"""Benchmarks (see bench/suite.py) and the figure writer they share (bench/record.py)."""

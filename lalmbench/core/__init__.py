"""Shared core: atomic I/O, statistics, provenance, progress logs: what every stage below builds on."""

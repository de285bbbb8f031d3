"""Seeded synthetic audio + strong annotations: the embedded default dataset (no downloads)."""

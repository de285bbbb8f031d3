"""Data: audio decoding and caching, annotation tables and their checks, mixtures, dataset adapters, synthetic data."""

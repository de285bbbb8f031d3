"""Snakemake-only glue: config loading and validation, model entries, the run grid, per-rule envs."""

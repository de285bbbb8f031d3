"""Figures drawn from result tables (never from raw outputs, so a figure and its table agree)."""

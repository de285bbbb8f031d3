"""Checks on scored runs: does the model listen, do runs agree, do backends agree, sweeps over settings."""

"""The registries are the single source of truth: every name the config schema offers for an adapter,
backend or open-ended scoring kind is one a registry can run, and the other way round. A new adapter,
backend or metric that is registered but missing from the schema (or left in the schema after its
module is gone) fails here, naming the names."""
from pathlib import Path

import pytest
import yaml

from lalmbench.data.adapters import ADAPTERS, DERIVED_ADAPTERS
from lalmbench.models.base import BACKEND_MODULES
from lalmbench.scoring.metrics.open import OPEN_METRICS

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "schema.yaml").read_text())
PROPS = SCHEMA["properties"]


def _same(where: str, schema_names: list[str], registry: str, registered) -> None:
    missing, stale = sorted(set(registered) - set(schema_names)), sorted(set(schema_names) - set(registered))
    assert not missing and not stale, (
        f"config/schema.yaml {where} and {registry} disagree: add {missing} to the schema enum, "
        f"remove {stale} from it (or register them)")


def test_adapter_enum_matches_the_adapter_registry():
    enum = PROPS["datasets"]["additionalProperties"]["properties"]["adapter"]["enum"]
    from lalmbench.data.adapters.benchmarks import preset_names

    _same("datasets.<name>.adapter", enum, "lalmbench.data.adapters ADAPTERS + DERIVED_ADAPTERS + presets/*.yaml",
          {*ADAPTERS, *DERIVED_ADAPTERS, *preset_names()})


def test_backend_enum_matches_the_backend_registry():
    model = PROPS["models"]["additionalProperties"]
    _same("models.<name>.backend", model["properties"]["backend"]["enum"], "lalmbench.models.base.BACKEND_MODULES",
          BACKEND_MODULES)
    blocks = sorted(SCHEMA["$defs"]["backends"])
    assert blocks == sorted(BACKEND_MODULES), f"$defs/backends has blocks {blocks}, registry has {sorted(BACKEND_MODULES)}"


def test_open_metric_enum_matches_the_metric_registry():
    enum = PROPS["tasks"]["additionalProperties"]["properties"]["scoring"]["properties"]["kind"]["enum"]
    _same("tasks.<name>.scoring.kind", enum, "lalmbench.scoring.metrics.open.OPEN_METRICS", OPEN_METRICS)


def test_reads_files_routes_file_adapters_to_adapt_dataset_and_names_unknown_ones():
    from lalmbench.data.adapters import reads_files

    assert reads_files("generic") and not reads_files("mix") and not reads_files("synth_scenes")
    with pytest.raises(ValueError, match=r"unknown dataset adapter 'generik' \(known: air_bench, .*audioset_strong, .*generic"):
        reads_files("generik")

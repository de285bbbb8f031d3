"""Per generate job: wall time, outputs and GPUs in its summary; items/s and GPU-seconds per 1,000 items
in results/tables/cost.tsv, repeated on each run the job served."""
import pandas as pd
import pytest

from lalmbench.core import io
from lalmbench.inference import Slice, generate
from lalmbench.inference.job_cost import FROM_CACHE, NO_GPU, combined, run_job_figures, run_key
from lalmbench.report.aggregate import write_all_tsv
from tests.test_inference import TEMPLATE, items_path  # noqa: F401 - the runner tests' 30 items, a fixture


def _slices(items_path) -> list[Slice]:
    return [Slice(items=str(items_path), condition=c, prompt="p", template=str(TEMPLATE),
                  out=f"results/predictions/m/synth/po/{c}/p.parquet") for c in ("audio", "no-audio")]


def test_a_job_records_its_wall_time_outputs_and_gpus_and_the_table_divides(items_path, tmp_path):
    cfg = {"backend": "random", "resources": {"gpus": 2}}
    summary = generate(model_name="m", model_cfg=cfg, slices=_slices(items_path),
                       cache_path=tmp_path / "c.jsonl")
    job = summary["job"]
    assert job["generated"] == 60 and job["gpus"] == 2 and job["wall_s"] > 0
    figures = run_job_figures([summary])
    assert sorted(figures) == [("m", "synth", "po", "audio", "p"), ("m", "synth", "po", "no-audio", "p")]
    row = figures[("m", "synth", "po", "audio", "p")]
    assert row["items_per_s"] == pytest.approx(60 / job["wall_s"])
    assert row["gpu_s_per_1000_items"] == pytest.approx(1000 * 2 * job["wall_s"] / 60)
    assert row["jobs"] == 1 and row["job_note"] == ""
    again = generate(model_name="m", model_cfg=cfg, slices=_slices(items_path), cache_path=tmp_path / "c.jsonl")
    cached = run_job_figures([again])[("m", "synth", "po", "audio", "p")]
    assert again["job"]["generated"] == 0 and cached["items_per_s"] is None and cached["job_note"] == FROM_CACHE


def test_shards_add_up_and_a_cpu_job_has_no_gpu_seconds():
    shards = [{"wall_s": 10.0, "generated": 30, "gpus": 1}, {"wall_s": 20.0, "generated": 30, "gpus": 1}]
    assert combined(shards) == {"jobs": 2, "job_wall_s": 30.0, "items_per_s": 2.0, "gpu_s_per_1000_items": 500.0,
                                "job_note": ""}
    cpu = combined([{"wall_s": 4.0, "generated": 8, "gpus": 0}])
    assert cpu["items_per_s"] == 2.0 and cpu["gpu_s_per_1000_items"] is None and cpu["job_note"] == NO_GPU
    assert run_key("results/sweeps/circular/predictions/m/d/t/c/p/k2.parquet") is None


def test_cost_tsv_carries_the_jobs_figures_on_each_run(tmp_path):
    run = {"model": "m", "dataset": "synth", "task": "po", "prompt": "p", "metric": "accuracy", "value": 0.5,
           "cost": {"backend": "hf", "n_outputs": 12, "latency_s_mean": 0.5}}
    paths = []
    for c in ("audio", "no-audio"):
        paths.append(tmp_path / f"{c}.json")
        paths[-1].write_text(io.dumps_json({**run, "condition": c}))
    job = tmp_path / "job.json"
    job.write_text(io.dumps_json({"job": {"wall_s": 6.0, "generated": 24, "gpus": 1},
                                  "slices": [{"out": "results/predictions/m/synth/po/audio/p.parquet"}]}))
    write_all_tsv(map(str, paths), str(tmp_path / "all.tsv"), cost_out=str(tmp_path / "cost.tsv"), jobs=[str(job)])
    cost = pd.read_csv(tmp_path / "cost.tsv", sep="\t", keep_default_na=False)
    audio, silent = cost.set_index("condition").loc[["audio", "no-audio"]].to_dict("records")
    assert (audio["items_per_s"], audio["gpu_s_per_1000_items"], audio["jobs"]) == ("4", "250", 1)
    assert silent["items_per_s"] == ""
    assert silent["job_note"] == "no generate job summary names this run's predictions file"

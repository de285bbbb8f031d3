"""GPUs a model entry asks for: given, or derived from tensor parallelism / a multi-GPU device map."""
import pytest

from lalmbench.inference.gpu_plan import format_gpu_plan, gpu_jobs, resolve_gpus
from lalmbench.workflow.config import Run


@pytest.mark.parametrize("entry, gpus", [
    ({"backend": "vllm", "params": {"tensor_parallel_size": 2}}, 2),
    ({"backend": "vllm", "params": {"tensor_parallel_size": 4}, "resources": {"gpus": 4}}, 4),
    ({"backend": "hf", "params": {"device_map": {"audio_tower": 0, "language_model": "cuda:1", "lm_head": 1}}}, 2),
    ({"backend": "hf", "params": {"device_map": "auto"}, "resources": {"gpus": 3}}, 3),
    ({"backend": "random"}, 0),
])
def test_the_gpu_request_is_derived_from_the_entry(entry, gpus):
    models = {"m": entry}
    assert resolve_gpus(models) == []
    assert models["m"]["resources"]["gpus"] == gpus


def test_a_gpu_count_that_contradicts_tensor_parallelism_is_refused():
    models = {"big": {"backend": "vllm", "params": {"tensor_parallel_size": 2}, "resources": {"gpus": 1}}}
    [problem] = resolve_gpus(models)
    assert problem == ("models.big.resources.gpus: 1, but params.tensor_parallel_size: 2 (each generate job "
                       "needs 2; set gpus: 2 or leave it out)")


def test_the_dry_run_summary_shows_shards_and_multi_gpu_jobs():
    models = {"sharded": {"backend": "hf", "shards": 4, "resources": {"gpus": 1, "gpu_model": "a100"}},
              "two-gpu": {"backend": "vllm", "params": {"tensor_parallel_size": 2}, "resources": {"gpu_model": "h100"}}}
    resolve_gpus(models)
    runs = [Run(m, d, "t", "audio", "p") for m in models for d in ("d1", "d2")]
    text = format_gpu_plan(gpu_jobs(models, runs), None)
    assert "--gpus=a100:1 " in text and "runs=2  jobs=8 (4 shards per dataset)" in text
    assert "--gpus=h100:2 " in text and "runs=2  jobs=2" in text

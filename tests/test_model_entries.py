"""Model entries: each backend's keys (and generation keys) are checked at config load, so a typo
fails `snakemake -n` naming the key and the closest allowed one, instead of a job at run time."""
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from lalmbench.workflow.config import ConfigError, model_max_error_rate, validate_config
from lalmbench.models.base import BACKEND_MODULES

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "config" / "schema.yaml"


def _cfg(**models):
    return {"datasets": {"d": {"adapter": "synth_trivial"}},
            "tasks": {"t": {"dataset": "d", "family": "pitch_order"}}, "models": models}


def errors_of(**models) -> list[str]:
    with pytest.raises(ConfigError) as e:
        validate_config(_cfg(**models), SCHEMA, ROOT)
    return str(e.value).splitlines()[1:]


HF = {"backend": "hf", "model_id": "Qwen/Qwen2-Audio-7B-Instruct"}


def test_a_misspelt_key_names_the_backend_and_the_closest_allowed_key():
    (line,) = errors_of(q={**HF, "batchsize": 8})
    assert line.startswith("  models.q.batchsize: unknown key 'batchsize' for backend 'hf'; did you mean 'batch_size'? "
                           "(allowed: attention, attn_implementation, audio_position, backend, batch_size, ")


@pytest.mark.parametrize("entry, message", [
    ({**HF, "generation": {"temprature": 0.2}},
     "models.q.generation.temprature: unknown key 'temprature' for backend 'hf'; did you mean 'temperature'? "
     "(allowed: do_sample, length_penalty, max_new_tokens, min_new_tokens, min_p, no_repeat_ngram_size, num_beams, "
     "repetition_penalty, samples, temperature, thinker_max_new_tokens, top_k, top_p, typical_p)"),
    ({"backend": "randm"},
     "models.q.backend: unknown backend 'randm'; did you mean 'random'? (known: cascade, hf, imported, openai, "
     "random, signal, text-overlap, vllm)"),
    ({"backend": "random", "shard_size": 100},
     "models.q.shard_size: not a model setting: models are not sharded (each model's items are served by one generate "
     "job that loads the model once, and a job cut off by its runtime resumes from the prediction cache); remove it, "
     "and raise resources.runtime for long runs"),
    ({"backend": "cascade", "generation": {"max_new_tokens": 8}},
     "models.q.generation.max_new_tokens: unknown key 'max_new_tokens' for backend 'cascade' (this backend takes none here)"),
    # a key value in the entry is refused before the schema, whose messages could quote it
    ({"backend": "openai", "params": {"base_url": "http://x/v1", "api_key": "sk-1"}},
     "models.q.params.api_key: secrets are read only from the environment; export the key in a variable and "
     "set params.api_key_env to that variable's name (a value here would be printed in job commands and logs)"),
    ({"backend": "openai", "params": {"base_url": "http://x/v1", "api_keyenv": "K"}},
     "models.q.params.api_keyenv: unknown key 'api_keyenv' for backend 'openai'; did you mean 'api_key_env'? (allowed: "
     "api_key_env, backoff_max_s, backoff_s, base_url, deadline_s, max_concurrency, max_response_bytes, max_retries, "
     "stream, system_prompt, timeout_s)"),
    ({"backend": "vllm", "model_id": "m/x", "generation": {"num_beams": 4}},
     "models.q.generation.num_beams: 1 was expected"),
    ({"backend": "vllm", "model_id": "m/x"},
     "models.q.family: backend 'vllm' needs a family (one of qwen2_audio, qwen2_5_omni, qwen3_omni, gemma3n, voxtral, "
     "audioflamingo3, text)"),
    ({**HF, "params": {"family": "qwen2audio"}},
     "models.q.family: unknown family 'qwen2audio' for backend 'hf'; did you mean 'qwen2_audio'? (known: "
     "audioflamingo3, gemma3n, qwen2_5_omni, qwen2_audio, qwen3_omni, text, voxtral)"),
    ({**HF, "dtype": "fp16"}, "models.q.dtype: 'fp16' is not one of ['auto', 'bfloat16', 'float16', 'float32']"),
    ({"backend": "random", "resources": {"gpuz": 1}},
     "models.q.resources.gpuz: unknown key 'gpuz' for backend 'random'; did you mean 'gpus'? "
     "(allowed: cpus, cpus_per_gpu, gpu_model, gpus, mem_mb, runtime)"),
])
def test_bad_entries_fail_at_config_load_naming_the_key(entry, message):
    assert errors_of(q=entry) == ["  " + message]


def test_a_type_error_is_not_also_reported_as_an_unexpected_key():
    # jsonschema alone adds "Unevaluated properties are not allowed ('params' was unexpected)" here
    assert errors_of(q={"backend": "vllm", "model_id": "m/x", "params": {"family": "text", "tensor_parallel_size": "2"}}) \
        == ["  models.q.params.tensor_parallel_size: '2' is not of type 'integer'"]


@pytest.mark.parametrize("entry", [
    {"backend": "random", "seed": 3, "delay_s": 0.1, "max_error_rate": 0.2, "description": "chance floor"},
    {"backend": "text-overlap", "conditions": ["no-audio"]},
    {"backend": "cascade", "params": {"cpu_threads": 1, "transcribe": "always"}, "resources": {"cpus": 2}},
    {"backend": "openai", "model_id": "m", "generation": {"max_new_tokens": 8, "temperature": 0.0, "stop": ["\n"]},
     "params": {"base_url": "http://127.0.0.1:8000/v1", "api_key_env": None}},
    {**HF, "family": "qwen2-audio", "dtype": "bfloat16", "generation": {"thinker_max_new_tokens": 64}},
    {**HF, "params": {"scoring": "loglik", "loglik_norm": "sum"}},
    {"backend": "vllm", "model_id": "m/x", "params": {"family": "voxtral", "mode": "chat"}, "max_model_len": 4096,
     "generation": {"do_sample": True, "temperature": 0.7}},
])
def test_good_entries_of_every_backend_validate(entry):
    validate_config(_cfg(q=entry), SCHEMA, ROOT)


def test_every_registered_backend_has_one_schema_block():
    schema = yaml.safe_load(SCHEMA.read_text())
    entry = schema["properties"]["models"]["additionalProperties"]
    assert set(schema["$defs"]["backends"]) == set(BACKEND_MODULES), \
        "add a $defs/backends/<name> block in config/schema.yaml for every backend in BACKEND_MODULES"
    assert set(entry["properties"]["backend"]["enum"]) == set(BACKEND_MODULES)
    applied = {(b["if"]["properties"]["backend"]["const"], b["then"]["$ref"]) for b in entry["allOf"]}
    assert applied == {(name, f"#/$defs/backends/{name}") for name in BACKEND_MODULES}


def _allowed_top_level(backend: str) -> set[str]:
    schema = yaml.safe_load(SCHEMA.read_text())
    block = schema["$defs"]["backends"][backend]
    keys = set(schema["properties"]["models"]["additionalProperties"]["properties"]) | set(block.get("properties", {}))
    for sub in block.get("allOf", []):
        keys |= set(schema["$defs"][sub["$ref"].rsplit("/", 1)[1]]["properties"])
    return keys


def test_the_schema_and_the_backends_own_key_checks_agree():
    from lalmbench.models.hf.settings import PIPELINE_KEYS, HFSettings
    from lalmbench.models.vllm_backend import KNOWN_KEYS

    assert _allowed_top_level("hf") == {f.name for f in dataclasses.fields(HFSettings)} | PIPELINE_KEYS | {"params"}
    # attention is a key of every entry in the schema; lalmbench.attention.plan refuses it off hf with its reason
    assert _allowed_top_level("vllm") == KNOWN_KEYS | {"params", "attention"}


def test_hf_generation_keys_are_generation_config_fields():
    transformers = pytest.importorskip("transformers")
    gen = yaml.safe_load(SCHEMA.read_text())["$defs"]["hf_generation"]["properties"]
    fields = vars(transformers.GenerationConfig())
    # the Omni alias, mapped by the backend, and the pipeline's draws per item, which the backend never passes on
    assert [k for k in gen if k not in fields] == ["thinker_max_new_tokens", "samples"]


def test_vllm_generation_keys_all_map_onto_sampling_params():
    from lalmbench.models.vllm_backend import sampling_kwargs

    gen = yaml.safe_load(SCHEMA.read_text())["$defs"]["backends"]["vllm"]["properties"]["generation"]["properties"]
    example = {"max_new_tokens": 8, "thinker_max_new_tokens": 8, "do_sample": True, "num_beams": 1, "temperature": 0.5,
               "top_p": 0.9, "top_k": 5, "repetition_penalty": 1.1, "samples": 4}
    assert set(example) == set(gen)
    out = sampling_kwargs({"generation": example, "seed": 1})
    assert out == {"max_tokens": 8, "seed": 1, "repetition_penalty": 1.1, "temperature": 0.5, "top_p": 0.9, "top_k": 5}


def test_a_model_entry_may_set_its_own_error_budget():
    cfg = validate_config(_cfg(api={"backend": "random", "max_error_rate": 0.25}, floor={"backend": "random"}),
                          SCHEMA, ROOT)
    assert (model_max_error_rate(cfg, "api"), model_max_error_rate(cfg, "floor")) == (0.25, 0.0)


def test_dry_run_hands_each_generate_job_its_models_error_budget_and_rejects_typos(tmp_path):
    cfg = _cfg(api={"backend": "random", "max_error_rate": 0.25}, floor={"backend": "random"})
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    out = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", f"--configfile={tmp_path}/c.yaml",
                          "results/predictions/api/generate/d.json", "results/predictions/floor/generate/d.json"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    budgets = dict(re.findall(r"scripts/generate\.py --model (\S+) .*--max-error-rate (\S+)", out.stdout))
    assert budgets == {"api": "0.25", "floor": "0.0"}

    cfg["models"]["api"]["batchsize"] = 4
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    bad = subprocess.run([sys.executable, "-m", "snakemake", "-n", f"--configfile={tmp_path}/c.yaml"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode != 0
    assert "models.api.batchsize: unknown key 'batchsize' for backend 'random'; did you mean 'batch_size'?" \
        in bad.stdout + bad.stderr


def test_a_backend_key_given_twice_is_an_error():
    assert errors_of(q={**HF, "dtype": "float16", "params": {"dtype": "bfloat16"}}) == [
        "  models.q.params.dtype: given both at the top level and under params (keep one)"]


# --- the cascade's reasoner: another models entry, named, checked and copied into the cascade's entry ---------
LLM_CASCADE = {"backend": "cascade", "params": {"option_scoring": "llm", "reasoner": "llm"}}
TEXT_LLM = {**HF, "model_id": "Qwen/Qwen2.5-1.5B-Instruct", "family": "text", "scoring": "loglik",
            "conditions": ["no-audio"]}


@pytest.mark.parametrize("params, message", [
    ({"option_scoring": "llm", "reasoner": "lm"},
     "models.c.params.reasoner: unknown model 'lm'; did you mean 'llm'? (known: c, llm)"),
    ({"option_scoring": "llm"},
     "models.c.params.reasoner: option_scoring 'llm' needs a reasoner: the name of a models entry "
     "(e.g. a text LLM with scoring: loglik)"),
    ({"reasoner": "llm"},
     "models.c.params.reasoner: only used with option_scoring: llm (option_scoring is 'similarity')"),
    ({"option_scoring": "llm", "reasoner": "c"},
     "models.c.params.reasoner: 'c' is a cascade; the reasoner must answer from text (e.g. an hf text LLM)"),
    ({"option_scoring": "lm"}, "models.c.params.option_scoring: 'lm' is not one of ['similarity', 'llm']"),
])
def test_a_bad_reasoner_names_the_key(params, message):
    (line,) = errors_of(c={"backend": "cascade", "params": params}, llm=TEXT_LLM)
    assert line == f"  {message}"


def _validated(cascade: dict, reasoner: dict) -> dict:
    import copy

    return validate_config(_cfg(c=copy.deepcopy(cascade), llm=copy.deepcopy(reasoner)), SCHEMA, ROOT)


def _fingerprint(cascade: dict, reasoner: dict) -> str:
    from lalmbench.inference.fingerprint import model_fingerprint

    return model_fingerprint(_validated(cascade, reasoner)["models"]["c"])


def test_the_reasoner_entry_is_copied_into_the_cascade_and_changes_its_fingerprint():
    cfg = _validated(LLM_CASCADE, TEXT_LLM)
    copied = cfg["models"]["c"]["params"]["reasoner_cfg"]
    assert copied == {"backend": "hf", "model_id": "Qwen/Qwen2.5-1.5B-Instruct", "family": "text",
                      "scoring": "loglik", "seed": 0, "generation": {}}
    base = _fingerprint(LLM_CASCADE, TEXT_LLM)
    assert _fingerprint(LLM_CASCADE, {**TEXT_LLM, "loglik_norm": "sum"}) != base
    assert _fingerprint(LLM_CASCADE, {**TEXT_LLM, "model_id": "Qwen/Qwen2.5-0.5B-Instruct"}) != base
    # how the reasoner would run on its own never reaches the cascade's predictions
    assert _fingerprint(LLM_CASCADE, {**TEXT_LLM, "batch_size": 8, "resources": {"mem_mb": 9000}}) == base
    # validating again (each Snakemake job does) copies the same entry
    assert validate_config(cfg, SCHEMA, ROOT)["models"]["c"]["params"]["reasoner_cfg"] == copied


@pytest.mark.parametrize("entry, message", [
    ({"backend": "random", "generation": {"samples": 5}},
     "models.m.generation.samples: model 'm' (backend 'random') cannot sample: its output for an item is fixed, "
     "so 5 samples would be 5 copies of one answer"),
    ({**HF, "generation": {"samples": 4}},
     "models.m.generation.samples: model 'm' decodes greedily, so 4 samples would be 4 copies of one output; "
     "set generation.do_sample: true"),
    ({**HF, "scoring": "loglik", "generation": {"samples": 4, "do_sample": True}},
     "models.m.generation.samples: model 'm' scores options by log-likelihood"),
    ({"backend": "openai", "model_id": "x", "params": {"base_url": "http://127.0.0.1:1/v1"},
      "generation": {"samples": 3}},
     "models.m.generation.samples: model 'm' is sent temperature 0 (the default)"),
])
def test_samples_need_a_backend_and_a_decode_that_sample(entry, message):
    (line,) = errors_of(m=entry)
    assert line.strip().startswith(message)


def test_samples_with_a_sampling_decode_are_valid_and_one_sample_is_anywhere():
    validate_config(_cfg(m={**HF, "generation": {"samples": 5, "do_sample": True, "temperature": 0.7}},
                         o={"backend": "openai", "model_id": "x", "params": {"base_url": "http://127.0.0.1:1/v1"},
                            "generation": {"samples": 2, "temperature": 0.6}},
                         g={**HF, "generation": {"samples": 1}}), SCHEMA, ROOT)

"""What a ``models.<name>`` entry may hold, checked against config/schema.yaml before any job runs.

The schema keeps one block per backend (``$defs/backends/<backend>``: its keys, their types and
the ``generation`` keys it reads) next to the keys every backend shares. jsonschema alone would
reject a typo as "Unevaluated properties are not allowed"; this module finds the same keys and
says which backend they were checked for, what is allowed and which allowed key is closest, e.g.
``models.qwen.batchsize: unknown key 'batchsize' for backend 'hf'; did you mean 'batch_size'? (allowed: ...)``.
Keys nothing would honour get the reason instead (``shard_size``).
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable

#: keys once documented or guessed that nothing reads: rejected with the reason, not just "unknown"
IGNORED_KEYS: dict[str, str] = {
    "shard_size": "models are not sharded (each model's items are served by one generate job that loads the model "
                  "once, and a job cut off by its runtime resumes from the prediction cache); remove it, and raise "
                  "resources.runtime for long runs",
}


def _pointer(root: dict, ref: str) -> dict:
    if not ref.startswith("#/"):
        raise ValueError(f"schema: only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _parts(node: dict, root: dict) -> Iterable[dict]:
    """The node and every subschema that always applies with it ($ref, allOf), resolved."""
    yield node
    if "$ref" in node:
        yield from _parts(_pointer(root, node["$ref"]), root)
    for sub in node.get("allOf", []):
        if "if" not in sub:
            yield from _parts(sub, root)


def _allowed(nodes: list[dict], root: dict) -> tuple[dict[str, list[dict]], bool]:
    """(key -> its subschemas, whether the mapping is closed) over every node that applies to it."""
    props: dict[str, list[dict]] = {}
    closed = False
    for node in nodes:
        for part in _parts(node, root):
            for key, sub in part.get("properties", {}).items():
                props.setdefault(key, []).append(sub)
            closed |= part.get("additionalProperties") is False or part.get("unevaluatedProperties") is False
    return props, closed


def _unknown(value: dict, nodes: list[dict], root: dict, path: str, backend: str) -> list[str]:
    props, closed = _allowed(nodes, root)
    problems = []
    for key in value:
        if key in props or not closed:
            continue
        if key in IGNORED_KEYS:
            problems.append(f"{path}.{key}: not a model setting: {IGNORED_KEYS[key]}")
            continue
        allowed = sorted(props)
        close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        problems.append(f"{path}.{key}: unknown key {key!r} for backend {backend!r}{hint} "
                        + (f"(allowed: {', '.join(allowed)})" if allowed else "(this backend takes none here)"))
    for key, sub in value.items():
        if key in props and isinstance(sub, dict):
            problems += _unknown(sub, props[key], root, f"{path}.{key}", backend)
    return problems


def backends(schema: dict) -> list[str]:
    """Backends the schema has a block for (the ones a config may name)."""
    return sorted(schema["$defs"]["backends"])


def check_model_entries(models: dict, schema: dict) -> list[str]:
    """One message per unknown backend or key in ``models`` (the config's mapping), in entry order."""
    entry_schema = schema["properties"]["models"]["additionalProperties"]
    known = backends(schema)
    problems = []
    for name, entry in models.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("backend"), str):
            continue  # the schema's own type/required errors say it
        backend = entry["backend"]
        if backend not in known:
            close = difflib.get_close_matches(backend, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"models.{name}.backend: unknown backend {backend!r}{hint} (known: {', '.join(known)})")
            continue
        block = schema["$defs"]["backends"][backend]
        problems += _unknown(entry, [entry_schema, block], schema, f"models.{name}", backend)
    return problems


def backend_keys(entry: dict) -> dict:
    """hf/vllm entries may give backend keys at the top or under ``params:``; this merges both views."""
    params = entry.get("params")
    return {**entry, **params} if isinstance(params, dict) else dict(entry)


def check_families(models: dict) -> list[str]:
    """hf/vllm entries: ``family`` names a family adapter (vllm: one wired for vLLM, and required), and
    no backend key is given both at the top and under ``params:`` (which one would win is not obvious)."""
    from lalmbench.models.hf.families import ALIASES, FAMILIES, get_family
    from lalmbench.models.vllm_backend import VLLM_FAMILIES

    problems = []
    for name, entry in models.items():
        backend = entry.get("backend")
        if backend not in ("hf", "vllm"):
            continue
        params = entry.get("params") if isinstance(entry.get("params"), dict) else {}
        for key in sorted(set(params) & set(entry)):
            problems.append(f"models.{name}.params.{key}: given both at the top level and under params (keep one)")
        fam = backend_keys(entry).get("family")
        if fam is None:
            if backend == "vllm":
                problems.append(f"models.{name}.family: backend 'vllm' needs a family "
                                f"(one of {', '.join(VLLM_FAMILIES)})")
            continue
        names = sorted(FAMILIES) if backend == "hf" else list(VLLM_FAMILIES)
        try:
            ok = get_family(str(fam)).name in names
        except ValueError:
            ok = False
        if not ok:
            close = difflib.get_close_matches(str(fam).lower(), names + sorted(ALIASES), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            problems.append(f"models.{name}.family: unknown family {fam!r} for backend {backend!r}{hint} "
                            f"(known: {', '.join(names)})")
    return problems


def family_warnings(models: dict) -> list[str]:
    """Settings that are valid but change nothing for the entry's family (AF3's template places the audio
    itself, so ``audio_position`` is ignored): said at config time, since a comparison built on them
    silently compares nothing."""
    from lalmbench.models.hf.families import get_family
    from lalmbench.models.hf.presets import audio_position_note

    notes = []
    for name, entry in models.items():
        if entry.get("backend") not in ("hf", "vllm"):
            continue
        keys = backend_keys(entry)
        try:
            fam = get_family(str(keys["family"])) if keys.get("family") else None
        except ValueError:
            continue  # check_families reports it
        note = audio_position_note(fam, keys.get("audio_position")) if fam else None
        if note:
            notes.append(f"models.{name}.audio_position: {note}")
    return notes


def _reasoner_problem(name: str, params: dict, models: dict) -> str | None:
    key = f"models.{name}.params.reasoner"
    reasoner, scoring = params.get("reasoner"), params.get("option_scoring", "similarity")
    if scoring != "llm":
        return f"{key}: only used with option_scoring: llm (option_scoring is {scoring!r})" if reasoner else None
    if not reasoner:
        return (f"{key}: option_scoring 'llm' needs a reasoner: the name of a models entry "
                f"(e.g. a text LLM with scoring: loglik)")
    if reasoner not in models:
        close = difflib.get_close_matches(str(reasoner), sorted(models), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{key}: unknown model {reasoner!r}{hint} (known: {', '.join(sorted(models))})"
    if models[reasoner].get("backend") == "cascade":
        return f"{key}: {reasoner!r} is a cascade; the reasoner must answer from text (e.g. an hf text LLM)"
    return None


def check_reasoners(models: dict) -> list[str]:
    """Cascade entries: ``params.reasoner`` names an existing, non-cascade models entry exactly when
    ``params.option_scoring`` is ``llm``."""
    problems = []
    for name, entry in models.items():
        params = entry.get("params")
        if entry.get("backend") == "cascade" and isinstance(params, dict):
            problem = _reasoner_problem(name, params, models)
            if problem:
                problems.append(problem)
    return problems


def resolve_reasoners(models: dict) -> None:
    """Copy each cascade's reasoner entry into its ``params.reasoner_cfg`` (in place, after check_reasoners):
    the generate job builds the reasoner from it, and the cascade's fingerprint changes when it does. Keys
    that say how the reasoner would run on its own (resources, batch size, env...) are left out: inside the
    cascade's job they are not used."""
    from lalmbench.inference.fingerprint import PROVISIONING_KEYS

    for entry in models.values():
        params = entry.get("params")
        if entry.get("backend") != "cascade" or not isinstance(params, dict):
            continue
        params.pop("reasoner_cfg", None)
        if params.get("option_scoring") == "llm" and params.get("reasoner") in models:
            src = models[params["reasoner"]]
            params["reasoner_cfg"] = {k: v for k, v in src.items() if k not in PROVISIONING_KEYS | {"env"}}

"""``from_pretrained`` with errors that tell a user on an offline node what to download and where.

A hub id that is not in the local cache is refused at once when the Hub cannot be reached or offline
mode is set: huggingface_hub would otherwise spend ~25 s in retries (minutes on a network that hangs:
its retries after a failed lookup each time out after 60 s) before failing the same way.

Also refuses a checkpoint that loaded with missing weights: transformers would otherwise initialise
them at random and the benchmark would score noise under a real model's name.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

# How long the Hub may take to answer before a model that is not cached counts as undownloadable.
PROBE_TIMEOUT_S = 3.0


class ModelLoadError(RuntimeError):
    """A checkpoint or processor could not be loaded; the message says how to get it."""


def hf_home() -> str:
    return os.environ.get("HF_HOME") or str(Path.home() / ".cache" / "huggingface")


def hub_cache_dir() -> str:
    """The hub cache from_pretrained reads, from the environment now (huggingface_hub reads it at import)."""
    return os.path.expanduser(os.environ.get("HF_HUB_CACHE") or os.path.join(hf_home(), "hub"))


def offline_mode() -> bool:
    """HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE as set now: huggingface_hub only reads them at import."""
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return constants.HF_HUB_OFFLINE or value.strip().lower() in ("1", "on", "yes", "true")


def is_cached(model_id: str, revision: str | None) -> bool:
    """Whether a snapshot of model_id at revision (default: main) is in the local hub cache, without network."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        snapshot_download(model_id, revision=revision, cache_dir=hub_cache_dir(), local_files_only=True)
    except LocalEntryNotFoundError:  # also IncompleteSnapshotError
        return False
    return True


def hub_endpoint() -> str:
    """The Hub (or mirror) from_pretrained would ask: HF_ENDPOINT as set now, else huggingface_hub's."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether the Hub answers at all within timeout (any HTTP status counts).

    Runs in a thread joined with a deadline because name resolution ignores socket timeouts.
    """
    from huggingface_hub.utils import get_session

    answered: list[bool] = []

    def probe() -> None:
        try:
            get_session().head(hub_endpoint(), timeout=timeout)
            answered.append(True)
        except Exception:  # noqa: BLE001 - offline mode, DNS, refused, TLS, timeout: all mean "not now"
            pass

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    return bool(answered)


def require_downloadable(what: str, model_id: str, revision: str | None) -> None:
    """Fail at once for a hub id that is neither cached nor downloadable now, instead of after retries."""
    try:
        if is_cached(model_id, revision):
            return
    except ValueError:  # not a valid hub id (HFValidationError): from_pretrained's own error says why
        return
    if offline_mode():
        why = "HF_HUB_OFFLINE is set"
    elif not hub_reachable():
        why = f"the Hub ({hub_endpoint()}) cannot be reached (no answer within {PROBE_TIMEOUT_S:g} s)"
    else:
        return
    raise ModelLoadError(f"{what}: {model_id!r}" + (f" at revision {revision!r}" if revision else "")
                         + f" is not in the local hub cache ({hub_cache_dir()}) and {why}. "
                         + download_hint(model_id, revision))


def download_hint(model_id: str, revision: str | None) -> str:
    rev = f" --revision {revision}" if revision else ""
    return (f"Download it on a machine with network access: `hf download {model_id}{rev}` "
            f"(it lands in the hub cache under HF_HOME, here {hf_home()}; copy that cache to this machine and set "
            f"HF_HOME, plus HF_HUB_OFFLINE=1 on nodes without network), or set model_id to a local directory "
            f"holding the checkpoint (config.json, weights, tokenizer and processor files).")


def _is_local(model_id: str) -> bool:
    return os.path.isdir(model_id) or model_id.startswith(("/", "./", "../"))


def call_from_pretrained(what: str, fn: Callable[..., Any], model_id: str, revision: str | None,
                         **kwargs: Any) -> Any:
    """Call ``fn(model_id, revision=..., **kwargs)``; turn not-found / offline errors into ModelLoadError."""
    if _is_local(model_id) and not os.path.isdir(model_id):
        raise ModelLoadError(f"{what}: local checkpoint directory {model_id!r} does not exist. "
                             + download_hint("<hub id>", revision))
    try:
        if not _is_local(model_id):
            require_downloadable(what, model_id, revision)
        return fn(model_id, revision=revision, **kwargs)
    except (OSError, ValueError) as e:  # hub errors (offline, not found, gated) subclass OSError/ValueError
        text = str(e)
        missing = isinstance(e, OSError) or any(s in text for s in (
            "does not appear to have", "Can't load", "not a valid model identifier", "couldn't connect",
            "offline", "gated", "Repository Not Found", "LocalEntryNotFound"))
        if not missing:
            raise
        raise ModelLoadError(f"{what}: could not load {model_id!r}"
                             + (f" at revision {revision!r}" if revision else "")
                             + f" ({type(e).__name__}: {text.splitlines()[0] if text else ''}). "
                             + download_hint(model_id, revision)) from e


def check_loading_info(what: str, model_id: str, info: dict) -> None:
    """Fail if weights the model needs were absent from the checkpoint (they would be random)."""
    missing = [k for k in info.get("missing_keys", []) if k]
    if missing:
        shown = ", ".join(sorted(missing)[:8]) + (" ..." if len(missing) > 8 else "")
        raise ModelLoadError(f"{what}: checkpoint {model_id!r} lacks {len(missing)} weight(s) the model needs "
                             f"({shown}); they would be randomly initialised. Check the family/model class "
                             f"matches the checkpoint.")

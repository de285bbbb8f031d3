"""API keys: read only from the environment, checked, and scrubbed from every text a backend returns.

A key reaches text we write in many disguises: servers echo it in error bodies ("Incorrect API
key provided: sk-..."), HTTP libraries quote the header in exceptions (``Illegal header value
b'Bearer sk-...\\r'``), and proxies log it base64- or URL-encoded. :class:`Redactor` knows those
printed forms and also removes any fragment of the key of :data:`MIN_FRAGMENT` characters or more,
so an excerpt cut through the middle of a key (or a server that echoes half of it) leaks nothing.
Matching ignores letter case (a server that upper-cases what it echoes) and sees through JSON
``\\uXXXX`` escapes (a JSON error body that escapes every character of the key).
Redact before cutting: :meth:`Redactor.excerpt` does both in that order.

Keys never live in the config: :func:`config_secret_problems` rejects secret-looking keys and
URLs with credentials in model entries, whose JSON is printed in job commands and logs.
"""
from __future__ import annotations

import base64
import json
import os
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit

MASK = "***"
MIN_FRAGMENT = 8  # shorter runs of key characters occur by chance ("sk-", "proj") and say little

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# entry keys that would hold a secret; api_key_env (the variable's *name*) is the allowed way
_SECRET_KEY = re.compile(r"(^|_)(api_?key|key|token|secret|password|passwd|authorization|bearer|credentials?)($|_)")
_SECRET_QUERY = re.compile(r"key|token|secret|password|sig", re.I)


def read_key(env_var: str, where: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key in ``$env_var`` without surrounding whitespace, or None when unset or blank.

    A trailing ``\\r``/``\\n`` (a key saved from a Windows editor or ``echo``) is stripped; anything
    else that is not printable ASCII, or whitespace inside the key, is an error naming ``where``
    and the variable. The key itself is never in the message.
    """
    raw = (os.environ if environ is None else environ).get(env_var)
    key = (raw or "").strip()
    if not key:
        return None
    for ch in key:
        if ch.isspace():
            problem = f"whitespace inside the key ({_char(ch)}; did it get 'Bearer ' or a second line?)"
        elif not (ch.isascii() and ch.isprintable()):
            problem = f"a character that is not printable ASCII ({_char(ch)}; pasted from a masked or formatted text?)"
        else:
            continue
        raise ValueError(f"{where}: environment variable {env_var} holds {problem}; "
                         f"set it to the key alone, e.g. export {env_var}=sk-...")
    return key


def _char(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'control character')}"


def _b64(data: bytes) -> list[str]:
    std = base64.b64encode(data).decode("ascii")
    return [std, std.rstrip("="), base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")]


def _key_only_forms(key: str) -> set[str]:
    """Spellings made of the key's characters alone (so any long run of them is key material)."""
    raw = key.encode("utf-8")
    forms = {key, repr(key)[1:-1], repr(raw)[2:-1], json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1],
             quote(key, safe=""), quote_plus(key), raw.hex(), raw.hex().upper()}
    # base64 of the key inside a longer encoded blob: the characters that depend on key bytes alone,
    # for each of the three alignments the key can have there
    for shift in range(3):
        whole = raw[shift:]
        whole = whole[: len(whole) - len(whole) % 3]
        forms.update(_b64(whole))
    return {f for f in forms if f}


def printed_forms(key: str) -> list[str]:
    """Every common spelling of ``key`` in text, longest first: raw, Python ``repr`` and ``bytes``
    repr escapes, JSON escapes, URL encoding, hex, and base64 of the key, of ``Bearer <key>`` and of
    the Basic-auth pairs ``:<key>`` / ``<key>:`` (whole, and as it reads at any alignment)."""
    raw = key.encode("utf-8")
    forms = _key_only_forms(key)
    for data in (raw, b"Bearer " + raw, b":" + raw, raw + b":"):
        forms.update(_b64(data))
    return sorted(forms, key=len, reverse=True)


#: a JSON escape of a printable ASCII character: the only characters a key can hold (read_key)
_JSON_ESCAPE = re.compile(r"\\u00([2-7][0-9a-fA-F])")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _folded(text: str) -> str:
    """``text`` in lower case with every character where it was (positions found in it hold in ``text``)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


def _mask(text: str, needles: list[str]) -> str:
    """``text`` with every occurrence of a needle, in any letter case, replaced by :data:`MASK` (runs
    that overlap or touch become one mask). ``needles`` are lower case. Each needle is found by
    ``str.find`` (C speed): the Python loops run per needle and per match, never per character."""
    if not needles:
        return text
    folded = _folded(text)
    spans = []
    for needle in needles:
        i = folded.find(needle)
        while i >= 0:
            spans.append((i, i + len(needle)))
            i = folded.find(needle, i + 1)
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces, at = [], 0
    for start, end in merged:
        pieces += [text[at:start], MASK]
        at = end
    return "".join(pieces) + text[at:]


class Redactor:
    """Replaces every printed form of the given secrets, and every fragment of them of
    ``MIN_FRAGMENT``+ characters, with ``***``. Idempotent; a no-op without secrets."""

    def __init__(self, secrets: Iterable[str | None]):
        keys = [s for s in secrets if s]
        self._forms = sorted({f.lower() for k in keys for f in printed_forms(k)}, key=len, reverse=True)
        grams = {f[i:i + MIN_FRAGMENT].lower() for k in keys for f in _key_only_forms(k)
                 for i in range(len(f) - MIN_FRAGMENT + 1)}
        self._grams = sorted(grams)

    def __bool__(self) -> bool:
        return bool(self._forms)

    def __repr__(self) -> str:  # the forms are the secret: never show them
        return f"Redactor({len(self._forms)} forms)"

    def __call__(self, text: str) -> str:
        """``text`` with every form and fragment of a key masked, in any letter case; where the key
        hides behind JSON ``\\uXXXX`` escapes (a server quoting it in a JSON error body), the decoded
        text, masked."""
        if not self._forms or not text:
            return text
        out = self._masked(text)
        if "\\u" in out:
            decoded = _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), out)
            hidden = self._masked(decoded)
            if hidden != decoded:
                return hidden
        return out

    def _masked(self, text: str) -> str:
        # forms first (a whole base64 or URL-encoded key), then the fragments left in what remains
        return _mask(_mask(text, self._forms), self._grams)

    def excerpt(self, text: str, limit: int) -> str:
        """At most ``limit`` characters of ``text``, redacted *before* the cut so no part of a key
        that straddles the cut survives."""
        # only the head can reach the excerpt: a printed form starting before the cut ends before
        # limit + the longest form, so a large body is never redacted whole
        head = text[: limit + 2 * max((len(f) for f in self._forms), default=0)]
        return self(head)[:limit]

    def scrub(self, obj: Any) -> Any:
        """``obj`` with every string inside it (dict values and keys, list items) redacted."""
        if isinstance(obj, str):
            return self(obj)
        if isinstance(obj, dict):
            return {self.scrub(k): self.scrub(v) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return type(obj)(self.scrub(v) for v in obj)
        return obj


def config_secret_problems(models: Mapping[str, Any]) -> list[str]:
    """``<config key>: <problem>`` for every place a model entry could carry a secret.

    Entries travel as JSON on job command lines and into logs, so a key there would be printed;
    messages name the key path only, never the value.
    """
    problems = []
    for name, entry in (models or {}).items():
        if not isinstance(entry, dict):
            continue
        params = entry.get("params") if isinstance(entry.get("params"), dict) else {}
        generation = entry.get("generation") if isinstance(entry.get("generation"), dict) else {}
        for prefix, block in ((f"models.{name}", entry), (f"models.{name}.params", params),
                              (f"models.{name}.generation", generation)):
            for k in block:
                if k != "api_key_env" and _SECRET_KEY.search(str(k).lower()):
                    problems.append(f"{prefix}.{k}: secrets are read only from the environment; export the key "
                                    "in a variable and set params.api_key_env to that variable's name (a value "
                                    "here would be printed in job commands and logs)")
        for prefix, block in ((f"models.{name}", entry), (f"models.{name}.params", params)):
            env = block.get("api_key_env")
            if env is not None and not (isinstance(env, str) and _ENV_NAME.match(env)):
                problems.append(f"{prefix}.api_key_env: must be the name of an environment variable (letters, "
                                "digits and _, e.g. OPENAI_API_KEY), not the key itself")
            url = block.get("base_url")
            if isinstance(url, str):
                parts = urlsplit(url)
                if parts.username or parts.password:
                    problems.append(f"{prefix}.base_url: holds user:password credentials; put the key in the "
                                    "environment variable named by params.api_key_env")
                if any(_SECRET_QUERY.search(q) for q, _ in parse_qsl(parts.query, keep_blank_values=True)):
                    problems.append(f"{prefix}.base_url: has a secret-looking query parameter; put the key in "
                                    "the environment variable named by params.api_key_env")
    return problems

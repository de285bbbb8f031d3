"""API keys: read from the environment, checked, and scrubbed in every printed form and fragment."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml

from lalmbench.workflow.config import ConfigError, validate_config
from lalmbench.models.secrets import MIN_FRAGMENT, Redactor, config_secret_problems, read_key
from tests.leaks import leaks as find_leaks

ROOT = Path(__file__).resolve().parents[2]
# '/', '+', '=' and '~' make the URL-encoded and base64 forms differ from the raw key
KEY = "sk-test/PLANTED+7f3a=9c1e_5b2d~4a6f8e0cZ"
WHERE = "models.api.params.api_key_env"


def leaks(text: str, key: str = KEY) -> list[str]:
    return find_leaks(text, key)


# ------------------------------------------------------------------------------------------ read_key
@pytest.mark.parametrize("value", [KEY + "\r\n", KEY + "\n", KEY + "\r", f"  {KEY}\t", KEY])
def test_read_key_strips_surrounding_whitespace(value):
    assert read_key("K", WHERE, {"K": value}) == KEY


@pytest.mark.parametrize("env", [{}, {"K": ""}, {"K": " \r\n"}])
def test_read_key_unset_or_blank_is_none(env):
    assert read_key("K", WHERE, env) is None


@pytest.mark.parametrize("value, problem", [
    (KEY[:10] + "\r" + KEY[10:], "holds whitespace inside the key (U+000D control character; did it get 'Bearer '"),
    ("Bearer " + KEY, "holds whitespace inside the key (U+0020 SPACE; did it get 'Bearer ' or a second line?)"),
    (KEY[:20] + "\x00" + KEY[20:], "holds a character that is not printable ASCII (U+0000 control character;"),
    ("sk-proj-abc\u2026wxyz1234", "holds a character that is not printable ASCII (U+2026 HORIZONTAL ELLIPSIS;"),
])
def test_read_key_rejects_a_bad_key_naming_the_variable_never_the_key(value, problem):
    with pytest.raises(ValueError) as exc:
        read_key("LALM_KEY", WHERE, {"LALM_KEY": value})
    msg = str(exc.value)
    assert msg.startswith(f"{WHERE}: environment variable LALM_KEY {problem}")
    assert msg.endswith("set it to the key alone, e.g. export LALM_KEY=sk-...")
    assert leaks(msg, value.replace("\r", "").replace("\x00", "")) == [] and "sk-proj-abc" not in msg


# ------------------------------------------------------------------------------------------ Redactor
PRINTED = {
    "raw": KEY,
    "repr of the env value": repr(KEY + "\r\n"),
    "httpx header error": f"LocalProtocolError: Illegal header value {('Bearer ' + KEY + chr(13)).encode()!r}",
    "json": json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}),
    "url-encoded": "GET /v1?key=" + quote(KEY, safe=""),
    "base64 of the key": base64.b64encode(KEY.encode()).decode(),
    "base64 of Bearer key": base64.b64encode(f"Bearer {KEY}".encode()).decode(),
    "urlsafe base64": base64.urlsafe_b64encode(KEY.encode()).decode(),
    "basic auth": "Authorization: Basic " + base64.b64encode(f":{KEY}".encode()).decode(),
    "base64 of a header dump": base64.b64encode(f"Host: x\r\nAuthorization: Bearer {KEY}\r\n".encode()).decode(),
    "hex": KEY.encode().hex(),
}


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_every_printed_form_is_redacted(name):
    text = f"before {PRINTED[name]} after"
    out = Redactor([KEY, KEY + "\r\n"])(text)
    assert leaks(out) == [], out
    assert out.startswith("before ") and out.endswith(" after") and "***" in out


def test_base64_at_every_alignment_in_a_longer_blob():
    r = Redactor([KEY])
    for pad in range(12):
        blob = base64.b64encode(b"x" * pad + f"Bearer {KEY}".encode() + b"y" * 5).decode()
        assert leaks(r(blob)) == [], pad


def test_every_fragment_of_eight_or_more_characters_is_redacted_and_shorter_ones_are_kept():
    r = Redactor([KEY])
    for start in range(len(KEY)):
        for end in range(start + MIN_FRAGMENT, len(KEY) + 1):
            assert r(f"<{KEY[start:end]}>") == "<***>", (start, end)
    assert r(f"<{KEY[3:3 + MIN_FRAGMENT - 1]}>") == f"<{KEY[3:10]}>"


@pytest.mark.parametrize("limit", [1, 50, 300])
def test_excerpt_redacts_before_cutting_for_a_key_at_every_offset(limit):
    r = Redactor([KEY])
    for offset in range(limit + len(KEY) + 2):  # the key before, across and after the cut
        body = "a" * offset + KEY + "b" * limit
        out = r.excerpt(body, limit)
        assert out == ("a" * offset + "***" + "b" * limit)[:limit], offset
        assert leaks(out) == []


def test_a_fragment_cut_by_the_server_is_redacted_at_either_edge():
    r = Redactor([KEY])
    for n in range(MIN_FRAGMENT, len(KEY)):
        assert r("x" * 290 + KEY[:n]) == "x" * 290 + "***"  # prefix left at the server's own cut
        assert r(KEY[-n:] + "y" * 10) == "***" + "y" * 10  # suffix starting a page


def _unescaped(text: str) -> str:
    """What a reader of ``text`` recovers by decoding its JSON escapes (json.loads of the string)."""
    return json.loads('"' + text.replace('"', '\\"') + '"')


@pytest.mark.parametrize("escape", [lambda c: f"\\u{ord(c):04x}", lambda c: f"\\u{ord(c):04X}",
                                    lambda c: f"\\u{ord(c):04x}" if c.isalpha() else c])
def test_a_key_behind_json_escapes_is_redacted_in_the_decoded_text(escape):
    body = '{"error": {"message": "Incorrect API key provided: ' + "".join(map(escape, KEY)) + '"}}'
    out = Redactor([KEY])(body)
    assert leaks(_unescaped(out)) == [] and leaks(out) == []
    assert out == '{"error": {"message": "Incorrect API key provided: ***"}}'


def test_json_escapes_without_a_key_behind_them_are_kept():
    text = 'a model wrote \\u0041\\u0042 and \\u00e9'
    assert Redactor([KEY])(text) == text


@pytest.mark.parametrize("case", [str.upper, str.lower, str.swapcase])
def test_a_key_in_another_letter_case_is_redacted(case):
    r = Redactor([KEY])
    assert r(f"model {case(KEY)} end") == "model *** end"
    assert r(f"cut {case(KEY)[:MIN_FRAGMENT + 1]}") == "cut ***"
    assert leaks(r(f"x {case(KEY)}").lower(), KEY.lower()) == []


def test_scrub_and_repr_and_no_secret():
    r = Redactor([KEY])
    assert r.scrub({"served_model": KEY, "n": 3, "list": [f"a {KEY}"], KEY: None}) == {
        "served_model": "***", "n": 3, "list": ["a ***"], "***": None}
    assert KEY not in repr(r) and leaks(repr(r)) == []
    none = Redactor([None, ""])
    assert not none and none(f"text {KEY}") == f"text {KEY}"


# ------------------------------------------------------------------------------ secrets in the config
def _entry(**params):
    return {"backend": "openai", "model_id": "m", "params": {"base_url": "http://127.0.0.1:8000/v1", **params}}


@pytest.mark.parametrize("models, problem", [
    ({"api": _entry(api_key=KEY)}, "models.api.params.api_key: secrets are read only from the environment; export"),
    ({"api": {**_entry(), "token": KEY}}, "models.api.token: secrets are read only from the environment"),
    ({"api": {**_entry(), "generation": {"api_key": KEY}}}, "models.api.generation.api_key: secrets are read only"),
    ({"api": _entry(authorization=f"Bearer {KEY}")}, "models.api.params.authorization: secrets are read only"),
    ({"api": _entry(api_key_env=KEY)}, "models.api.params.api_key_env: must be the name of an environment variable "
                                       "(letters, digits and _, e.g. OPENAI_API_KEY), not the key itself"),
    ({"api": _entry(base_url=f"https://user:{quote(KEY, safe='')}@api.example/v1")},
     "models.api.params.base_url: holds user:password credentials"),
    ({"api": _entry(base_url=f"https://api.example/v1?api-version=1&api_key={KEY}")},
     "models.api.params.base_url: has a secret-looking query parameter"),
])
def test_config_with_a_secret_is_rejected_without_printing_it(models, problem):
    found = config_secret_problems(models)
    assert len(found) == 1 and found[0].startswith(problem)
    assert leaks(found[0]) == []


def test_config_secret_check_keeps_ordinary_keys():
    cfgs = [yaml.safe_load((ROOT / p).read_text()) for p in ("config/config.yaml", "config/examples/cluster.yaml")]
    assert [config_secret_problems(c.get("models", {})) for c in cfgs] == [[], []]
    ok = {"api": _entry(api_key_env="MY_KEY", max_concurrency=2, base_url="https://h/v1?api-version=2024-06-01"),
          "hf": {"backend": "hf", "model_id": "x", "tokenizer_mode": "auto",
                 "generation": {"max_new_tokens": 8, "thinker_max_new_tokens": 8}}}
    assert config_secret_problems(ok) == []


def test_validate_config_rejects_a_key_before_the_schema_can_quote_it():
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    cfg["models"]["api"] = {**_entry(api_key=KEY), "batch_size": "not a number"}
    with pytest.raises(ConfigError) as exc:
        validate_config(cfg, ROOT / "config" / "schema.yaml", ROOT, source="config/config.yaml")
    assert "models.api.params.api_key: secrets are read only from the environment" in str(exc.value)
    assert leaks(str(exc.value)) == []

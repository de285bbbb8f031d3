"""The published-numbers ledger: what papers and leaderboards report for a benchmark, and where
outputs of the same systems were released, so both can be set beside this project's scores.

A ledger is data, one YAML file per benchmark under ``lalmbench/data/published/`` (schema:
``ledger_schema.yaml`` beside this module; docs/published.md). ``published`` entries are numbers
as a source printed them, with the settings the source states; ``released`` entries say where a
system's raw outputs lie (repository, commit, path, sha256) and how to read one output per item
from them. :func:`fetch_released` turns each released entry into ``<out>/<benchmark>/<id>.jsonl``
(``id``, ``raw_output`` and, when the file carries them, the ``question``/``choices``/``answer``
the outputs were made on), which a ``backend: imported`` model entry then scores like any run.

:func:`fetch_items` copies the item file(s) each ledger pins into ``<out>/items/<benchmark>/<path>``
(a folder: the files its preset's ``pattern`` names, never its audio), the paths
config/examples/published.yaml reads.

Usage: ``python -m lalmbench.data.ledger check`` validates every ledger;
``python -m lalmbench.data.ledger fetch --out published`` downloads and normalises the released
outputs and the item files (``--git-dir-template``, or ``LALMBENCH_GIT_DIR_TEMPLATE``, reads them
from local clones or bare mirrors instead of GitHub).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from lalmbench.core import io
from lalmbench.core.io import InputError

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
LEDGER_DIR = HERE / "published"
SCHEMA_PATH = HERE / "ledger_schema.yaml"
#: raw file of a repository at a commit
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
#: every file of a repository at a commit (GitHub's trees API), to find the item files in a folder
TREE_URL = "https://api.github.com/repos/{repo}/git/trees/{commit}?recursive=1"
#: the environment variable ``fetch --git-dir-template`` defaults to
GIT_DIR_ENV = "LALMBENCH_GIT_DIR_TEMPLATE"
#: fields a normalised record may carry from the released file, for the revision check
CARRIED = ("question", "choices", "answer")


def _schema() -> dict:
    return yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_ledger(ledger: Any, where: str) -> dict:
    """``ledger`` checked against the schema and for consistency (unique entry ids, every
    ``compare_with`` names a published entry); an error names the file and the entry."""
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(_schema()).iter_errors(ledger), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        at = "/".join(str(p) for p in e.absolute_path) or "(top)"
        raise InputError(f"{where}: {at}: {e.message}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    ids: dict[str, str] = {}
    for kind in ("published", "released"):
        for n, entry in enumerate(ledger.get(kind) or []):
            if entry["id"] in ids:
                raise InputError(f"{where}: {kind}/{n}: id {entry['id']!r} also names a {ids[entry['id']]} entry")
            ids[entry["id"]] = kind
    for where_at, src in _sources(ledger):
        parts = str(src.get("path", "")).split("/")
        if ".." in parts or str(src.get("path", "")).startswith(("/", "~")) or "\\" in str(src.get("path", "")):
            raise InputError(f"{where}: {where_at}: path {src['path']!r} leaves its repository (a '..' part, or "
                             f"absolute): give the file's path inside {src.get('repo')}")
    published = {e["id"] for e in ledger.get("published") or []}
    keys: dict[str, str] = {}
    for n, entry in enumerate(ledger.get("released") or []):
        target = entry.get("compare_with")
        if target is not None and target not in published:
            raise InputError(f"{where}: released/{n} ({entry['id']}): compare_with {target!r} is no published entry "
                             f"of this ledger")
    for n, entry in enumerate((ledger.get("published") or []) + (ledger.get("released") or [])):
        key = entry.get("model_key")
        if key is not None:
            if key in keys:
                raise InputError(f"{where}: entry {entry['id']!r}: model_key {key!r} also names {keys[key]!r}")
            keys[key] = entry["id"]
    return ledger


def _sources(ledger: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    """(where in the ledger, source) for every repository file a fetch reads: the items, each released
    entry's outputs and join sources."""
    if isinstance(ledger.get("items"), Mapping):
        yield "items", ledger["items"]
    for n, entry in enumerate(ledger.get("released") or []):
        for k, src in enumerate(entry.get("outputs") or []):
            yield f"released/{n}/outputs/{k}", src
        for k, src in enumerate(((entry.get("read") or {}).get("join") or {}).get("sources") or []):
            yield f"released/{n}/read/join/sources/{k}", src


def load_ledger(path: str | Path) -> dict:
    """One ledger file, validated."""
    path = Path(path)
    try:
        ledger = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return validate_ledger(ledger, str(path))


def ledger_files(directory: str | Path = LEDGER_DIR) -> dict[str, Path]:
    """benchmark name (the file's stem) -> ledger file."""
    return {p.stem: p for p in sorted(Path(directory).glob("*.yaml"))}


def load_all(directory: str | Path = LEDGER_DIR) -> dict[str, dict]:
    """benchmark name -> validated ledger, for every file in ``directory``."""
    return {name: load_ledger(p) for name, p in ledger_files(directory).items()}


# --- reading released outputs -----------------------------------------------------------------------

_STEP = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field(record: Mapping[str, Any], path: str) -> Any:
    """The value at ``path`` in a record: dotted keys and list indexes (``raw_model_outputs[0]``,
    ``join.audio_path``); None where a step is missing."""
    value: Any = record
    for key, index in _STEP.findall(path):
        if index:
            if not isinstance(value, list) or int(index) >= len(value):
                return None
            value = value[int(index)]
        else:
            if not isinstance(value, Mapping) or key not in value:
                return None
            value = value[key]
    return value


_SLOT = re.compile(r"\{([^{}]+)\}")


def fill(template: str, record: Mapping[str, Any]) -> str | None:
    """``template`` with each ``{path}`` replaced by that field of ``record`` (None when one is missing)."""
    missing = []

    def sub(m: re.Match) -> str:
        v = field(record, m.group(1))
        if v is None:
            missing.append(m.group(1))
            return ""
        return str(v)

    out = _SLOT.sub(sub, template)
    return None if missing else out


def load_records(data: bytes, name: str) -> list[dict]:
    """The records of a released file: a JSON list, a JSON object of records, or JSON lines; a file
    that is none of them is an error naming it (and the line)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    stripped = text.lstrip()
    try:
        if stripped.startswith("["):
            recs = json.loads(text)
        elif stripped.startswith("{") and not name.endswith(".jsonl"):
            obj = json.loads(text)
            recs = list(obj.values()) if all(isinstance(v, dict) for v in obj.values()) else [obj]
        else:
            recs = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{name}: line {n}: not JSON ({exc.msg})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: line {exc.lineno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{name}: values nested too deep to read") from None
    if not all(isinstance(r, dict) for r in recs):
        raise InputError(f"{name}: expected records (JSON objects)")
    return recs


def _plain_path(value: Any) -> str:
    text = str(value)
    return text[2:] if text.startswith("./") else text


def lookup_table(items: list[dict], field_name: str) -> dict[str, str | None]:
    """value of ``field_name`` (a leading ``./`` dropped) -> item id, over the benchmark's item records;
    a value two items share (``./a.wav`` and ``a.wav``) maps to None: it names no one item, and the
    outputs reached through it are left out, counted (:func:`normalise`)."""
    table: dict[str, str | None] = {}
    for rec in items:
        v = rec.get(field_name)
        if v is not None:
            key, item_id = _plain_path(v), str(rec["id"])
            table[key] = item_id if table.get(key, item_id) == item_id else None
    shared = sorted(k for k, v in table.items() if v is None)
    if shared:
        log.warning("item field %r: %d values name two items or more (e.g. %r): outputs reached through them are "
                    "left out", field_name, len(shared), shared[0])
    return table


def normalise(records: list[dict], read: Mapping[str, Any], *, joined: Mapping[str, dict] | None = None,
              lookup: Mapping[str, str] | None = None, name: str = "released file") -> tuple[list[dict], dict[str, int]]:
    """(one ``{id, raw_output, source_id, question?, choices?, answer?}`` per record, counts of
    records left out by reason). ``read``: ``id`` (the record's id field), ``output`` (a field path),
    ``join`` (another file's records by the same id, seen as ``join.<field>``; an id two of them
    share maps to None there and its records are left out as ``join_id_repeated``), ``item_id``
    (``template`` over the fields, then optionally a ``pattern`` whose named groups fill ``format``;
    with ``lookup`` the result is a value of that item field, e.g. the audio path, and ``lookup``
    maps it to the item's id) and ``carry`` (where the question, choices and answer sit)."""
    id_field = read.get("id", "id")
    out, seen = [], set()
    left: dict[str, int] = {}
    spec = read.get("item_id") or {}
    pattern = re.compile(spec["pattern"]) if spec.get("pattern") else None
    for n, rec in enumerate(records, 1):
        source_id = field(rec, id_field)
        if source_id is None:
            raise InputError(f"{name}: record {n}: no id field {id_field!r}")
        view = dict(rec)
        if joined is not None:
            other = joined.get(str(source_id))
            if other is None:
                reason = "join_id_repeated" if str(source_id) in joined else "not_in_join"
                left[reason] = left.get(reason, 0) + 1
                continue
            view["join"] = other
        item_id = fill(spec.get("template", "{" + id_field + "}"), view)
        if item_id is not None and pattern is not None:
            m = pattern.search(item_id)
            item_id = None if m is None else (spec["format"].format(**m.groupdict()) if spec.get("format")
                                              else (m.group(1) if m.groups() else m.group(0)))
        if item_id is not None and spec.get("lookup"):
            key = _plain_path(item_id)
            item_id = (lookup or {}).get(key)
            if item_id is None:
                reason = "item_field_shared" if key in (lookup or {}) else "not_in_items"
                left[reason] = left.get(reason, 0) + 1
                continue
        if item_id is None:
            left["no_item_id"] = left.get("no_item_id", 0) + 1
            continue
        if item_id in seen:
            raise InputError(f"{name}: record {n}: item id {item_id!r} appears twice")
        seen.add(item_id)
        raw = field(view, read["output"])
        row = {"id": item_id, "raw_output": None if raw is None else str(raw), "source_id": str(source_id)}
        for key in CARRIED:
            where = (read.get("carry") or {}).get(key)
            if where is not None:
                row[key] = field(view, where)
        out.append(row)
    return out, left


# --- fetching ---------------------------------------------------------------------------------------

def _git(source: Mapping[str, Any], git_dir_template: str, *args: str) -> bytes:
    """``git --git-dir <the repository's clone> args``: its stdout, or an error naming the file."""
    repo, commit, path = source["repo"], source["commit"], source["path"]
    owner, name = repo.split("/", 1)
    git_dir = git_dir_template.format(owner=owner, name=name)
    proc = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True)
    if proc.returncode != 0:
        raise InputError(f"{repo}@{commit[:10]}:{path}: not in {git_dir}: "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def _url(url: str, timeout: float) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (a pinned https URL)
            return resp.read()
    except (OSError, ValueError) as exc:  # URLError, HTTPError, timeouts are OSErrors
        raise InputError(f"{url}: cannot fetch: {exc}") from None


def fetch_bytes(source: Mapping[str, Any], *, git_dir_template: str | None = None, timeout: float = 60.0) -> bytes:
    """A released file's bytes, checked against its ``sha256``: from a local clone when
    ``git_dir_template`` (``{owner}``, ``{name}``) is given, else from GitHub at the pinned commit."""
    repo, commit, path = source["repo"], source["commit"], source["path"]
    if git_dir_template:
        data = _git(source, git_dir_template, "show", f"{commit}:{path}")
    else:
        data = _url(RAW_URL.format(repo=repo, commit=commit, path=path), timeout)
    digest = hashlib.sha256(data).hexdigest()
    if source.get("sha256") and digest != source["sha256"]:
        raise InputError(f"{repo}@{commit[:10]}:{path}: sha256 {digest} differs from the ledger's {source['sha256']}")
    return data


def released_records(entry: Mapping[str, Any], *, items: Mapping[str, Any] | None = None,
                     git_dir_template: str | None = None) -> tuple[list[dict], dict]:
    """The normalised records of one released entry (every ``outputs`` file, in order) and the
    counts of records left out; ``items`` (the ledger's item file) is read when ``item_id.lookup``
    maps the outputs to item ids through an item field."""
    read = entry["read"]
    lookup = None
    field_name = (read.get("item_id") or {}).get("lookup")
    if field_name:
        if items is None:
            raise InputError(f"released entry {entry['id']!r}: item_id.lookup needs the ledger's items file")
        lookup = lookup_table(load_records(fetch_bytes(items, git_dir_template=git_dir_template), items["path"]),
                              field_name)
    joined = None
    if read.get("join"):
        j = read["join"]
        keyed: dict[str, dict | None] = {}
        for src in j["sources"]:
            for rec in load_records(fetch_bytes(src, git_dir_template=git_dir_template), src["path"]):
                key = str(field(rec, j.get("on", "id")))
                keyed[key] = None if key in keyed else rec  # a repeated id joins no record
        repeated = sorted(k for k, v in keyed.items() if v is None)
        if repeated:
            log.warning("released entry %r: %d join ids appear twice or more in its join sources (e.g. %r): their "
                        "outputs are left out", entry["id"], len(repeated), repeated[0])
        joined = keyed
    rows, left = [], {}
    for src in entry["outputs"]:
        recs = load_records(fetch_bytes(src, git_dir_template=git_dir_template), src["path"])
        got, lost = normalise(recs, read, joined=joined, lookup=lookup, name=f"{src['repo']}:{src['path']}")
        rows += got
        for k, v in lost.items():
            left[k] = left.get(k, 0) + v
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise InputError(f"released entry {entry['id']!r}: its files give one item id twice")
    return rows, left


def released_path(out_dir: str | Path, benchmark: str, entry_id: str) -> Path:
    """Where :func:`fetch_released` writes a released entry's normalised outputs."""
    return Path(out_dir) / benchmark / f"{entry_id}.jsonl"


def source_record_path(path: str | Path) -> Path:
    """The record :func:`fetch_released` writes beside a normalised file: the entry it was made from,
    its pinned sources and the file's sha256."""
    path = Path(path)
    return path.with_name(path.name + ".source.json")


def release_problem(path: str | Path, entry_id: str) -> str | None:
    """Why the file at ``path`` is not released entry ``entry_id``'s outputs as fetched (no record
    beside it, another entry's, or bytes that differ from those fetched), or None when it is."""
    path, record = Path(path), source_record_path(path)
    if not record.is_file():
        return f"{path} was not written by `ledger fetch` (no {record.name} beside it)"
    try:
        rec = json.loads(record.read_text(encoding="utf-8"))
        entry, digest = rec["entry"], rec["sha256"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return f"{record}: unreadable ({type(exc).__name__})"
    if entry != entry_id:
        return f"{path} holds the outputs of {entry!r}, not {entry_id!r}"
    try:
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"{path}: cannot read ({exc.strerror or exc})"
    if actual != digest:
        return f"{path} changed since `ledger fetch` wrote it (sha256 {actual[:12]}, fetched {digest[:12]})"
    return None


def fetch_released(ledgers: Mapping[str, dict], out_dir: str | Path, *, only: Iterable[str] = (),
                   git_dir_template: str | None = None) -> list[dict]:
    """Normalise every released entry of ``ledgers`` (benchmark -> ledger; ``only`` limits the entry
    ids) into ``<out_dir>/<benchmark>/<id>.jsonl``; one summary per entry (records, left out)."""
    wanted = set(only)
    done = []
    for bench, ledger in ledgers.items():
        for entry in ledger.get("released") or []:
            if wanted and entry["id"] not in wanted:
                continue
            rows, left = released_records(entry, items=ledger["items"], git_dir_template=git_dir_template)
            path = released_path(out_dir, bench, entry["id"])
            io.write_jsonl(path, rows)
            io.write_json(source_record_path(path), {"entry": entry["id"], "outputs": entry["outputs"],
                                                     "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
            done.append({"benchmark": bench, "id": entry["id"], "path": str(path), "records": len(rows),
                         "left_out": left})
    return done


# --- item files -------------------------------------------------------------------------------------

def _glob_regex(pattern: str) -> re.Pattern:
    """A folder glob as :meth:`pathlib.Path.glob` reads it (``**/`` any folders or none, ``*`` and ``?``
    within one name), for the paths a repository listing gives."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:[^/]+/)*", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        else:
            out, i = out + {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i])), i + 1
    return re.compile(out + r"\Z")


def _tree(source: Mapping[str, Any], *, git_dir_template: str | None, timeout: float) -> list[str]:
    """The files of ``source``'s repository at its commit under its ``path`` (the path itself when it
    is a file)."""
    repo, commit, path = source["repo"], source["commit"], source["path"].strip("/")
    if git_dir_template:
        listing = _git(source, git_dir_template, "ls-tree", "-r", "--name-only", "-z", commit, "--", path)
        files = [f for f in listing.decode().split("\0") if f]
    else:
        tree = json.loads(_url(TREE_URL.format(repo=repo, commit=commit), timeout))
        if tree.get("truncated"):
            raise InputError(f"{repo}@{commit[:10]}: GitHub's listing of the repository is truncated; "
                             f"read it from a clone (--git-dir-template)")
        files = [e["path"] for e in tree.get("tree") or [] if e.get("type") == "blob"]
    return [f for f in files if f == path or f.startswith(path + "/")]


def items_path(out_dir: str | Path, benchmark: str, ledger: Mapping[str, Any]) -> Path:
    """Where :func:`fetch_items` writes a ledger's item file or folder (the config's ``params.items``);
    a path that would leave ``<out_dir>/items/<benchmark>`` is an error naming it."""
    base = Path(out_dir) / "items" / benchmark
    path = base / ledger["items"]["path"].strip("/")
    if not path.resolve().is_relative_to(base.resolve()) or ".." in Path(ledger["items"]["path"]).parts:
        raise InputError(f"ledger {benchmark!r}: items path {ledger['items']['path']!r} leaves {base}")
    return path


def fetch_items(ledgers: Mapping[str, dict], out_dir: str | Path, *, git_dir_template: str | None = None,
                timeout: float = 60.0) -> list[dict]:
    """Copy each ledger's pinned item file (sha256-checked) into ``<out_dir>/items/<benchmark>/<path>``;
    an item folder gives the files of it its preset's ``pattern`` names (SAKURA's ``*/metadata.csv``,
    not the audio beside them). One summary per ledger (path, files)."""
    from lalmbench.data.adapters.benchmarks import preset

    done = []
    for bench, ledger in ledgers.items():
        src, target = ledger["items"], items_path(out_dir, bench, ledger)
        root = src["path"].strip("/")
        files = [root] if src.get("sha256") else _tree(src, git_dir_template=git_dir_template, timeout=timeout)
        if files != [root]:
            globs = preset(ledger["preset"]).get("pattern")
            if not globs:
                raise InputError(f"ledger {bench!r}: items {src['repo']}:{root} is a folder and preset "
                                 f"{ledger['preset']!r} names no file pattern to find its item files")
            regexes = [_glob_regex(g) for g in ([globs] if isinstance(globs, str) else globs)]
            files = [f for f in files if any(r.match(f[len(root) + 1:]) for r in regexes)]
            if not files:
                raise InputError(f"ledger {bench!r}: no file matching {globs} under "
                                 f"{src['repo']}@{src['commit'][:10]}:{root}")
        for f in files:
            dest = target if f == root else target / f[len(root) + 1:]
            dest.parent.mkdir(parents=True, exist_ok=True)
            one = {**src, "path": f} if f == root else {"repo": src["repo"], "commit": src["commit"], "path": f}
            dest.write_bytes(fetch_bytes(one, git_dir_template=git_dir_template, timeout=timeout))
        done.append({"benchmark": bench, "path": str(target), "files": len(files)})
    return done


def main(argv: list[str] | None = None) -> None:
    """``check`` / ``fetch``; bad input (an invalid ledger, a digest mismatch, an unreachable source)
    exits with status 2 and one line naming the file, never a traceback."""
    try:
        _main(argv)
    except InputError as exc:
        print(f"ledger: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _main(argv: list[str] | None) -> None:
    import argparse

    p = argparse.ArgumentParser(prog="python -m lalmbench.data.ledger", description=__doc__.split("\n\n")[0])
    p.add_argument("--ledger-dir", default=str(LEDGER_DIR), help="the ledger folder (default: the package's)")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="validate every ledger file")
    f = sub.add_parser("fetch", help="download and normalise the released outputs; copy the item files")
    f.add_argument("--out", default="published", help="output folder (default: published)")
    f.add_argument("--benchmark", action="append", default=[], help="only these ledgers (file stems)")
    f.add_argument("--entry", action="append", default=[], help="only these released entry ids")
    f.add_argument("--git-dir-template", default=os.environ.get(GIT_DIR_ENV) or None,
                   help='read from local clones or bare mirrors, e.g. "/src/{owner}/{name}/.git" '
                        f'(default: ${GIT_DIR_ENV}; unset: GitHub)')
    f.add_argument("--no-items", action="store_true", help="only the released outputs, not the item files")
    a = p.parse_args(argv)
    ledgers = load_all(a.ledger_dir)
    if a.cmd == "check":
        for name, led in ledgers.items():
            print(f"{name}: {len(led.get('published') or [])} published, {len(led.get('released') or [])} released")
        return
    if a.benchmark:
        unknown = sorted(set(a.benchmark) - set(ledgers))
        if unknown:
            raise SystemExit(f"no ledger named {', '.join(unknown)}; have {', '.join(sorted(ledgers))}")
        ledgers = {k: v for k, v in ledgers.items() if k in a.benchmark}
    for row in fetch_released(ledgers, a.out, only=a.entry, git_dir_template=a.git_dir_template):
        print(f"{row['path']}: {row['records']} outputs" + (f"; left out {row['left_out']}" if row["left_out"] else ""))
    if not a.no_items:
        for row in fetch_items(ledgers, a.out, git_dir_template=a.git_dir_template):
            print(f"{row['path']}: {row['files']} item file{'s' * (row['files'] != 1)}")


if __name__ == "__main__":
    main()

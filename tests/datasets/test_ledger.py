"""The published-numbers ledgers: every shipped file validates and names its sources; bad entries are
errors naming the file and entry; released outputs are read into one (item id, output) per record,
from a pinned commit, checked by sha256; the item files are copied beside them, a folder's by its
preset's file pattern (no audio)."""
import copy
import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml

from lalmbench.core.io import InputError
from lalmbench.data import ledger as ledger_module
from lalmbench.data.ledger import (LEDGER_DIR, RAW_URL, TREE_URL, fetch_items, fetch_released, items_path, load_all,
                                   load_ledger, main, normalise, released_path, validate_ledger)

TOY = Path(__file__).parents[1] / "data" / "published" / "toy.yaml"


def toy() -> dict:
    return yaml.safe_load(TOY.read_text())


def test_every_shipped_ledger_validates_and_every_number_has_a_source():
    ledgers = load_all()
    assert {"mmau", "mmar", "sakura"} <= set(ledgers)
    released = 0
    for name, led in ledgers.items():
        assert led["preset"] and led["items"]["commit"]
        for e in led["published"]:
            src = e["source"]
            assert src.get("url") or src.get("arxiv") or (src.get("repo") and src.get("commit") and src.get("path")), \
                (name, e["id"])
        for r in led.get("released") or []:
            released += 1
            assert all(len(o["commit"]) == 40 and len(o.get("sha256", "")) == 64 for o in r["outputs"]), (name, r["id"])
    assert released >= 10
    assert (LEDGER_DIR / "mmau.yaml").is_file()


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["published"][0].pop("source"), "published/0: 'source' is a required property"),
    (lambda d: d["published"][1]["source"].pop("url"), "published/1/source"),
    (lambda d: d["published"][2]["source"].pop("commit"), "published/2/source: 'commit' is a required property"),
    (lambda d: d["published"][0].update(value=166.0), "published/0/value"),
    (lambda d: d["released"][0].update(compare_with="nobody@nowhere"),
     "released/0 (alpha@authors): compare_with 'nobody@nowhere' is no published entry"),
    (lambda d: d["released"][1].update(model_key="alpha-released"), "model_key 'alpha-released' also names"),
    (lambda d: d["released"][1].update(id="alpha@authors"), "id 'alpha@authors' also names"),
    (lambda d: d["released"][0]["outputs"][0].update(commit="main"), "released/0/outputs/0/commit"),
])
def test_a_bad_entry_is_an_error_naming_the_file_and_the_entry(edit, message):
    data = toy()
    edit(data)
    with pytest.raises(InputError) as exc:
        validate_ledger(data, "toy.yaml")
    assert str(exc.value).startswith("toy.yaml: ") and message in str(exc.value)


def test_outputs_are_read_by_join_pattern_and_lookup():
    manifest = {"m_0": {"id": "m_0", "audio_path": "{ROOT}/data/Animal/audio/cat0.wav", "question": "Which?"},
                "m_1": {"id": "m_1", "audio_path": "{ROOT}/data/Animal/audio/dog3.wav", "question": "Who?"}}
    records = [{"id": "m_0", "raw": ["B.", "A"]}, {"id": "m_1", "raw": []}, {"id": "m_9", "raw": ["C"]}]
    read = {"output": "raw[0]", "join": {"sources": []}, "carry": {"question": "join.question"},
            "item_id": {"template": "{join.audio_path}|{id}",
                        "pattern": r"/data/(?P<track>[^/]+)/audio/(?P<file>[^/|]+)\|m_(?P<n>\d+)$",
                        "format": "{track}-{file}-{n}"}}
    rows, left = normalise(records, read, joined=manifest)
    assert rows == [{"id": "Animal-cat0.wav-0", "raw_output": "B.", "source_id": "m_0", "question": "Which?"},
                    {"id": "Animal-dog3.wav-1", "raw_output": None, "source_id": "m_1", "question": "Who?"}]
    assert left == {"not_in_join": 1}
    # ids changed since the outputs were made: reach today's item through its audio file
    read = {"output": "raw[0]", "item_id": {"template": "{path}", "lookup": "audio_path"}}
    rows, left = normalise([{"id": "x", "path": "audio/a.wav", "raw": ["A"]},
                            {"id": "y", "path": "audio/gone.wav", "raw": ["B"]}], read,
                           lookup={"audio/a.wav": "clip-a-new-id"})
    assert [r["id"] for r in rows] == ["clip-a-new-id"] and left == {"not_in_items": 1}
    with pytest.raises(InputError, match="record 2: item id 'a' appears twice"):
        normalise([{"id": "a", "o": 1}, {"id": "a", "o": 2}], {"output": "o"})


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def test_fetch_reads_the_pinned_commit_and_checks_its_sha256(tmp_path):
    repo = tmp_path / "src" / "example" / "alpha"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    body = json.dumps([{"id": "q1", "prediction": "Man"}, {"id": "q2", "prediction": "Dog"}]).encode()
    (repo / "out.json").write_bytes(body)
    _git(repo, "add", "out.json")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "outputs")
    commit = _git(repo, "rev-parse", "HEAD")
    (repo / "out.json").write_text("[]")  # the working tree moved on; the ledger pins the commit
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-am", "later")
    ledger = toy()
    rel = ledger["released"][0]
    rel["outputs"] = [{"repo": "example/alpha", "commit": commit, "path": "out.json",
                       "sha256": hashlib.sha256(body).hexdigest()}]
    ledger["released"] = [rel]
    template = str(tmp_path / "src" / "{owner}" / "{name}" / ".git")
    done = fetch_released({"toy": ledger}, tmp_path / "out", git_dir_template=template)
    assert done[0]["records"] == 2
    rows = [json.loads(line) for line in released_path(tmp_path / "out", "toy", "alpha@authors").read_text().splitlines()]
    assert [(r["id"], r["raw_output"]) for r in rows] == [("q1", "Man"), ("q2", "Dog")]
    bad = copy.deepcopy(ledger)
    bad["released"][0]["outputs"][0]["sha256"] = "0" * 64
    with pytest.raises(InputError, match="out.json: sha256 .* differs from the ledger's 000"):
        fetch_released({"toy": bad}, tmp_path / "out2", git_dir_template=template)


def _commit_tree(repo: Path, files: dict[str, bytes]) -> str:
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    for rel, body in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(body)
    _git(repo, "add", ".")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "items")
    return _git(repo, "rev-parse", "HEAD")


#: a SAKURA-like repository: each track's metadata.csv with its audio beside it, a README
SAKURA_FILES = {"data/Animal/metadata.csv": b"file,attribute\ncat0.wav,cat\n", "data/Animal/audio/cat0.wav": b"RIFF",
                "data/Gender/metadata.csv": b"file,attribute\nm0.wav,male\n", "data/Gender/audio/m0.wav": b"RIFF",
                "data/README.md": b"tracks", "README.md": b"top"}


def test_fetch_copies_the_item_files_a_config_reads_never_the_audio(tmp_path, monkeypatch):
    """A folder of items gives the files its preset's pattern names (SAKURA's */metadata.csv), a file
    its pinned bytes (sha256 checked), each where config/examples/published.yaml looks; the CLI reads
    local mirrors named by $LALMBENCH_GIT_DIR_TEMPLATE."""
    sakura_commit = _commit_tree(tmp_path / "src" / "lab" / "sakura", SAKURA_FILES)
    body = json.dumps([{"id": "q1", "question": "?", "choices": ["a", "b"], "answer": "a"}]).encode()
    mmau_commit = _commit_tree(tmp_path / "src" / "lab" / "mmau", {"mmau-test-mini.json": body, "audio/q1.wav": b"RIFF"})
    sakura = {**toy(), "preset": "sakura", "items": {"repo": "lab/sakura", "commit": sakura_commit, "path": "data"},
              "released": []}
    mmau = {**toy(), "items": {"repo": "lab/mmau", "commit": mmau_commit, "path": "mmau-test-mini.json",
                               "sha256": hashlib.sha256(body).hexdigest()}, "released": []}
    template = str(tmp_path / "src" / "{owner}" / "{name}" / ".git")
    done = fetch_items({"sakura": sakura, "mmau": mmau}, tmp_path / "out", git_dir_template=template)
    assert [(d["benchmark"], d["files"]) for d in done] == [("sakura", 2), ("mmau", 1)]
    got = sorted(str(f.relative_to(tmp_path / "out")) for f in (tmp_path / "out").rglob("*") if f.is_file())
    assert got == ["items/mmau/mmau-test-mini.json", "items/sakura/data/Animal/metadata.csv",
                   "items/sakura/data/Gender/metadata.csv"]
    assert items_path(tmp_path / "out", "mmau", mmau).read_bytes() == body
    assert (items_path(tmp_path / "out", "sakura", sakura) / "Gender" / "metadata.csv").read_bytes() == \
        SAKURA_FILES["data/Gender/metadata.csv"]
    with pytest.raises(InputError, match="mmau-test-mini.json: sha256 .* differs"):
        fetch_items({"mmau": {**mmau, "items": {**mmau["items"], "sha256": "1" * 64}}}, tmp_path / "bad",
                    git_dir_template=template)
    with pytest.raises(InputError, match=r"ledger 'sakura': no file matching \*/metadata.csv under lab/sakura"):
        fetch_items({"sakura": {**sakura, "items": {**sakura["items"], "path": "data/Animal/audio"}}},
                    tmp_path / "bad", git_dir_template=template)

    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    (ledgers / "sakura.yaml").write_text(yaml.safe_dump(sakura))
    monkeypatch.setenv("LALMBENCH_GIT_DIR_TEMPLATE", template)
    main(["--ledger-dir", str(ledgers), "fetch", "--out", str(tmp_path / "cli")])
    assert (tmp_path / "cli" / "items" / "sakura" / "data" / "Animal" / "metadata.csv").is_file()
    assert not list((tmp_path / "cli").rglob("*.wav"))


def test_without_a_clone_a_folder_is_listed_by_githubs_tree_api(tmp_path, monkeypatch):
    commit = "a" * 40
    tree = {"truncated": False, "tree": [{"path": p, "type": "blob"} for p in SAKURA_FILES] +
            [{"path": "data/Animal", "type": "tree"}]}
    asked = []

    def url(address: str, timeout: float) -> bytes:
        asked.append(address)
        if address == TREE_URL.format(repo="lab/sakura", commit=commit):
            return json.dumps(tree).encode()
        return SAKURA_FILES[address.split(f"/{commit}/", 1)[1]]

    monkeypatch.setattr(ledger_module, "_url", url)
    sakura = {**toy(), "preset": "sakura", "items": {"repo": "lab/sakura", "commit": commit, "path": "data"}}
    assert fetch_items({"sakura": sakura}, tmp_path)[0]["files"] == 2
    assert asked == [TREE_URL.format(repo="lab/sakura", commit=commit)] + [
        RAW_URL.format(repo="lab/sakura", commit=commit, path=f"data/{t}/metadata.csv") for t in ("Animal", "Gender")]
    assert (tmp_path / "items" / "sakura" / "data" / "Animal" / "metadata.csv").read_bytes() == \
        SAKURA_FILES["data/Animal/metadata.csv"]
    tree["truncated"] = True
    with pytest.raises(InputError, match="listing of the repository is truncated; read it from a clone"):
        fetch_items({"sakura": sakura}, tmp_path / "t")


def test_a_source_path_that_leaves_its_repository_is_refused_before_any_fetch(tmp_path, monkeypatch, capsys):
    """items.path with '..' over https would be written outside --out (the git-mirror route refuses it
    too): the ledger is invalid, named, and nothing is fetched or written."""
    monkeypatch.setattr(ledger_module, "_url", lambda *a: pytest.fail("fetched"))
    data = toy()
    data["items"] = {"repo": "lab/mmau", "commit": "a" * 40, "path": "../../escaped.json"}
    with pytest.raises(InputError, match=r"toy.yaml: items: path '../../escaped.json' leaves its repository"):
        validate_ledger(data, "toy.yaml")
    data = toy()
    data["released"][0]["outputs"][0]["path"] = "outs/../../x.json"
    with pytest.raises(InputError, match=r"released/0/outputs/0: path 'outs/../../x.json' leaves its repository"):
        validate_ledger(data, "toy.yaml")
    raw = {**toy(), "items": {"repo": "lab/mmau", "commit": "a" * 40, "path": "../../escaped.json"}}
    out = tmp_path / "deep" / "out"
    with pytest.raises(InputError, match="items path '../../escaped.json' leaves"):
        fetch_items({"toy": raw}, out)
    assert not list(tmp_path.rglob("escaped.json"))
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    (ledgers / "toy.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(SystemExit) as exc:
        main(["--ledger-dir", str(ledgers), "fetch", "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"{ledgers / 'toy.yaml'}: items: path '../../escaped.json' leaves its repository" in err
    assert "Traceback" not in err


def test_check_and_fetch_errors_name_the_file_without_a_traceback(tmp_path, monkeypatch, capsys):
    ledgers = tmp_path / "ledgers"
    ledgers.mkdir()
    (ledgers / "toy.yaml").write_bytes(TOY.read_bytes().replace(b"benchmark:", b"# caf\xe9\nbenchmark:", 1))
    with pytest.raises(SystemExit) as exc:
        main(["--ledger-dir", str(ledgers), "check"])
    assert exc.value.code == 2
    assert f"ledger: {ledgers / 'toy.yaml'}: not UTF-8 text" in capsys.readouterr().err
    bad = toy()
    bad["published"][0]["value"] = 166.0
    (ledgers / "toy.yaml").write_text(yaml.safe_dump(bad))
    with pytest.raises(SystemExit) as exc:
        main(["--ledger-dir", str(ledgers), "check"])
    assert exc.value.code == 2 and f"ledger: {ledgers / 'toy.yaml'}: published/0/value" in capsys.readouterr().err
    # a digest mismatch at fetch time
    body = b'[{"id": "q1", "prediction": "Man"}]'
    good = toy()
    good["released"] = [{**good["released"][0], "outputs": [{"repo": "example/alpha", "commit": "b" * 40,
                                                              "path": "out.json", "sha256": "0" * 64}]}]
    (ledgers / "toy.yaml").write_text(yaml.safe_dump(good))
    monkeypatch.setattr(ledger_module, "_url", lambda *a: body)
    with pytest.raises(SystemExit) as exc:
        main(["--ledger-dir", str(ledgers), "fetch", "--out", str(tmp_path / "out"), "--no-items"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "Traceback" not in err
    assert "ledger: example/alpha@bbbbbbbbbb:out.json: sha256 " in err and "differs from the ledger's 000" in err


def test_a_repeated_join_id_and_an_item_path_two_items_share_are_left_out_and_counted():
    """Two manifest records with one id, or two items on one audio path (./a.wav, a.wav): no output is
    assigned to either silently; each is left out under its reason."""
    from lalmbench.data.ledger import lookup_table

    manifest = {"m_0": None, "m_1": {"id": "m_1", "audio_path": "b.wav"}}  # m_0 appeared twice
    read = {"output": "o", "join": {"sources": []}, "item_id": {"template": "{join.audio_path}"}}
    rows, left = normalise([{"id": "m_0", "o": "A"}, {"id": "m_1", "o": "B"}], read, joined=manifest)
    assert [r["id"] for r in rows] == ["b.wav"] and left == {"join_id_repeated": 1}
    table = lookup_table([{"id": "one", "audio": "./a.wav"}, {"id": "two", "audio": "a.wav"},
                          {"id": "three", "audio": "c.wav"}, {"id": "three", "audio": "./c.wav"}], "audio")
    assert table == {"a.wav": None, "c.wav": "three"}
    read = {"output": "o", "item_id": {"template": "{path}", "lookup": "audio"}}
    rows, left = normalise([{"id": "x", "path": "a.wav", "o": "A"}, {"id": "y", "path": "./c.wav", "o": "C"}],
                           read, lookup=table)
    assert [r["id"] for r in rows] == ["three"] and left == {"item_field_shared": 1}


def test_released_records_leave_out_outputs_whose_join_id_repeats(tmp_path, monkeypatch):
    from lalmbench.data.ledger import released_records

    files = {"manifest.jsonl": b'{"id": "m_0", "p": "a"}\n{"id": "m_0", "p": "b"}\n{"id": "m_1", "p": "c"}\n',
             "out.jsonl": b'{"id": "m_0", "o": "A"}\n{"id": "m_1", "o": "B"}\n'}
    monkeypatch.setattr(ledger_module, "_url", lambda url, timeout: files[url.rsplit("/", 1)[1]])
    src = {"repo": "lab/x", "commit": "c" * 40}
    entry = {"id": "e", "outputs": [{**src, "path": "out.jsonl"}],
             "read": {"output": "o", "join": {"sources": [{**src, "path": "manifest.jsonl"}]},
                      "item_id": {"template": "{join.p}"}}}
    rows, left = released_records(entry)
    assert [(r["id"], r["raw_output"]) for r in rows] == [("c", "B")] and left == {"join_id_repeated": 1}

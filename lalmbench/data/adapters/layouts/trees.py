"""Tree layouts of releases: records built from an audio folder tree (the class is a folder name, as
in GTZAN and CochlScene), a tree of small label files (GiantSteps), or the matching lines of text
files (IEMOCAP's EmoEvaluation); see :mod:`lalmbench.data.adapters.layouts`."""
from __future__ import annotations

import re
from pathlib import Path

from lalmbench.core.io import InputError
from lalmbench.data.adapters.layouts.records import layout_name, path_match


def _globs(spec: dict, key: str) -> list[str]:
    v = spec.get(key)
    return [str(g) for g in (v if isinstance(v, list) else [v])] if v else []


def folder_records(path: Path, spec: dict) -> list[dict]:
    """One record per audio file under the folder ``path`` (sorted by relative path), its fields read
    from the path by ``path_fields``. A file whose path does not match is an error naming it and the
    pattern: a wrong folder given as ``items`` must not pass as an empty benchmark."""
    if not path.is_dir():
        raise InputError(f"{path}: this preset reads a folder tree ({layout_name(spec, 'class folders')}); "
                         f"params.items is a file. Set it to the folder that holds the class folders")
    hint = layout_name(spec, "one folder per class holding its audio files")
    globs = _globs(spec, "audio_glob") or ["**/*.wav"]
    files = sorted({f for g in globs for f in path.glob(g) if f.is_file()})
    if not files:
        raise InputError(f"{path}: no files matching {globs}; expected {hint}")
    pattern = str(spec.get("path_fields") or r"^(?P<label>[^/]+)/")
    out = []
    for f in files:
        rel = f.relative_to(path).as_posix()
        rec = {"path": rel, **path_match(pattern, rel, f, hint)}
        if spec.get("content_field"):        # a label file (GiantSteps' <track>.key): its text is the field
            rec[str(spec["content_field"])] = _small_text(f)
        out.append(rec)
    return out


#: a label file read as a field is a few words; anything longer is not one (a wrong glob)
MAX_LABEL_FILE = 4096


def _small_text(path: Path) -> str:
    if path.stat().st_size > MAX_LABEL_FILE:
        raise InputError(f"{path}: {path.stat().st_size} bytes, too long for a label file (at most "
                         f"{MAX_LABEL_FILE}); audio_glob should name the label files")
    try:
        return path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text; audio_glob should name the label files") from None


def line_records(path: Path, spec: dict) -> list[dict]:
    """One record per line matching ``line_pattern`` in the text files ``pattern`` names under the
    folder ``path`` (or in the file ``path``), with the named groups of ``path_fields`` over the
    file's relative path beside the line's (IEMOCAP's Session1/dialog/EmoEvaluation/<dialog>.txt:
    the session and dialog from the path, utterance and emotion from its lines). Other lines
    (headers, per-annotator detail) are not records; files where no line matches are an error."""
    files = sorted(f for g in _globs(spec, "pattern") for f in path.glob(g) if f.is_file()) if path.is_dir() else [path]
    hint = layout_name(spec, "lines matching line_pattern")
    if not files:
        raise InputError(f"{path}: no file matching {_globs(spec, 'pattern')}; expected {hint}")
    line_rx = re.compile(str(spec.get("line_pattern") or r"^(?P<line>.+)$"))
    out = []
    for f in files:
        rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
        fields = path_match(str(spec["path_fields"]), rel, f, hint) if spec.get("path_fields") else {}
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            lm = line_rx.search(line)
            if lm:
                out.append({**fields, **{k: v for k, v in lm.groupdict().items() if v is not None}})
    if not out:
        raise InputError(f"{path}: no line matching {line_rx.pattern!r} in {len(files)} file(s) "
                         f"({files[0].name}, ...); expected {hint}")
    return out

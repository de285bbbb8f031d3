"""Audio paths resolve inside the dataset's audio root: symlinks out of it are refused unless allowed;
the root itself and folders are never audio files."""
import os

import numpy as np
import pytest
import soundfile as sf

from lalmbench.data.adapters import adapt
from lalmbench.data.adapters.common import resolve_audio
from lalmbench.core.io import InputError


@pytest.fixture()
def tree(tmp_path):
    """root/{in.wav, sub/}, outside/{x.wav, dir/y.wav}; root/link.wav -> outside/x.wav; root/linkdir -> outside/dir;
    root/alias.wav -> root/in.wav."""
    root, out = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    (out / "dir").mkdir(parents=True)
    for p in (root / "in.wav", out / "x.wav", out / "dir" / "y.wav"):
        sf.write(p, np.zeros(1600, np.float32), 16000)
    os.symlink(out / "x.wav", root / "link.wav")
    os.symlink(out / "dir", root / "linkdir")
    os.symlink(root / "in.wav", root / "alias.wav")
    return root, out


@pytest.mark.parametrize("rel, target", [("link.wav", "x.wav"), ("linkdir/y.wav", "dir/y.wav")])
def test_symlink_out_of_the_root_is_refused(tree, rel, target):
    root, out = tree
    with pytest.raises(InputError) as exc:
        resolve_audio(root, ["in.wav", rel], source="ann.csv")
    assert str(exc.value) == (
        f"ann.csv: row 2: audio path {rel!r} resolves through a symlink to {os.path.realpath(out / target)}, outside "
        f"the dataset's audio root {os.path.realpath(root)}; set datasets.<name>.params.symlinks_outside_root: allow "
        "if the dataset's files are links into a store elsewhere (git-annex, DVC, a Hugging Face cache)")


def test_symlinks_out_of_the_root_are_accepted_when_allowed(tree):
    root, _ = tree
    paths, exists = resolve_audio(root, ["link.wav", "linkdir/y.wav"], source="ann.csv", symlinks="allow")
    assert paths == [str(root / "link.wav"), str(root / "linkdir" / "y.wav")] and exists.all()


def test_symlinks_inside_the_root_and_a_symlinked_root_are_fine(tree, tmp_path):
    root, _ = tree
    os.symlink(root, tmp_path / "rootlink")
    paths, _ = resolve_audio(tmp_path / "rootlink", ["alias.wav", "in.wav"], source="ann.csv")
    assert paths == [str(tmp_path / "rootlink" / "alias.wav"), str(tmp_path / "rootlink" / "in.wav")]


@pytest.mark.parametrize("rel, problem", [
    (".", "audio path '.' is the audio root {root} itself, not an audio file"),
    ("sub/..", "audio path 'sub/..' is the audio root {root} itself, not an audio file"),
    ("sub", "audio path {root}/sub is a directory, not an audio file"),
])
def test_the_root_or_a_folder_is_not_an_audio_file(tree, rel, problem):
    root, _ = tree
    with pytest.raises(InputError) as exc:
        resolve_audio(root, ["in.wav", rel], source="ann.csv")
    assert str(exc.value) == f"ann.csv: row 2: " + problem.format(root=root)


def test_generic_adapter_honours_symlinks_outside_root(tree, tmp_path):
    root, out = tree
    ev = tmp_path / "ev.csv"
    ev.write_text("clip_id,onset_s,offset_s,label\nin.wav,0,0.05,dog\nlink.wav,0,0.05,cat\n")
    params = {"events": str(ev), "audio_root": str(root)}
    with pytest.raises(InputError, match=rf"^{ev}: row 2: audio path 'link.wav' resolves through a symlink"):
        adapt("generic", params, dataset="g")
    res = adapt("generic", dict(params, symlinks_outside_root="allow"), dataset="g")
    assert res.clips["audio_path"].tolist() == [str(root / "in.wav"), str(root / "link.wav")]


def test_paths_that_need_normalising_give_the_same_file_as_the_plain_one(tree):
    """' in.wav', './in.wav' and 'sub/../in.wav' take the full checks, 'in.wav' the fast path: one answer."""
    root, _ = tree
    paths, exists = resolve_audio(root, ["in.wav", " in.wav", "./in.wav", "sub/../in.wav", "sub//../in.wav"],
                                  source="ann.csv")
    assert paths == [str(root / "in.wav")] * 5 and exists.all()


@pytest.mark.parametrize("paths", [["a.wav", "sub/b.wav", "x/y/z.flac"],
                                   ["a.wav", " a.wav", "a.wav\t", "./a", "a/./b", "a/../b", "../a", "/abs", "a//b", "a/",
                                    "", ".", "..", "...", ".a/b", "a/..b", "a/b..", "a\x1cb", "\x1ca", "a\x0b", "é.wav",
                                    "\u00a0a", "a\u2003", "sub/é/../x", "a\nb", "a\n"]])
def test_plain_paths_are_the_plain_pattern(paths):
    from lalmbench.data.adapters.common import _PLAIN, plain_paths

    assert plain_paths(paths).tolist() == [bool(_PLAIN(p)) for p in paths]
    assert plain_paths(paths + [None, 3.0]).tolist() == [bool(_PLAIN(p)) for p in paths] + [False, False]


def test_unchecked_paths_resolve_as_the_checked_ones(tree):
    """Without check_exists the paths come from the column-wise route: same paths, same errors."""
    root, out = tree
    rel = ["in.wav", " in.wav", "./in.wav", "sub/../in.wav", "sub/x.wav", "nowhere.wav"]
    paths, exists = resolve_audio(root, rel, source="ann.csv", check_exists=False)
    assert paths == [str(root / "in.wav")] * 4 + [str(root / "sub" / "x.wav"), str(root / "nowhere.wav")]
    assert exists.all()
    with pytest.raises(InputError, match=r"^ann.csv: row 3: audio path 'linkdir/y.wav' resolves through a symlink"):
        resolve_audio(root, ["in.wav", "sub/x.wav", "linkdir/y.wav"], source="ann.csv", check_exists=False)
    with pytest.raises(InputError, match=r"^ann.csv: row 2: audio path '../x.wav' escapes"):
        resolve_audio(root, ["in.wav", "../x.wav"], source="ann.csv", check_exists=False)

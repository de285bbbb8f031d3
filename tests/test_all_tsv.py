"""results/all.tsv is one line per row, whatever text a model id, revision or flag holds."""
import pandas as pd

from lalmbench.core.io import write_json
from lalmbench.report.aggregate import write_all_tsv


def test_a_line_break_or_tab_in_a_text_cell_never_splits_a_row(tmp_path):
    paths = []
    for model, model_id in (("a", "org/model\nrow two\tcol"), ("b", "org/b\r")):
        path = tmp_path / f"{model}.json"
        write_json(path, {"model": model, "dataset": "d", "task": "t", "condition": "audio", "prompt": "p",
                          "metric": "accuracy", "value": 0.5, "n": 4, "model_id": model_id, "flags": ["x\ny"]})
        paths.append(str(path))
    write_all_tsv(paths, str(tmp_path / "all.tsv"))
    lines = (tmp_path / "all.tsv").read_text().splitlines()
    assert len(lines) == 3 and all(line.count("\t") == lines[0].count("\t") for line in lines)
    back = pd.read_csv(tmp_path / "all.tsv", sep="\t")
    assert list(back["model_id"]) == ["org/model\\nrow two\\tcol", "org/b\\r"]
    assert list(back["flags"]) == ["x\\ny"] * 2

"""Report: all.tsv from every run, figures, the static results browser."""

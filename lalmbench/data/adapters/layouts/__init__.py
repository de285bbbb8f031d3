"""Release layouts: benchmarks read as their authors packed them, not as one question table, through
spec keys (set by a preset, or in a dataset's params) instead of a code path per benchmark.

``format:`` picks a layout from :data:`LAYOUTS`, the one registry of them. A *per-file* layout reads one
file as a table; the reader globs a folder's files by ``pattern`` as for any table format, so each
file's records get ``_dir``, ``_file`` and ``path_fields``. A *tree* layout reads the whole folder
given as ``items`` itself (its audio paths are then relative to it):

  format: transcripts   per file: ``<id><blank><text>`` lines (Kaldi ``text``, LibriSpeech
                        ``*.trans.txt``, AISHELL transcripts) -> records ``{id, text}``
  format: headerless    per file: a tab- or space-separated table without a header, its columns
                        ``names``; ``optional_names``: trailing ones a row may lack (TUT2017's
                        development meta.txt adds a recording id that its evaluation meta.txt has not)
  format: folders       tree: one record per file under ``items`` matching ``audio_glob`` (the class
                        is a folder name, GTZAN, CochlScene); the file's path is the field ``path``;
                        ``content_field``: the globbed files are label files instead (GiantSteps'
                        annotations/key/<track>.key), their text this field
  format: lines         tree: ``line_pattern``, a regex whose named groups make one record of each
                        matching line of the files ``pattern`` names (IEMOCAP's EmoEvaluation)

Keys that apply to every layout and table format (:mod:`.records`):

  quoting: none         a CSV/TSV whose quote characters are text (Common Voice, CoVoST 2, FLEURS)
  names: [..]           the column names of a CSV/TSV without a header line (FLEURS)
  path_fields: regex    named groups matched in each file's path (relative to ``items``) become
                        fields of its records (FLEURS' language folder, CoVoST 2's language pair,
                        GTZAN's genre folder, IEMOCAP's session)
  expect_columns: [..]  columns every table of the layout has; a file without them fails, naming it
                        (the answer and audio columns are always checked)
  derive: {col: regex}  named groups matched in a column's value become fields (LibriSpeech's
                        speaker and chapter from the utterance id)
  rows_where: {col: v}  only rows whose column has one of these values (CoVoST 2's ``split``)
  audio_join: {glob, key}  the split is the audio folder: records are joined to the audio files under
                        ``audio_root`` matching ``glob`` by file stem == ``key`` (AISHELL's one
                        transcript file for all splits)
  value_maps:           {column: {value: text}} -- a value missing from its map leaves the record out,
                        counted as ``item:label_not_in_map`` (VocalSound's AudioSet ids -> "Laughter")
  layout: "..."         the release layout in words, named by every error that finds another one

Every record of a per-file layout's folder also gets ``_dir``, its file's folder relative to ``items``
(LibriSpeech's flac files lie beside their transcript: ``audio_template: "{_dir}/{path}.flac"``).
A new release layout is one reader function and one entry of :data:`LAYOUTS` (:mod:`.registry`).
"""
from lalmbench.data.adapters.layouts.load import load
from lalmbench.data.adapters.layouts.records import arrange, check_columns, map_values, on_file
from lalmbench.data.adapters.layouts.registry import LAYOUTS, Layout
from lalmbench.data.adapters.layouts.text import headerless_records, read_delimited, read_transcripts
from lalmbench.data.adapters.layouts.trees import folder_records, line_records

__all__ = ["LAYOUTS", "Layout", "arrange", "check_columns", "folder_records", "headerless_records",
           "line_records", "load", "map_values", "on_file", "read_delimited", "read_transcripts"]

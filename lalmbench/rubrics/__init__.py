"""Rubric evaluation of open-ended answers (captioning): an LLM proposes weighted criteria from
reference captions and a model's answers (:mod:`.propose`), near-duplicate criteria are merged
(:mod:`.merge`: sentence-embedding similarity, then the LLM confirms and names each merge), and the
LLM checks every answer against the rubric (:mod:`.score`). :mod:`.llm` runs the LLM (any
``models:`` entry, text-only, every call cached); :mod:`.run` ties one run together and
:mod:`.files` writes its JSON and the table. docs/rubrics.md has the user's view.
"""

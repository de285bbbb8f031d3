"""Attention capture for ``hf`` models and the share of attention answers put on audio.

``plan`` reads a model entry's ``attention:`` block and says which runs get captured (pure, no
torch); ``spans`` marks audio / prompt / options / answer spans in a token sequence; ``capture``
runs the model (eager attention, hooks on the chosen decoder layers) one item at a time and
writes ``attn.npy`` + ``tokens.json`` + ``meta.json`` per item; ``share`` computes the audio
share from those files. Figures live in :mod:`lalmbench.report.plots.attention`.
"""

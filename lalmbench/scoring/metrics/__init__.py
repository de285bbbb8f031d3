"""Open-ended metrics: ASR (asr), translation (translation), grounding (grounding), captioning
(captioning; computed in the separate captioning env via aac_worker). Import the submodule you
need: none of them is imported here, so no metric's dependencies load for another."""

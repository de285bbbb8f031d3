"""Scoring: MCQ answers (parser, answer texts, judge fallback), open-ended metrics, the LLM judge, one run's entry."""

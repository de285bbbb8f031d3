"""Shared hypothesis settings for the property-based tests (``test_*_properties.py``).

Bounded (100 examples, no per-example deadline on a shared CPU) so the whole set takes seconds.
``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) derandomizes the search, so CI runs the same examples
every time; locally the default ``dev`` profile explores new ones and replays past failures from
``.hypothesis/``. Imported only by the property tests: the hf env runs pytest without hypothesis.
"""
import os

from hypothesis import settings

settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

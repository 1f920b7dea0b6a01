"""Shared test configuration."""

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Property tests: a fixed, reproducible profile (derandomised, so CI is deterministic).
settings.register_profile(
    "book",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "150")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("book")

"""Shared test setup: hypothesis profiles and seeded NumPy randomness.

Profiles: "ci" (few examples, derandomized, so CI runs are fast and reproducible) and
"dev" (200 examples, random). "ci" is used when the CI variable is set, and by default;
choose "dev" locally with HYPOTHESIS_PROFILE=dev.
"""

import atexit
import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True,
                          database=None, print_blob=True, suppress_health_check=_SLOW_IS_FINE)
settings.register_profile("dev", max_examples=200, deadline=None, print_blob=True,
                          suppress_health_check=_SLOW_IS_FINE)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# jit=True's disk cache (transforms/jit/disk_cache.py): a folder of this run's, not the user's,
# removed when the process that made it exits (xdist's workers inherit it)
if "DUALTAPE_JIT_CACHE" not in os.environ:
    os.environ["DUALTAPE_JIT_CACHE"] = _JIT_CACHE = tempfile.mkdtemp(prefix="dualtape-test-jit-")
    atexit.register(shutil.rmtree, _JIT_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _seed_numpy():
    """Legacy np.random calls in tests draw the same numbers on every run."""
    np.random.seed(0)

"""Shared test configuration: a bounded, deterministic hypothesis profile for CI, and a cache folder of its own."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Compiled kernels are cached on disk (dsasim.cache): the tests keep theirs in a folder of their own, removed at the
# end, so that a run neither reads a user's cache nor leaves one behind.
if "DSASIM_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _cache = tempfile.mkdtemp(prefix="dsasim-test-cache-")
    os.environ["DSASIM_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

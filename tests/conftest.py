"""Shared test configuration: a bounded, deterministic hypothesis profile for CI, and a cache folder of its own."""

from __future__ import annotations

import gc
import os

import pytest
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, tests marked ``slow`` go first (each worker collects and reorders alike, so their collections
    still match): the workers start the longest tests while the short ones are left to even out the end, rather
    than one worker finishing a minute-long test alone. A run without xdist keeps the files' order (a module's
    tests together: its module fixtures are set up once)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow first, order kept


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under xdist (``make test``: ``-n 2``), a test class is one unit of work, sent whole to one worker; every other
    test is shared out on its own, as with ``--dist load``. A class gathers the tests that read one expensive module
    fixture (a graded class of notebooks, 60-120 s): its worker builds it once, where tests shared out one by one
    had both workers build it. (xdist's ``--dist loadgroup`` does this by renaming node ids, which pytest 9 ignores.)
    """
    if config.getvalue("dist") != "load":
        return None  # a --dist the user asked for
    from xdist.scheduler import LoadScopeScheduling

    class ClassScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path, _, rest = nodeid.partition("::")
            name, _, inner = rest.partition("::")
            return f"{path}::{name}" if inner and name[:1].isupper() else nodeid

    return ClassScheduling(config, log)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session is over and its process ends (each xdist worker's too): what the tests left is frozen out of the
    cyclic collector, whose last collection at the interpreter's exit would walk it all — 4.4 s after a one-process
    run of tests/attention and tests/tune (1.6 million objects tracked), 0.8 s frozen."""
    gc.freeze()

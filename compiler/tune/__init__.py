"""Autotuning, the compiler's half: search spaces, the analytical model and the search strategies.

The compiler never runs the simulator (docs/architecture.md: layering): :func:`search` takes the *measuring function* as
an argument. ``dsasim.tune`` supplies one (compile + timing-only simulation, over processes or a dask
cluster) and the performance database.

    from compiler.tune import build_space, make_strategy, search

    space = build_space(op, chip)                  # the distinct valid schedules, each with a model estimate
    result = search(space, make_strategy("model"), measure, trials=20)
"""

from compiler.tune.errors import TuneError
from compiler.tune.model import Prediction, predict, price
from compiler.tune.search import Measurement, SearchResult, Trial, default_trials, search
from compiler.tune.space import MAX_INSTRUCTIONS, Space, build_space, schedule_from_json
from compiler.tune.strategies import STRATEGIES, Strategy, make_strategy
from compiler.tune.types import Candidate, Knob, schedule_key

__all__ = [
    "MAX_INSTRUCTIONS",
    "STRATEGIES",
    "Candidate",
    "Knob",
    "Measurement",
    "Prediction",
    "SearchResult",
    "Space",
    "Strategy",
    "Trial",
    "TuneError",
    "build_space",
    "default_trials",
    "make_strategy",
    "predict",
    "price",
    "schedule_from_json",
    "schedule_key",
    "search",
]

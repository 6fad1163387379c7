"""Autotuning, the compiler's half: search spaces, the analytical model and the search strategies.

The compiler never runs the simulator (docs/architecture.md: layering): :func:`search` takes the *measuring function* as
an argument. ``dsasim.tune`` supplies one (compile + timing-only simulation, over processes or a dask
cluster) and the performance database.

    from compiler.tune import build_space, make_strategy, search

    space = build_space(op, chip)                  # the distinct valid schedules, each with a model estimate
    result = search(space, make_strategy("model"), measure, trials=20)
"""

from compiler.lazy import exports

#: Each public name → the module it lives in, imported on first use (compiler.lazy).
__all__ = exports(
    __name__,
    {
        "MAX_INSTRUCTIONS": "compiler.tune.space",
        "STRATEGIES": "compiler.tune.strategies",
        "Candidate": "compiler.tune.types",
        "Knob": "compiler.tune.types",
        "Measurement": "compiler.tune.search",
        "Prediction": "compiler.tune.model",
        "SearchResult": "compiler.tune.search",
        "Space": "compiler.tune.space",
        "Strategy": "compiler.tune.strategies",
        "Trial": "compiler.tune.search",
        "TuneError": "compiler.tune.errors",
        "build_space": "compiler.tune.space",
        "default_trials": "compiler.tune.search",
        "make_strategy": "compiler.tune.strategies",
        "predict": "compiler.tune.model",
        "price": "compiler.tune.model",
        "schedule_from_json": "compiler.tune.space",
        "schedule_key": "compiler.tune.types",
        "search": "compiler.tune.search",
    },
)

"""Pictures that need the compiler: the tiles a loop step or core touches (``tiles``), GM memory plans
(``memory``), sweeps (``sweep``) and tuning histories (``tune``). Pictures of a run alone (roofline,
timeline) live in ``simulator.plots``.
"""

from dsasim.plots.tiles import TilesData, tiles_data
from dsasim.plots.tiles_draw import tiles, tiles_widget

__all__ = ["TilesData", "tiles", "tiles_data", "tiles_widget"]

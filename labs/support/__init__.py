"""What a lab runs but does not teach: its plots, its tables and the data builders behind them.

``labs/support/labNN.py`` holds lab NN's helpers, so the notebook shows what the student reads and writes
— the exercises, the measurements and the questions — and each picture is one call. In a notebook,
``name??`` shows a helper's source. A helper takes what the student computed as arguments (their
lifetimes, their formula, their curves) and never grades anything: ``labs/checks/labNN.py`` does that.
"""

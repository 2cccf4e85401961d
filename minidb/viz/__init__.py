"""Pictures and widgets for the notebooks, the tour and ``figures/``.

Drawing functions are pure: they take plain data (read from minidb through its
public API) and return a :class:`matplotlib.figure.Figure`. Widgets wrap pure
callbacks, so tests can drive them from code and assert on the results.
"""
